//! ZIP archives, expanded recursively and defensively.
//!
//! An archive is checked whole before anything in it is used: one entry that
//! escapes the archive (`../`, an absolute path), too many entries, too many
//! bytes, a compression ratio only a zip bomb has, or nesting too deep, and
//! the whole upload is refused, so nothing of a hostile archive is stored.

use std::io::Cursor;

use ::zip::ZipArchive;

use super::archive::{bomb_ratio, is_contained, read_entry, too_large, Budget};
use super::{ArchiveLimits, ExtractError, Extraction, Format, MemoryGauge, Skipped};

pub fn extract_archive(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Extraction, ExtractError> {
    let mut budget = Budget::new(limits, memory);
    expand(path, bytes, 0, "", &mut budget)
}

/// Opens a ZIP and checks every entry's header before any data is read:
/// the entry count, names that lead outside the archive, ratios like a
/// bomb's, and the declared total against what the job may still expand.
/// Uploads and package archives are both opened through here.
pub(super) fn open_checked<'b>(
    archive_path: &str,
    bytes: &'b [u8],
    budget: &mut Budget<'_>,
) -> Result<ZipArchive<Cursor<&'b [u8]>>, ExtractError> {
    let limits = budget.limits;
    let corrupt =
        |e: ::zip::result::ZipError| ExtractError::CorruptZip(format!("{archive_path}: {e}"));
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(corrupt)?;
    budget.entries += archive.len();
    if budget.entries > limits.max_entries {
        return Err(ExtractError::HostileZip(format!(
            "more than {} entries (limit max_entries)",
            limits.max_entries
        )));
    }
    let mut declared: u64 = 0;
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(corrupt)?;
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        if entry.enclosed_name().is_none() || !is_contained(&name) {
            return Err(ExtractError::HostileZip(format!(
                "entry {name:?} points outside the archive"
            )));
        }
        let size = entry.size();
        let compressed = entry.compressed_size().max(1);
        if bomb_ratio(size, compressed, limits) {
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
    Ok(archive)
}

pub(super) fn expand(
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
    let mut archive = open_checked(archive_path, bytes, budget)?;

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
        let raw_name = entry
            .name()
            .map_err(|e| ExtractError::CorruptZip(format!("{archive_path}: {e}")))?;
        // Stored and shown as an address: a safe relative path, without
        // control or bidi characters (`index_core::validate::file_path`).
        let name = match index_core::validate::file_path(&raw_name) {
            Ok(name) => name,
            Err(err) => {
                out.skipped.push(Skipped {
                    file_path: format!("{prefix}{}", index_core::validate::cut(&raw_name, 60)),
                    reason: err.to_string(),
                });
                continue;
            }
        };
        let path = format!("{prefix}{name}");
        let Some(format) = Format::from_path(&name) else {
            out.skipped.push(Skipped {
                file_path: path,
                reason: "unsupported file type".into(),
            });
            continue;
        };
        // Headers can lie about sizes: never read past what is left, and
        // ask for memory as the entry inflates, not for what it declares.
        let allowed = limits.max_total_bytes - budget.bytes;
        let declared = entry.size();
        let (data, held) = read_entry(&path, &mut entry, declared, allowed, budget.memory)?;
        budget.bytes += data.len() as u64;
        if budget.bytes > limits.max_total_bytes {
            return Err(too_large(limits));
        }
        drop(entry);

        super::keep(&path, Some(format), data, held, depth, budget, &mut out)?;
    }
    Ok(out)
}
