//! The memory an extraction holds, asked for before it is held.
//!
//! Checked only at the end, a refused archive would cost its whole
//! expansion first: a nested ZIP refused in the end would hold all of its
//! text while it was examined, and a few at once gigabytes
//! (docs/benchmarks.md, "Memory under hostile uploads"). Extraction
//! therefore asks a [`MemoryGauge`] for every large buffer it
//! fills (an entry as it inflates, a nested archive, a document's text, a
//! PDF's inflated streams) and stops when the gauge refuses. The server's
//! gauge draws on one budget shared by every running extraction; this
//! crate only counts, so it stays free of threads and async (it builds for
//! wasm32).

use std::io::Cursor;

use ::zip::ZipArchive;

use super::{ArchiveLimits, Format};

/// Where an extraction asks for memory.
pub trait MemoryGauge {
    /// Asks for `bytes` more; `Err` says, in words for the user, why they
    /// cannot be had. A refusal holds nothing more.
    fn grow(&mut self, bytes: u64) -> Result<(), String>;
    /// Gives back `bytes` that are no longer held.
    fn shrink(&mut self, bytes: u64);
}

/// A gauge that grants everything: for callers that bound memory some
/// other way (the CLI's one ingest, the browser, tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unmetered;

impl MemoryGauge for Unmetered {
    fn grow(&mut self, _bytes: u64) -> Result<(), String> {
        Ok(())
    }

    fn shrink(&mut self, _bytes: u64) {}
}

/// What extracting `bytes` (the file `path`) will hold at most if its
/// headers are honest, beyond the upload itself: for a ZIP, the text it
/// keeps (its declared size, at most `max_text_bytes`) and its largest
/// entry while that is converted; for a PDF, the loaded file and its
/// inflated streams (real ones inflate to less than three times their
/// size); for other files, a copy for the conversion and the text. Nested
/// archives' contents cannot be known before they are inflated: they are
/// asked for as they are.
///
/// A server reserves this before it starts, so that an extraction waits
/// for memory at its start rather than midway while holding some. An
/// archive whose headers extraction refuses at once (an entry that
/// expands like a bomb's, more than the archive limits allow in all)
/// needs nothing: it holds no memory before it is refused.
pub fn memory_estimate(path: &str, bytes: &[u8], limits: &ArchiveLimits) -> u64 {
    needs(path, bytes, limits).estimate
}

/// What the headers of `bytes` claim extracting it needs, taken at their
/// word (no limit applied): for a ZIP, its largest entry and a copy (held
/// while it converts); for a Word document, its XML parts and a copy; and
/// at least [`memory_estimate`]'s figure. A server refuses a file at
/// once when this is more than its budget could ever give: such a file is
/// refused by extraction anyway (past a limit or a bomb's ratio), or would
/// wait for memory that never comes.
pub fn declared_need(path: &str, bytes: &[u8], limits: &ArchiveLimits) -> u64 {
    let needs = needs(path, bytes, limits);
    needs.claimed.max(needs.estimate)
}

/// Both figures of a file, from one reading of its headers.
struct Needs {
    /// [`memory_estimate`].
    estimate: u64,
    /// What the headers claim, unbounded ([`declared_need`]).
    claimed: u64,
}

fn needs(path: &str, bytes: &[u8], limits: &ArchiveLimits) -> Needs {
    let len = bytes.len() as u64;
    let copy = Needs {
        estimate: len.saturating_mul(2),
        claimed: 0,
    };
    match Format::from_path(path) {
        Some(Format::Zip) => match headers(bytes, limits, |_| true) {
            Some(h) => Needs {
                // Refused at its headers: nothing is held.
                estimate: if h.refused {
                    0
                } else {
                    h.total
                        .min(limits.max_text_bytes)
                        .saturating_add(h.largest.saturating_mul(2))
                },
                claimed: h.largest.saturating_mul(2),
            },
            // No ZIP: refused as it is opened.
            None => Needs {
                estimate: 0,
                claimed: 0,
            },
        },
        Some(Format::Pdf) => Needs {
            estimate: len.saturating_mul(4),
            claimed: 0,
        },
        // A Word document's XML parts inflate several times over, and are
        // held while they convert: what they declare, and a copy. Only
        // the XML parts are read; images and fonts are not.
        Some(Format::Docx) => {
            match headers(bytes, limits, |name| {
                name.ends_with(".xml") || name.ends_with(".rels")
            }) {
                Some(h) => Needs {
                    estimate: if h.refused {
                        0
                    } else {
                        h.total.saturating_mul(2)
                    },
                    claimed: h.total.saturating_mul(2),
                },
                // Not a ZIP at all: the reader says so, from a copy.
                None => copy,
            }
        }
        Some(_) | None => copy,
    }
}

/// What a ZIP's headers declare of the entries extraction reads.
struct Headers {
    /// All of the entries `wanted` takes.
    total: u64,
    /// The largest of them.
    largest: u64,
    /// Whether extraction refuses the archive at its headers
    /// (`zip::open_checked`'s rules: an entry past `max_ratio`, a declared
    /// total past `max_total_bytes`), holding nothing.
    refused: bool,
}

