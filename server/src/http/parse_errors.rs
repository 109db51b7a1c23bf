//! JSON bodies for the errors hyper answers itself.
//!
//! A request head hyper cannot parse never reaches the router: hyper
//! answers it on its own, with an empty body, and closes the connection. A
//! target over hyper's 64 KiB limit got `414` with no body, a head over its
//! buffer `431`, a malformed one `400`, where every other error docshelf
//! answers is JSON `{code, error}`. Targets up to that limit are refused
//! with a JSON 414 by [`super::error::json_errors`]; this wrapper of the
//! connection's socket gives hyper's own answers the same shape: it
//! recognises hyper's bodiless error head as it is written and writes a JSON
//! answer with the same status in its place.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use index_core::{ErrorBody, ErrorCode};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection's socket whose bodiless parse-error answers become JSON.
pub struct JsonParseErrors<S> {
    inner: S,
    /// The JSON answer still to write, and how much of it is written.
    pending: Vec<u8>,
    written: usize,
}

impl<S> JsonParseErrors<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }
}

/// The JSON answer to write instead of `head`, when `head` is one of
/// hyper's own error answers: a whole response head, no body
/// (`content-length: 0`) and no content type, with a status hyper uses for
/// heads it cannot parse. docshelf's own errors always carry a JSON body,
/// so none of them matches.
fn replacement(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.1 ")?;
    if !text.ends_with("\r\n\r\n") || text.matches("\r\n\r\n").count() != 1 {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    if !lower.contains("\r\ncontent-length: 0\r\n") || lower.contains("\r\ncontent-type:") {
        return None;
    }
    let status: u16 = rest.get(..3)?.parse().ok()?;
    let (code, message) = match status {
        400 => (
            ErrorCode::UnparsableRequest,
            "the request head could not be parsed",
        ),
        414 => (
            ErrorCode::UriTooLong,
            "the request target is longer than the server reads",
        ),
        431 => (
            ErrorCode::HeadersTooLarge,
            "the request's header fields are larger than the server reads",
        ),
        _ => return None,
    };
    let status_line = text.lines().next()?;
    let body = serde_json::to_string(&ErrorBody::new(code, message)).ok()?;
    Some(
        format!(
            "{status_line}\r\ncontent-type: application/json\r\nconnection: close\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<S: AsyncWrite + Unpin> JsonParseErrors<S> {
    /// Writes what is left of a replacement answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        Poll::Ready(Ok(()))
    }

    /// Takes `len` bytes of hyper's answer as written, and writes
    /// `answer` in their place (as far as the socket takes it now).
    fn replace(
        &mut self,
        cx: &mut Context<'_>,
        answer: Vec<u8>,
        len: usize,
    ) -> Poll<io::Result<usize>> {
        self.pending = answer;
        self.written = 0;
        match self.poll_pending(cx) {
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            // The rest goes out on the flush hyper does next.
            _ => Poll::Ready(Ok(len)),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonParseErrors<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        match replacement(buf) {
            Some(answer) => this.replace(cx, answer, buf.len()),
            None => Pin::new(&mut this.inner).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        let mut filled = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(head), None) = (filled.next(), filled.next()) {
            if let Some(answer) = replacement(head) {
                return this.replace(cx, answer, head.len());
            }
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::replacement;

    #[test]
    fn hypers_bodiless_error_heads_become_json() {
        let head = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\n\
                     date: Thu, 26 Nov 2026 03:35:03 GMT\r\n\r\n";
        let answer = String::from_utf8(replacement(head).expect("replaced")).expect("utf-8");
        let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(body["code"], "uri_too_long");
    }

    #[test]
    fn answers_with_a_body_or_another_status_pass_unchanged() {
        for head in [
            &b"HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 2\r\n\r\n{}",
            b"{\"code\":\"x\"}",
        ] {
            assert!(replacement(head).is_none(), "{}", String::from_utf8_lossy(head));
        }
    }
}
