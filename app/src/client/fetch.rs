//! The page's requests to the REST API (the upload, sources, Ask's
//! stream, a job's events): built by [`get`], [`post`] and [`delete`], sent
//! by [`send`], a failed one read into the same [`AppError`] (the engine's
//! error body) as a server function's, and a streamed body read into
//! events by [`read_events`].
//!
//! None of them carries a token: the browser sends the session cookie of
//! the signed-in token with every same-origin request (the server's
//! `http::auth` reads it as it reads a bearer header), and the page's
//! scripts never see it.

#[cfg(feature = "hydrate")]
use super::sse::{Decoder, Frame};
#[cfg(feature = "hydrate")]
use crate::error::AppError;
#[cfg(feature = "hydrate")]
use index_core::{ErrorBody, ErrorCode};

/// A `POST` to the REST API.
#[cfg(feature = "hydrate")]
pub fn post(url: &str) -> gloo_net::http::RequestBuilder {
    gloo_net::http::Request::post(url)
}

/// A `DELETE` on the REST API.
#[cfg(feature = "hydrate")]
pub fn delete(url: &str) -> gloo_net::http::RequestBuilder {
    gloo_net::http::Request::delete(url)
}

/// A `GET` from the REST API.
#[cfg(feature = "hydrate")]
pub fn get(url: &str) -> gloo_net::http::RequestBuilder {
    gloo_net::http::Request::get(url)
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
