//! The page's requests to docshelf, built and read one way: server
//! functions go through [`BearerClient`], the REST calls (the upload, sources,
//! Ask's stream, a job's events) through [`get`], [`post`] and [`send`]. Every one carries the token the user entered as
//! the same bearer header, a failed one is read into the same [`AppError`]
//! (the engine's error body), and a streamed body is read into events by
//! [`read_events`].
//!
//! The header is what the server decides access by: it registers each server
//! function's route behind its read or its write guard (the server's
//! `http::dashboard`), as it does the REST routes, so no server function
//! checks the token for itself.

use std::future::Future;

use futures::{Sink, Stream};
use leptos::server_fn::client::browser::BrowserClient;
use leptos::server_fn::client::Client;
use leptos::server_fn::error::FromServerFnError;
use leptos::server_fn::request::browser::BrowserRequest;
use leptos::server_fn::response::browser::BrowserResponse;
use leptos::server_fn::Bytes;

#[cfg(feature = "hydrate")]
use super::sse::{Decoder, Frame};
#[cfg(feature = "hydrate")]
use crate::error::AppError;
#[cfg(feature = "hydrate")]
use index_core::{ErrorBody, ErrorCode};

/// The header the token travels in.
const AUTHORIZATION: &str = "Authorization";

/// The `Authorization` value for the token the user entered, if any.
fn bearer() -> Option<String> {
    super::token().map(|token| format!("Bearer {token}"))
}

/// The client of the dashboard's server functions: the browser's `fetch`,
/// as Leptos sends it, with the bearer header added. `#[server]` functions
/// name it with `client = …`; the server never sends through it.
pub struct BearerClient;

impl<E, IS, OS> Client<E, IS, OS> for BearerClient
where
    E: FromServerFnError,
    IS: FromServerFnError,
    OS: FromServerFnError,
{
    type Request = BrowserRequest;
    type Response = BrowserResponse;

    fn send(request: Self::Request) -> impl Future<Output = Result<Self::Response, E>> + Send {
        // The request is already built: its headers are still the
        // browser's `Headers`, which take one more.
        if let Some(value) = bearer() {
            request.headers().set(AUTHORIZATION, &value);
        }
        <BrowserClient as Client<E, IS, OS>>::send(request)
    }

    #[allow(clippy::type_complexity)]
    fn open_websocket(
        path: &str,
    ) -> impl Future<
        Output = Result<
            (
                impl Stream<Item = Result<Bytes, Bytes>> + Send + 'static,
                impl Sink<Bytes> + Send + 'static,
            ),
            E,
        >,
    > + Send {
        <BrowserClient as Client<E, IS, OS>>::open_websocket(path)
    }

    fn spawn(future: impl Future<Output = ()> + Send + 'static) {
        <BrowserClient as Client<E, IS, OS>>::spawn(future)
    }
}

/// A `POST` to the REST API, with the bearer header.
#[cfg(feature = "hydrate")]
pub fn post(url: &str) -> gloo_net::http::RequestBuilder {
    with_bearer(gloo_net::http::Request::post(url))
}

/// A `DELETE` on the REST API, with the bearer header.
#[cfg(feature = "hydrate")]
pub fn delete(url: &str) -> gloo_net::http::RequestBuilder {
    with_bearer(gloo_net::http::Request::delete(url))
}

/// A `GET` from the REST API, with the bearer header.
#[cfg(feature = "hydrate")]
pub fn get(url: &str) -> gloo_net::http::RequestBuilder {
    with_bearer(gloo_net::http::Request::get(url))
}

#[cfg(feature = "hydrate")]
fn with_bearer(request: gloo_net::http::RequestBuilder) -> gloo_net::http::RequestBuilder {
    match bearer() {
        Some(value) => request.header(AUTHORIZATION, &value),
        None => request,
    }
}

/// Sends a request. A server that cannot be reached is `unavailable`; a
/// response that is not a success is its error body ([`error_of`]).
#[cfg(feature = "hydrate")]
pub async fn send(request: gloo_net::http::Request) -> Result<gloo_net::http::Response, AppError> {
    let response = request.send().await.map_err(|e| {
        AppError::new(
            ErrorCode::Unavailable,
            format!("docshelf cannot be reached: {e}"),
        )
    })?;
    if response.ok() {
        Ok(response)
    } else {
        Err(error_of(&response).await)
    }
}

/// What a failed response says: the error body docshelf sent or, where
/// something on the way answered instead (a proxy), its status.
#[cfg(feature = "hydrate")]
async fn error_of(response: &gloo_net::http::Response) -> AppError {
    let status = response.status();
    match response.json::<ErrorBody>().await {
        Ok(body) => AppError(body),
        Err(_) => {
            let code = ErrorCode::of_status(status);
            AppError::new(code, format!("docshelf answered {status}"))
        }
    }
}

/// Reads a response's body as server-sent events, handing each to
/// `on_event` as it completes, until the body ends. An error if the body
/// breaks off: the connection was lost, or the request was aborted (the
/// caller knows which).
#[cfg(feature = "hydrate")]
pub async fn read_events(
    response: &gloo_net::http::Response,
    mut on_event: impl FnMut(Frame),
) -> Result<(), AppError> {
    use wasm_bindgen::JsCast;

    let lost = || {
        AppError::new(
            ErrorCode::Unavailable,
            "the connection to docshelf was lost",
        )
    };
    let body = response
        .body()
        .ok_or_else(|| AppError::new(ErrorCode::Internal, "docshelf answered without a body"))?;
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut decoder = Decoder::default();
    loop {
        let chunk = wasm_bindgen_futures::JsFuture::from(reader.read())
            .await
            .map_err(|_| lost())?;
        let field = |name: &str| js_sys::Reflect::get(&chunk, &name.into()).ok();
        if field("done").and_then(|d| d.as_bool()).unwrap_or(true) {
            return Ok(());
        }
        let Some(value) = field("value") else {
            return Ok(());
        };
        for frame in decoder.push(&js_sys::Uint8Array::new(&value).to_vec()) {
            on_event(frame);
        }
    }
}
