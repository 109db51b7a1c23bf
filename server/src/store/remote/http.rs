//! The object store's HTTP client: the reqwest 0.12 the tree already builds.
//!
//! object_store's own S3 client brings reqwest 0.13 with aws-lc-rs for TLS
//! (feature "aws"). Without it ("aws-base") the client asks for an
//! [`HttpConnector`]; this one drives the reqwest 0.12 that LanceDB's tree
//! already compiles with rustls (ring) and native roots, so S3 over HTTPS
//! costs no new TLS stack in the build. Retries, signing and timeouts stay
//! object_store's: this layer only moves requests and bodies.

use std::time::Duration;

use http_body_util::BodyExt;
use object_store::client::{
    ClientOptions, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService,
};

/// How long a connection may take to open: an endpoint that does not
/// answer fails the request (and object_store retries it) instead of
/// holding a search.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one request may take end to end. Lance reads in blocks of
/// 64 KiB to a few MiB and writes in parts of at most a few MiB, so a
/// request past this is a store in trouble, not a large transfer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Makes object_store's HTTP clients from reqwest 0.12.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReqwestConnector;

impl HttpConnector for ReqwestConnector {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<HttpClient> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(|err| object_store::Error::Generic {
                store: "S3",
                source: Box::new(err),
            })?;
        Ok(HttpClient::new(ReqwestService(client)))
    }
}

#[derive(Debug)]
struct ReqwestService(reqwest::Client);

#[async_trait::async_trait]
impl HttpService for ReqwestService {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (parts, body) = request.into_parts();
        let url = reqwest::Url::parse(&parts.uri.to_string())
            .map_err(|err| HttpError::new(HttpErrorKind::Request, err))?;
        let mut outgoing = reqwest::Request::new(parts.method, url);
        *outgoing.headers_mut() = parts.headers;
        // Most bodies are one buffer; a multipart upload's part is a list
        // of them, which reqwest takes as a body of its own.
        *outgoing.body_mut() = Some(match body.as_bytes() {
            Some(bytes) => reqwest::Body::from(bytes.clone()),
            None => reqwest::Body::wrap(body),
        });
        let response = self.0.execute(outgoing).await.map_err(error)?;
        let response: http::Response<reqwest::Body> = response.into();
        let (parts, body) = response.into_parts();
        let body = HttpResponseBody::new(body.map_err(error));
        Ok(HttpResponse::from_parts(parts, body))
    }
}

/// object_store retries by kind: a refused connection and a timeout are
/// worth retrying, a body that cannot be decoded is not.
fn error(err: reqwest::Error) -> HttpError {
    let kind = if err.is_timeout() {
        HttpErrorKind::Timeout
    } else if err.is_connect() {
        HttpErrorKind::Connect
    } else if err.is_decode() {
        HttpErrorKind::Decode
    } else if err.is_request() || err.is_body() {
        HttpErrorKind::Request
    } else {
        HttpErrorKind::Unknown
    };
    HttpError::new(kind, err)
}