/// The headers of the ZIP `bytes`, for the entries `wanted` names; `None`
/// when it is no ZIP.
fn headers(bytes: &[u8], limits: &ArchiveLimits, wanted: impl Fn(&str) -> bool) -> Option<Headers> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).ok()?;
    let (mut all, mut total, mut largest, mut bomb) = (0u64, 0u64, 0u64, false);
    for i in 0..archive.len() {
        let Ok(entry) = archive.by_index_raw(i) else {
            continue;
        };
        let size = entry.size();
        bomb |= super::archive::bomb_ratio(size, entry.compressed_size(), limits);
        all = all.saturating_add(size);
        if entry.name().is_ok_and(|name| wanted(&name)) {
            total = total.saturating_add(size);
            largest = largest.max(size);
        }
    }
    Some(Headers {
        total,
        largest,
        refused: bomb || all > limits.max_total_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts what it grants, and grants at most `cap`.
    struct Capped {
        cap: u64,
        held: u64,
        peak: u64,
    }

    impl MemoryGauge for Capped {
        fn grow(&mut self, bytes: u64) -> Result<(), String> {
            if self.held + bytes > self.cap {
                return Err(format!("over {} bytes", self.cap));
            }
            self.held += bytes;
            self.peak = self.peak.max(self.held);
            Ok(())
        }

        fn shrink(&mut self, bytes: u64) {
            self.held -= bytes;
        }
    }

    fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
        use std::io::Write;
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in entries {
            out.start_file(*name, options).unwrap();
            out.write_all(data).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    /// Text that compresses well, as the hostile archives' does (about
    /// 130:1), yet under the ratio that marks a bomb: a 16 KiB block of
    /// random words, repeated.
    fn text(bytes: usize) -> Vec<u8> {
        let mut block = Vec::with_capacity(16 << 10);
        let mut seed: u64 = 7;
        while block.len() < 16 << 10 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            block.extend_from_slice(format!("w{} ", (seed >> 33) % 5000).as_bytes());
        }
        block.iter().copied().cycle().take(bytes).collect()
    }

    #[test]
    fn what_extraction_refuses_at_its_headers_needs_nothing() {
        // A Word document whose body is 64 MiB of one byte (about 1000:1,
        // past max_ratio), as the hostile run's 2 GiB one was.
        let bomb = zip_of(&[
            ("[Content_Types].xml", b"<Types/>".to_vec()),
            ("word/document.xml", vec![b'a'; 64 << 20]),
        ]);
        let limits = ArchiveLimits::default();
        assert!(bomb.len() < 1 << 20);
        assert_eq!(memory_estimate("bomb.docx", &bomb, &limits), 0);
        assert_eq!(memory_estimate("bomb.zip", &bomb, &limits), 0);
        // What its headers claim, taken at their word: what a server
        // refuses on upload when its budget could never give it.
        let claimed = declared_need("bomb.docx", &bomb, &limits);
        assert!(claimed >= 128 << 20, "{claimed}");
        assert!(declared_need("bomb.zip", &bomb, &limits) >= 128 << 20);
        let err = crate::extract::extract_metered("bomb.docx", &bomb, &limits, &mut Unmetered)
            .unwrap_err();
        assert!(err.to_string().contains("zip bomb"), "{err}");
        // Honest text under the ratio is counted: what it declares, twice.
        let honest = zip_of(&[("word/document.xml", text(2 << 20))]);
        assert_eq!(memory_estimate("ok.docx", &honest, &limits), 4 << 20);
        // More than the archive limits allow in all: refused at once too.
        let small = ArchiveLimits {
            max_total_bytes: 1 << 20,
            ..limits
        };
        assert_eq!(memory_estimate("ok.zip", &honest, &small), 0);
    }

    #[test]
    fn nested_archives_are_asked_for_as_they_inflate() {
        let inner = zip_of(&[("a.txt", text(3 << 20)), ("b.txt", text(3 << 20))]);
        let outer = zip_of(&[("inner.zip", inner)]);
        let limits = ArchiveLimits::default();
        // The outer archive declares only the nested one's compressed size.
        assert!(memory_estimate("x.zip", &outer, &limits) < 1 << 20);

        let mut small = Capped {
            cap: 4 << 20,
            held: 0,
            peak: 0,
        };
        let err =
            crate::extract::extract_metered("x.zip", &outer, &limits, &mut small).unwrap_err();
        assert!(
            matches!(err, crate::extract::ExtractError::OutOfMemory(_)),
            "{err}"
        );
        assert!(small.peak <= 4 << 20);

        let mut large = Capped {
            cap: 64 << 20,
            held: 0,
            peak: 0,
        };
        let ok = crate::extract::extract_metered("x.zip", &outer, &limits, &mut large).unwrap();
        assert_eq!(ok.documents.len(), 2);
        // What is still held is the documents' text, and no more.
        let text: u64 = ok.documents.iter().map(|d| d.text.len() as u64).sum();
        assert_eq!(large.held, text);
    }

    #[test]
    fn an_archive_stops_at_the_text_one_upload_may_hold() {
        let archive = zip_of(&[
            ("a.txt", text(2 << 20)),
            ("b.txt", text(2 << 20)),
            ("c.txt", text(2 << 20)),
        ]);
        let limits = ArchiveLimits {
            max_text_bytes: 3 << 20,
            ..ArchiveLimits::default()
        };
        let mut gauge = Capped {
            cap: u64::MAX,
            held: 0,
            peak: 0,
        };
        let err =
            crate::extract::extract_metered("x.zip", &archive, &limits, &mut gauge).unwrap_err();
        assert_eq!(err, crate::extract::ExtractError::TooMuchText(3 << 20));
        // Refused at the second entry, before the third was inflated.
        assert!(gauge.peak < 7 << 20, "{}", gauge.peak);
    }
}
