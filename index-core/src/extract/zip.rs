//! ZIP archives, expanded recursively and defensively.
//!
//! An archive is checked whole before anything in it is used: one entry that
//! escapes the archive (`../`, an absolute path), too many entries, too many
//! bytes, a compression ratio only a zip bomb has, or nesting too deep, and
//! the whole upload is refused, so nothing of a hostile archive is stored.

use std::io::{Cursor, Read};

use ::zip::ZipArchive;

use super::{extract_one, ExtractError, Extraction, Format, Skipped};

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
        }
    }
}

/// What an upload has used of its limits so far, across nested archives.
struct Budget<'a> {
    limits: &'a ArchiveLimits,
    entries: usize,
    bytes: u64,
}

/// Entries smaller than this are never called bombs: tiny files of repeated
/// bytes compress extremely well and are harmless.
const RATIO_FLOOR_BYTES: u64 = 1024 * 1024;

pub fn extract_archive(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    depth: usize,
) -> Result<Extraction, ExtractError> {
    let mut budget = Budget {
        limits,
        entries: 0,
        bytes: 0,
    };
    expand(path, bytes, depth, "", &mut budget)
}

fn expand(
    archive_path: &str,
    bytes: &[u8],
    depth: usize,
    prefix: &str,
    budget: &mut Budget<'_>,
) -> Result<Extraction, ExtractError> {
    let limits = budget.limits;
    if depth >= limits.max_depth {
        return Err(ExtractError::HostileZip(format!(
            "{archive_path} nests archives more than {} deep",
            limits.max_depth
        )));
    }
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| ExtractError::CorruptZip(format!("{archive_path}: {e}")))?;

    budget.entries += archive.len();
    if budget.entries > limits.max_entries {
        return Err(ExtractError::HostileZip(format!(
            "more than {} entries (limit max_entries)",
            limits.max_entries
        )));
    }

    // Check every entry's name and declared size before reading any data.
    let mut declared: u64 = 0;
    for i in 0..archive.len() {
        let entry = archive
            .by_index_raw(i)
            .map_err(|e| ExtractError::CorruptZip(format!("{archive_path}: {e}")))?;
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        if entry.enclosed_name().is_none() || !is_contained(&name) {
            return Err(ExtractError::HostileZip(format!(
                "entry {name:?} points outside the archive"
            )));
        }
        let size = entry.size();
        let compressed = entry.compressed_size().max(1);
        if size > RATIO_FLOOR_BYTES && size / compressed > limits.max_ratio {
            return Err(ExtractError::HostileZip(format!(
                "entry {name:?} expands {}:1, like a zip bomb (limit max_ratio {}:1)",
                size / compressed,
                limits.max_ratio
            )));
        }
        declared = declared.saturating_add(size);
    }
    if budget.bytes.saturating_add(declared) > limits.max_total_bytes {
        return Err(too_large(limits));
    }

    let mut out = Extraction {
        archive: true,
        ..Extraction::default()
    };
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| ExtractError::CorruptZip(format!("{archive_path}: {e}")))?;
        if entry.is_dir() {
            continue;
        }
        let name = entry
            .name()
            .map_err(|e| ExtractError::CorruptZip(format!("{archive_path}: {e}")))?
            .trim_start_matches("./")
            .to_owned();
        let path = format!("{prefix}{name}");
        let Some(format) = Format::from_path(&name) else {
            out.skipped.push(Skipped {
                file_path: path,
                reason: "unsupported file type".into(),
            });
            continue;
        };
        // Headers can lie about sizes: never read past what is left.
        let allowed = limits.max_total_bytes - budget.bytes;
        let mut data = Vec::with_capacity(entry.size().min(allowed) as usize);
        (&mut entry)
            .take(allowed + 1)
            .read_to_end(&mut data)
            .map_err(|e| ExtractError::CorruptZip(format!("{path}: {e}")))?;
        budget.bytes += data.len() as u64;
        if budget.bytes > limits.max_total_bytes {
            return Err(too_large(limits));
        }
        drop(entry);

        if format == Format::Zip {
            let nested = expand(&path, &data, depth + 1, &format!("{path}/"), budget)?;
            out.documents.extend(nested.documents);
            out.skipped.extend(nested.skipped);
            continue;
        }
        match extract_one(&path, format, &data, limits) {
            Ok(doc) => out.documents.push(doc),
            Err(err) => out.skipped.push(Skipped {
                file_path: path,
                reason: err.to_string(),
            }),
        }
    }
    Ok(out)
}

/// Whether an entry name stays inside the archive: relative, no `..`
/// component, no drive letter, no NUL. (The zip crate's own check accepts
/// `/etc/x` by stripping the slash; a name like that is hostile, not sloppy.)
fn is_contained(name: &str) -> bool {
    let first = name.split(['/', '\\']).next().unwrap_or("");
    !name.starts_with(['/', '\\'])
        && !first.contains(':')
        && !name.contains('\0')
        && name.split(['/', '\\']).all(|part| part != "..")
}

fn too_large(limits: &ArchiveLimits) -> ExtractError {
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
