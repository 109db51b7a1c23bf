//! Server-sent events decoded from a `fetch` body, for streams that a
//! browser `EventSource` cannot open: `POST /api/ask` takes a JSON body and
//! a bearer token, and `EventSource` sends neither. Pure, so it is
//! unit-tested natively; [`super::fetch`] feeds it the body's bytes.

/// One event: its name and its data lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub event: String,
    pub data: String,
}

/// Turns body bytes, in whatever pieces they arrive, into whole events.
/// Bytes are kept until an event is complete, so a character split across
/// two pieces decodes whole.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    /// Adds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        self.pending.extend_from_slice(bytes);
        let mut frames = Vec::new();
        while let Some(end) = find_blank_line(&self.pending) {
            let block: Vec<u8> = self.pending.drain(..end.0).collect();
            self.pending.drain(..end.1 - end.0);
            if let Some(frame) = parse(&String::from_utf8_lossy(&block)) {
                frames.push(frame);
            }
        }
        frames
    }
}

/// Where the first event ends: (end of its text, start of the next).
fn find_blank_line(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn parse(block: &str) -> Option<Frame> {
    let mut event = String::from("message");
    let mut data: Vec<&str> = Vec::new();
    for line in block.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => event = value.to_owned(),
            "data" => data.push(value),
            // Comments (keep-alives) and ids are not used here.
            _ => {}
        }
    }
    (!data.is_empty()).then(|| Frame {
        event,
        data: data.join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_decode_whole() {
        let wire =
            "event: token\ndata: {\"text\":\"é\"}\n\n: keep-alive\n\nevent: done\ndata: {}\n\n"
                .as_bytes();
        for cut in 0..wire.len() {
            let mut d = Decoder::default();
            let mut frames = d.push(&wire[..cut]);
            frames.extend(d.push(&wire[cut..]));
            assert_eq!(
                frames,
                vec![
                    Frame {
                        event: "token".into(),
                        data: "{\"text\":\"é\"}".into()
                    },
                    Frame {
                        event: "done".into(),
                        data: "{}".into()
                    },
                ],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn crlf_and_multi_line_data() {
        let mut d = Decoder::default();
        let frames = d.push(b"data: a\r\ndata: b\r\n\r\n");
        assert_eq!(
            frames,
            vec![Frame {
                event: "message".into(),
                data: "a\nb".into()
            }]
        );
    }
}
