//! MCP over stdio: one JSON-RPC message a line. rmcp drops a line that is
//! not a message without answering, so a client that sent a malformed one
//! waited forever; JSON-RPC says such a line gets a `-32700` parse error
//! (`-32600` for JSON that is not a message). This sits between the
//! process's stdin/stdout and rmcp: well-formed lines pass through to
//! `to_server`, malformed ones are answered on `to_client`, and rmcp's own
//! output (`from_server`) is copied out line by line, so the two never
//! interleave inside a line.

use super::rpc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line read as one message: a client that never sends a
/// newline must not make the server hold its whole output.
pub const MAX_LINE: usize = 16 << 20;

/// Copies `input` to `to_server` and `from_server` to `output`,
/// answering malformed lines itself, until `input` ends and rmcp's
/// output is closed.
pub async fn filter(
    input: impl AsyncRead + Unpin + Send + 'static,
    mut to_server: impl AsyncWrite + Unpin + Send + 'static,
    from_server: impl AsyncRead + Unpin + Send + 'static,
    mut output: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
    let answers = lines_tx.clone();
    let reader = tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let limit = MAX_LINE as u64 + 1;
            if (&mut input).take(limit).read_until(b'\n', &mut buf).await? == 0 {
                break;
            }
            if buf.len() > MAX_LINE {
                // Answered once, and the rest of the line skipped.
                let why = format!("Parse error: a line is longer than {MAX_LINE} bytes");
                let _ = answers.send(rpc::parse_error(why).to_string());
                while !buf.ends_with(b"\n") {
                    buf.clear();
                    if (&mut input).take(limit).read_until(b'\n', &mut buf).await? == 0 {
                        break;
                    }
                }
                continue;
            }
            let Ok(line) = std::str::from_utf8(&buf) else {
                let why = "Parse error: the line is not UTF-8 text".to_owned();
                let _ = answers.send(rpc::parse_error(why).to_string());
                continue;
            };
            let line = line.trim_end_matches(['\r', '\n']);
            if line.trim().is_empty() {
                continue;
            }
            match rpc::refusal(line) {
                Some(answer) => {
                    let _ = answers.send(answer.to_string());
                }
                None => {
                    to_server.write_all(line.as_bytes()).await?;
                    to_server.write_all(b"\n").await?;
                    to_server.flush().await?;
                }
            }
        }
        // The client is gone: closing rmcp's input ends the session.
        to_server.shutdown().await
    });
    let copier = tokio::spawn(async move {
        let mut lines = BufReader::new(from_server).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    while let Some(line) = lines_rx.recv().await {
        output.write_all(line.as_bytes()).await?;
        output.write_all(b"\n").await?;
        output.flush().await?;
    }
    let _ = copier.await;
    reader.await.map_err(std::io::Error::other)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_answered_and_the_session_goes_on() {
        use tokio::io::AsyncReadExt;
        let input: &'static [u8] =
            b"{\"x\":\"\xff\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        let (to_server, mut server_input) = tokio::io::duplex(1 << 16);
        let (server_output, from_server) = tokio::io::duplex(1 << 16);
        drop(server_output);
        let mut output = Vec::new();
        filter(input, to_server, from_server, &mut output)
            .await
            .expect("the filter ends when its input does");
        let answer: serde_json::Value =
            serde_json::from_slice(output.split(|b| *b == b'\n').next().expect("a line"))
                .expect("json");
        assert_eq!(answer["error"]["code"], index_core::error::RPC_PARSE_ERROR);
        let mut forwarded = String::new();
        server_input
            .read_to_string(&mut forwarded)
            .await
            .expect("read");
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
    }
}
