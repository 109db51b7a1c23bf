//! The rules every archive is read by, ZIP and tar alike (and a Word
//! document, which is a ZIP): what an upload may expand to in all, what it
//! has used so far, and how one entry is inflated under those bounds.

use std::io::Read;

use super::{ExtractError, MemoryGauge};

/// Limits on what an upload may expand to: an archive's entries, and the
/// compressed streams of a PDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// Entries in one upload, nested archives included.
    pub max_entries: usize,
    /// Uncompressed bytes in one upload, nested archives included.
    pub max_total_bytes: u64,
    /// Uncompressed size over compressed size of one entry.
    pub max_ratio: u64,
    /// Archives inside archives.
    pub max_depth: usize,
    /// Bytes the compressed streams of one PDF may inflate to, in all
    /// (images aside, which are never decoded).
    pub max_pdf_inflated_bytes: u64,
    /// Text the documents of one archive may come to. An upload job holds
    /// at most this much text anyway (`--max-job-text-mib`), so an archive
    /// that expands past it is refused as soon as it does, not after its
    /// whole expansion (up to `max_total_bytes`) is in memory.
    pub max_text_bytes: u64,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        Self {
            max_entries: 10_000,
            max_total_bytes: 1024 * 1024 * 1024,
            max_ratio: 200,
            max_depth: 4,
            // A small PDF whose one content stream inflated to 512 MiB was
            // reported to triple the server's memory. The largest of the
            // shared test PDFs inflates to less than twice its size, so the
            // bound leaves real documents two orders of magnitude of room
            // (docs/benchmarks.md, "Hostile inputs, as reported").
            max_pdf_inflated_bytes: 256 * 1024 * 1024,
            max_text_bytes: 256 * 1024 * 1024,
        }
    }
}

/// What an upload has used of its limits so far, across nested archives.
pub(super) struct Budget<'a> {
    pub(super) limits: &'a ArchiveLimits,
    pub(super) entries: usize,
    pub(super) bytes: u64,
    /// The documents' text kept so far.
    pub(super) text: u64,
    /// Where every buffer is asked for before it is filled.
    pub(super) memory: &'a mut dyn MemoryGauge,
}

impl<'a> Budget<'a> {
    /// Nothing used yet.
    pub(super) fn new(limits: &'a ArchiveLimits, memory: &'a mut dyn MemoryGauge) -> Self {
        Self {
            limits,
            entries: 0,
            bytes: 0,
            text: 0,
            memory,
        }
    }
}

/// How much of an entry is inflated at a time, beyond what its header
/// declares: a header that lies costs at most this before it is asked for.
const READ_STEP: u64 = 1024 * 1024;

/// Entries smaller than this are never called bombs: tiny files of repeated
/// bytes compress extremely well and are harmless.
pub(super) const RATIO_FLOOR_BYTES: u64 = 1024 * 1024;

/// Whether an entry that declares `size` bytes from `compressed` expands
/// like a bomb's: refused at its header.
pub(super) fn bomb_ratio(size: u64, compressed: u64, limits: &ArchiveLimits) -> bool {
    size > RATIO_FLOOR_BYTES && size / compressed.max(1) > limits.max_ratio
}

/// Inflates the entry `path`, at most `allowed + 1` bytes, asking `memory`
/// for each buffer before it is filled. Returns the data and what was asked.
pub(super) fn read_entry(
    path: &str,
    entry: &mut impl Read,
    declared: u64,
    allowed: u64,
    memory: &mut dyn MemoryGauge,
) -> Result<(Vec<u8>, u64), ExtractError> {
    let first = declared.min(allowed.saturating_add(1));
    memory.grow(first).map_err(ExtractError::OutOfMemory)?;
    let mut asked = first;
    let mut data = Vec::with_capacity(first as usize);
    let corrupt = |e: std::io::Error| ExtractError::CorruptZip(format!("{path}: {e}"));
    loop {
        if data.len() as u64 > allowed {
            return Ok((data, asked));
        }
        let room = asked - data.len() as u64;
        if room == 0 {
            // Full as declared: one byte more says whether the header lied.
            let mut probe = [0u8; 1];
            if entry.read(&mut probe).map_err(corrupt)? == 0 {
                return Ok((data, asked));
            }
            let step = READ_STEP.min(allowed.saturating_add(1) - asked);
            memory.grow(step).map_err(ExtractError::OutOfMemory)?;
            asked += step;
            data.reserve_exact(step as usize);
            data.push(probe[0]);
            continue;
        }
        if entry.take(room).read_to_end(&mut data).map_err(corrupt)? == 0 {
            return Ok((data, asked));
        }
    }
}

/// Whether an entry name stays inside the archive: relative, no `..`
/// component, no drive letter, no NUL. (The zip crate's own check accepts
/// `/etc/x` by stripping the slash; a name like that is hostile, not sloppy.)
pub(super) fn is_contained(name: &str) -> bool {
    let first = name.split(['/', '\\']).next().unwrap_or("");
    !name.starts_with(['/', '\\'])
        && !first.contains(':')
        && !name.contains('\0')
        && name.split(['/', '\\']).all(|part| part != "..")
}

pub(super) fn too_large(limits: &ArchiveLimits) -> ExtractError {
    ExtractError::HostileZip(format!(
        "it expands to more than {} bytes (limit max_total_bytes)",
        limits.max_total_bytes
    ))
}

#[cfg(test)]
mod tests {
    use super::is_contained;

    #[test]
    fn entry_names_must_stay_inside_the_archive() {
        for ok in [
            "a.md",
            "docs/a.md",
            "docs/./a.md",
            "a..b.md",
            "docs/v1.2/x.md",
        ] {
            assert!(is_contained(ok), "{ok}");
        }
        for bad in [
            "/etc/passwd",
            "\\evil.md",
            "../x.md",
            "docs/../../x.md",
            "C:/x.md",
            "a\\..\\..\\x.md",
            "a\0.md",
        ] {
            assert!(!is_contained(bad), "{bad}");
        }
    }
}
