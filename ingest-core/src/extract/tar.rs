//! gzip'd tar archives (`.tar.gz`, `.tgz`, `.crate`), expanded by the rules
//! `zip.rs` sets for ZIPs, and the walk that takes only chosen entries of an
//! archive (a package's documentation, `crate::package`).
//!
//! A tar has no directory to check first: its entries are met as the gzip
//! stream inflates. Every rule is checked as each entry is met, and the first
//! broken one refuses the whole upload, so nothing of a hostile archive is
//! stored either. The stream itself is metered: what it inflates to counts
//! against `max_total_bytes`, and against `max_ratio` times its compressed
//! size (a tar has no sizes per compressed entry), so a gzip bomb stops
//! after at most that much work. Entries that are not read are inflated and
//! dropped a block at a time, never buffered.

use std::cell::Cell;
use std::io::{self, Cursor, Read};

use ::tar::{Archive, EntryType};
use ::zip::ZipArchive;
use flate2::read::GzDecoder;

use super::archive::{self, is_contained, read_entry, Budget, RATIO_FLOOR_BYTES};
use super::{keep, ArchiveLimits, ExtractError, Extraction, Format, MemoryGauge, Skipped};

/// What to do with one entry of an archive, decided from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pick {
    /// Extract it as `format` and store it under `path`.
    Take { path: String, format: Format },
    /// Keep its text as it is, decoded but read as no format, under
    /// `path`: source code, which a reader of its own parses
    /// (`crate::api_reference`).
    Verbatim { path: String },
    /// Leave it out and list it in [`Extraction::skipped`] with this reason.
    Skip(String),
    /// Leave it out unlisted; it is only counted.
    Pass,
}

/// Chooses for each file entry, given its path (cleaned as a document's
/// path is) and, when it cannot be read as a file (a link, a device, a bad
/// name), why not.
pub(crate) type Chooser<'c> = dyn FnMut(&str, Option<&str>) -> Pick + 'c;

/// How an upload takes an archive: every file docshelf reads, the rest
/// listed with the reason it was left out.
pub(super) fn every_file(path: &str, unreadable: Option<&str>) -> Pick {
    if let Some(reason) = unreadable {
        return Pick::Skip(reason.to_owned());
    }
    match Format::from_path(path) {
        Some(format) => Pick::Take {
            path: path.to_owned(),
            format,
        },
        None => Pick::Skip("unsupported file type".into()),
    }
}

/// The largest GNU long-name or PAX record read: such records hold a path
/// and a few numbers, and the tar crate would otherwise buffer any size.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

pub fn extract_archive(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
) -> Result<Extraction, ExtractError> {
    let mut budget = Budget::new(limits, memory);
    walk_tar(path, bytes, 0, "", &mut budget, &mut every_file).map(|(out, _)| out)
}

/// The paths of the archive `path`'s files (cleaned as documents' paths
/// are; links and other non-files left out), for choosing among them.
/// A tar is inflated to list them, a block at a time; a ZIP's are read
/// from its directory.
pub(crate) fn archive_files(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
) -> Result<Vec<String>, ExtractError> {
    let mut files = Vec::new();
    match Format::from_path(path) {
        Some(Format::TarGz) => {
            let mut nothing = super::Unmetered;
            let mut budget = Budget::new(limits, &mut nothing);
            walk_tar(path, bytes, 0, "", &mut budget, &mut |name, unreadable| {
                if unreadable.is_none() {
                    files.push(name.to_owned());
                }
                Pick::Pass
            })?;
        }
        Some(Format::Zip) => {
            let mut archive = open_zip(path, bytes)?;
            for i in 0..archive.len() {
                let entry = archive.by_index_raw(i).map_err(|e| corrupt_zip(path, e))?;
                if entry.is_dir() {
                    continue;
                }
                let name = entry.name().map_err(|e| corrupt_zip(path, e))?;
                if let Ok(name) = index_core::validate::file_path(&name) {
                    files.push(name);
                }
            }
        }
        _ => return Err(ExtractError::Unsupported(path.to_owned())),
    }
    Ok(files)
}

/// Extracts the entries of the archive `path` that `choose` takes, under
/// the paths it gives, and counts those it passes over. Limits, hostile
/// entries and memory are handled as for an upload; entries passed over
/// are never held in memory. Archives inside are not expanded: one that
/// `choose` takes is listed as skipped.
pub(crate) fn extract_chosen(
    path: &str,
    bytes: &[u8],
    limits: &ArchiveLimits,
    memory: &mut dyn MemoryGauge,
    choose: &mut Chooser<'_>,
) -> Result<(Extraction, usize), ExtractError> {
    let mut budget = Budget::new(limits, memory);
    let mut files_only = |name: &str, unreadable: Option<&str>| match choose(name, unreadable) {
        Pick::Take { format, .. } if format.is_archive() => {
            Pick::Skip("an archive inside the archive; not expanded here".into())
        }
        pick => pick,
    };
    match Format::from_path(path) {
        Some(Format::TarGz) => walk_tar(path, bytes, 0, "", &mut budget, &mut files_only),
        Some(Format::Zip) => walk_zip(path, bytes, &mut budget, &mut files_only),
        _ => Err(ExtractError::Unsupported(path.to_owned())),
    }
}

/// The tar inside `bytes`: gzip'd as the name promises, or already
/// inflated (an HTTP client may have undone a `Content-Encoding: gzip`).
fn tar_stream<'b>(path: &str, bytes: &'b [u8]) -> Result<Box<dyn Read + 'b>, ExtractError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(GzDecoder::new(bytes)))
    } else if bytes.get(257..262) == Some(b"ustar") {
        Ok(Box::new(bytes))
    } else {
        Err(ExtractError::CorruptTar(format!(
            "{path} is neither gzip-compressed nor a tar"
        )))
    }
}

/// A reader that counts what the stream inflates to and fails once it
/// passes `cap`, so a bomb costs at most `cap` bytes of work.
struct Metered<'c, R> {
    inner: R,
    seen: &'c Cell<u64>,
    cap: &'c Cell<u64>,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let seen = self.seen.get();
        let room = self.cap.get().saturating_add(1).saturating_sub(seen);
        if room == 0 {
            return Err(io::Error::other("the archive inflates past its limit"));
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.seen.set(seen + n as u64);
        Ok(n)
    }
}

/// Keeps one tar stream's inflated bytes in the upload's budget and says
/// which limit a failed read ran into.
struct Meter<'c> {
    archive_path: &'c str,
    seen: &'c Cell<u64>,
    cap: &'c Cell<u64>,
    /// What of `seen` is in `Budget::bytes` already.
    counted: u64,
    /// What `max_ratio` allows this stream.
    ratio_cap: u64,
}

impl Meter<'_> {
    /// Adds what was inflated since the last call to the budget, and sets
    /// how far the stream may go from here (nested archives spend the same
    /// budget in between).
    fn sync(&mut self, budget: &mut Budget<'_>) -> Result<(), ExtractError> {
        let seen = self.seen.get();
        if seen > self.cap.get() {
            return Err(self.over(budget.limits));
        }
        budget.bytes += seen - self.counted;
        self.counted = seen;
        let limits = budget.limits;
        if budget.bytes > limits.max_total_bytes {
            return Err(too_large(limits));
        }
        let room = limits.max_total_bytes - budget.bytes;
        self.cap.set(self.ratio_cap.min(seen.saturating_add(room)));
        Ok(())
    }

    /// The bytes the stream may still inflate to.
    fn room(&self) -> u64 {
        self.cap.get().saturating_sub(self.seen.get())
    }

    fn over(&self, limits: &ArchiveLimits) -> ExtractError {
        if self.seen.get() > self.ratio_cap {
            ExtractError::HostileTar(format!(
                "{} inflates more than {}:1, like a gzip bomb (limit max_ratio {}:1)",
                self.archive_path, limits.max_ratio, limits.max_ratio
            ))
        } else {
            too_large(limits)
        }
    }

    /// The error for a failed read: a limit if the stream ran past one,
    /// else damage.
    fn fail(&self, limits: &ArchiveLimits, err: impl std::fmt::Display) -> ExtractError {
        if self.seen.get() > self.cap.get() {
            self.over(limits)
        } else {
            ExtractError::CorruptTar(format!("{}: {err}", self.archive_path))
        }
    }
}

/// Why an entry of this type is not read, or `None` for a file.
fn not_a_file(kind: EntryType) -> Option<&'static str> {
    match kind {
        EntryType::Regular | EntryType::Continuous => None,
        EntryType::Symlink => Some("a symbolic link; docshelf reads files, not links"),
        EntryType::Link => Some("a hard link; docshelf reads files, not links"),
        EntryType::Char | EntryType::Block | EntryType::Fifo => {
            Some("a device or pipe, not a file")
        }
        EntryType::GNUSparse => Some("a sparse file, which docshelf does not read"),
        _ => Some("an entry of a type docshelf does not read"),
    }
}

fn hostile(message: String) -> ExtractError {
    ExtractError::HostileTar(message)
}

fn too_large(limits: &ArchiveLimits) -> ExtractError {
    hostile(format!(
        "it expands to more than {} bytes (limit max_total_bytes)",
        limits.max_total_bytes
    ))
}

/// Walks the tar in `bytes`, extracting what `choose` takes. Returns the
/// extraction and how many files `choose` passed over.
pub(super) fn walk_tar(
    archive_path: &str,
    bytes: &[u8],
    depth: usize,
    prefix: &str,
    budget: &mut Budget<'_>,
    choose: &mut Chooser<'_>,
) -> Result<(Extraction, usize), ExtractError> {
    let limits = budget.limits;
    if depth >= limits.max_depth {
        return Err(hostile(format!(
            "{archive_path} nests archives more than {} deep",
            limits.max_depth
        )));
    }
    let seen = Cell::new(0);
    let cap = Cell::new(0);
    let mut meter = Meter {
        archive_path,
        seen: &seen,
        cap: &cap,
        counted: 0,
        ratio_cap: limits
            .max_ratio
            .saturating_mul(bytes.len() as u64)
            .max(RATIO_FLOOR_BYTES),
    };
    meter.sync(budget)?;
    let stream = Metered {
        inner: tar_stream(archive_path, bytes)?,
        seen: &seen,
        cap: &cap,
    };
    let mut archive = Archive::new(stream);
    // Raw: GNU long names and PAX records are read here, bounded, rather
    // than buffered whole by the tar crate.
    let mut entries = archive
        .entries()
        .map_err(|e| meter.fail(limits, e))?
        .raw(true);

    let mut out = Extraction {
        archive: true,
        ..Extraction::default()
    };
    let mut passed = 0;
    // What a GNU long-name or PAX record says of the next entry.
    let mut long_name: Option<Vec<u8>> = None;
    let mut pax_size: Option<u64> = None;
    loop {
        meter.sync(budget)?;
        let Some(entry) = entries.next() else { break };
        let mut entry = entry.map_err(|e| meter.fail(limits, e))?;
        let kind = entry.header().entry_type();
        if matches!(
            kind,
            EntryType::GNULongName | EntryType::XHeader | EntryType::GNULongLink
        ) || kind.is_pax_global_extensions()
        {
            if entry.size() > MAX_RECORD_BYTES {
                return Err(hostile(format!(
                    "{archive_path} has a {}-byte name or PAX record",
                    entry.size()
                )));
            }
            let mut record = Vec::new();
            (&mut entry)
                .take(MAX_RECORD_BYTES)
                .read_to_end(&mut record)
                .map_err(|e| meter.fail(limits, e))?;
            match kind {
                EntryType::GNULongName => {
                    let end = record.iter().position(|&b| b == 0).unwrap_or(record.len());
                    record.truncate(end);
                    long_name = Some(record);
                }
                EntryType::XHeader => {
                    let pax = parse_pax(&record)
                        .ok_or_else(|| meter.fail(limits, "a PAX record is malformed"))?;
                    long_name = pax.path.or(long_name);
                    pax_size = pax.size;
                }
                // Link targets are never followed; global records hold
                // nothing docshelf uses.
                _ => {}
            }
            continue;
        }

        budget.entries += 1;
        if budget.entries > limits.max_entries {
            return Err(hostile(format!(
                "more than {} entries (limit max_entries)",
                limits.max_entries
            )));
        }
        let raw_name = match long_name.take() {
            Some(name) => String::from_utf8_lossy(&name).into_owned(),
            None => String::from_utf8_lossy(&entry.path_bytes()).into_owned(),
        };
        if !is_contained(&raw_name) {
            return Err(hostile(format!(
                "entry {raw_name:?} points outside the archive"
            )));
        }
        if let Some(size) = pax_size.take() {
            // The tar crate lays the stream out by the header's size; a
            // PAX size that disagrees would make the two read differently.
            if size != entry.size() {
                return Err(meter.fail(
                    limits,
                    format!("entry {raw_name:?} has two different sizes"),
                ));
            }
        }
        if kind.is_dir() {
            continue;
        }

        let pick = match index_core::validate::file_path(&raw_name) {
            Ok(name) => choose(&name, not_a_file(kind)),
            Err(err) => choose(
                &index_core::validate::cut(&raw_name, 60),
                Some(&err.to_string()),
            ),
        };
        let (path, format) = match pick {
            Pick::Take { path, format } => (format!("{prefix}{path}"), Some(format)),
            Pick::Verbatim { path } => (format!("{prefix}{path}"), None),
            Pick::Skip(reason) => {
                let name = index_core::validate::file_path(&raw_name)
                    .unwrap_or_else(|_| index_core::validate::cut(&raw_name, 60));
                out.skipped.push(Skipped {
                    file_path: format!("{prefix}{name}"),
                    reason,
                });
                continue;
            }
            Pick::Pass => {
                passed += 1;
                continue;
            }
        };
        // A header's size is the tar's own layout, but what is left of the
        // budget bounds what is held all the same.
        let declared = entry.size();
        let (data, held) = read_entry(&path, &mut entry, declared, meter.room(), budget.memory)
            .map_err(|err| match err {
                // `read_entry` names ZIPs; this is the tar's damage.
                ExtractError::CorruptZip(message) => meter.fail(limits, message),
                other => other,
            })?;
        drop(entry);
        meter.sync(budget)?;
        keep(&path, format, data, held, depth, budget, &mut out)?;
    }
    // Read to the stream's end, so that gzip checks its CRC: a damaged
    // archive can otherwise pass for a shorter, valid one.
    io::copy(&mut archive.into_inner(), &mut io::sink()).map_err(|e| meter.fail(limits, e))?;
    meter.sync(budget)?;
    Ok((out, passed))
}

/// What a PAX record says of the next entry.
struct Pax {
    path: Option<Vec<u8>>,
    size: Option<u64>,
}

/// Parses `LEN key=value\n` records; `None` when they are malformed.
fn parse_pax(mut record: &[u8]) -> Option<Pax> {
    let mut pax = Pax {
        path: None,
        size: None,
    };
    while !record.is_empty() && record[0] != 0 {
        let space = record.iter().position(|&b| b == b' ')?;
        let len: usize = std::str::from_utf8(&record[..space]).ok()?.parse().ok()?;
        if len <= space + 1 || len > record.len() || record[len - 1] != b'\n' {
            return None;
        }
        let field = &record[space + 1..len - 1];
        let eq = field.iter().position(|&b| b == b'=')?;
        let (key, value) = (&field[..eq], &field[eq + 1..]);
        match key {
            b"path" => pax.path = Some(value.to_vec()),
            b"size" => pax.size = Some(std::str::from_utf8(value).ok()?.parse().ok()?),
            _ => {}
        }
        record = &record[len..];
    }
    Some(pax)
}

fn open_zip<'b>(path: &str, bytes: &'b [u8]) -> Result<ZipArchive<Cursor<&'b [u8]>>, ExtractError> {
    ZipArchive::new(Cursor::new(bytes)).map_err(|e| corrupt_zip(path, e))
}

fn corrupt_zip(path: &str, err: impl std::fmt::Display) -> ExtractError {
    ExtractError::CorruptZip(format!("{path}: {err}"))
}

/// As `walk_tar`, for a ZIP (old PyPI sdists): the checks `zip.rs` makes
/// on every entry first, then only the chosen entries inflated.
fn walk_zip(
    archive_path: &str,
    bytes: &[u8],
    budget: &mut Budget<'_>,
    choose: &mut Chooser<'_>,
) -> Result<(Extraction, usize), ExtractError> {
    let limits = budget.limits;
    let mut archive = super::zip::open_checked(archive_path, bytes, budget)?;

    let mut out = Extraction {
        archive: true,
        ..Extraction::default()
    };
    let mut passed = 0;
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| corrupt_zip(archive_path, e))?;
        if entry.is_dir() {
            continue;
        }
        let raw_name = entry.name().map_err(|e| corrupt_zip(archive_path, e))?;
        let pick = match index_core::validate::file_path(&raw_name) {
            Ok(name) => choose(&name, None),
            Err(err) => choose(
                &index_core::validate::cut(&raw_name, 60),
                Some(&err.to_string()),
            ),
        };
        let (path, format) = match pick {
            Pick::Take { path, format } => (path, Some(format)),
            Pick::Verbatim { path } => (path, None),
            Pick::Skip(reason) => {
                out.skipped.push(Skipped {
                    file_path: index_core::validate::cut(&raw_name, 60),
                    reason,
                });
                continue;
            }
            Pick::Pass => {
                passed += 1;
                continue;
            }
        };
        let allowed = limits.max_total_bytes - budget.bytes;
        let size = entry.size();
        let (data, held) = read_entry(&path, &mut entry, size, allowed, budget.memory)?;
        budget.bytes += data.len() as u64;
        if budget.bytes > limits.max_total_bytes {
            return Err(archive::too_large(limits));
        }
        drop(entry);
        keep(&path, format, data, held, 0, budget, &mut out)?;
    }
    Ok((out, passed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;

    /// One entry of a test archive.
    enum E<'a> {
        File(&'a str, &'a [u8]),
        Dir(&'a str),
        Symlink(&'a str, &'a str),
        HardLink(&'a str, &'a str),
        Fifo(&'a str),
        /// A name written into the header as is, bypassing the builder's checks.
        RawName(&'a str, &'a [u8]),
    }

    fn header(kind: EntryType, size: u64) -> ::tar::Header {
        let mut h = ::tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        h
    }

    fn tar(entries: &[E<'_>]) -> Vec<u8> {
        let mut b = ::tar::Builder::new(Vec::new());
        for e in entries {
            match *e {
                E::File(name, data) => {
                    let mut h = header(EntryType::Regular, data.len() as u64);
                    b.append_data(&mut h, name, data).unwrap();
                }
                E::Dir(name) => {
                    let mut h = header(EntryType::Directory, 0);
                    b.append_data(&mut h, name, io::empty()).unwrap();
                }
                E::Symlink(name, target) | E::HardLink(name, target) => {
                    let kind = if matches!(e, E::Symlink(..)) {
                        EntryType::Symlink
                    } else {
                        EntryType::Link
                    };
                    let mut h = header(kind, 0);
                    b.append_link(&mut h, name, target).unwrap();
                }
                E::Fifo(name) => {
                    let mut h = header(EntryType::Fifo, 0);
                    b.append_data(&mut h, name, io::empty()).unwrap();
                }
                E::RawName(name, data) => {
                    let mut h = header(EntryType::Regular, data.len() as u64);
                    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
                    h.set_cksum();
                    b.append(&h, data).unwrap();
                }
            }
        }
        b.into_inner().unwrap()
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn tgz(entries: &[E<'_>]) -> Vec<u8> {
        gz(&tar(entries))
    }

    fn paths(x: &Extraction) -> Vec<&str> {
        x.documents.iter().map(|d| d.file_path.as_str()).collect()
    }

    #[test]
    fn documents_keep_their_paths_and_the_rest_is_listed() {
        let long = format!("docs/{}/deep.md", "very-long-folder-name".repeat(8));
        let bytes = tgz(&[
            E::Dir("docs/"),
            E::File("README.md", b"# Hello\n\nWorld."),
            E::File("./docs/guide.html", b"<h1>Guide</h1><p>Steps.</p>"),
            E::File(&long, b"# Deep\n\nA GNU long name."),
            E::File("src/lib.rs", b"fn main() {}"),
        ]);
        let x = extract("pkg.tar.gz", &bytes, &ArchiveLimits::default()).unwrap();
        assert!(x.archive);
        assert_eq!(paths(&x), ["README.md", "docs/guide.html", long.as_str()]);
        assert_eq!(x.documents[0].title.as_deref(), Some("Hello"));
        assert!(x.documents[1].text.contains("Steps."));
        assert_eq!(
            x.skipped,
            [Skipped {
                file_path: "src/lib.rs".into(),
                reason: "unsupported file type".into()
            }]
        );
        // `.tgz`, `.crate` and an already inflated tar read the same.
        let crate_ = extract("x-1.0.0.crate", &bytes, &ArchiveLimits::default()).unwrap();
        assert_eq!(crate_, x);
        let plain = extract(
            "x.tgz",
            &tar(&[E::File("a.md", b"# A")]),
            &ArchiveLimits::default(),
        );
        assert_eq!(paths(&plain.unwrap()), ["a.md"]);
    }

    #[test]
    fn pax_paths_are_read() {
        // A PAX `path` record, as Python's tarfile writes for long or
        // non-ASCII names.
        let name = "docs/ü/überblick.md";
        let record = format!("{} path={name}\n", name.len() + 9);
        assert_eq!(record.len(), name.len() + 9);
        let mut b = ::tar::Builder::new(Vec::new());
        let mut h = header(EntryType::XHeader, record.len() as u64);
        b.append_data(&mut h, "././@PaxHeader", record.as_bytes())
            .unwrap();
        let mut h = header(EntryType::Regular, 3);
        b.append_data(&mut h, "docs/short.md", &b"# U"[..]).unwrap();
        let bytes = gz(&b.into_inner().unwrap());
        let x = extract("p.tgz", &bytes, &ArchiveLimits::default()).unwrap();
        assert_eq!(paths(&x), [name]);
    }

    #[test]
    fn an_entry_outside_the_archive_refuses_it_whole() {
        for bad in ["../evil.md", "/etc/passwd.md", "docs/../../x.md"] {
            let bytes = tgz(&[E::File("ok.md", b"# ok"), E::RawName(bad, b"# bad")]);
            let err = extract("a.tar.gz", &bytes, &ArchiveLimits::default()).unwrap_err();
            assert!(
                matches!(&err, ExtractError::HostileTar(m) if m.contains("outside")),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn links_and_devices_are_skipped_with_a_reason() {
        let bytes = tgz(&[
            E::Symlink("docs/passwd.md", "/etc/passwd"),
            E::HardLink("docs/copy.md", "docs/a.md"),
            E::Fifo("docs/pipe.md"),
            E::File("docs/a.md", b"# A"),
        ]);
        let x = extract("a.tgz", &bytes, &ArchiveLimits::default()).unwrap();
        assert_eq!(paths(&x), ["docs/a.md"]);
        let skipped: Vec<(&str, &str)> = x
            .skipped
            .iter()
            .map(|s| (s.file_path.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(skipped.len(), 3);
        assert_eq!(skipped[0].0, "docs/passwd.md");
        assert!(skipped[0].1.contains("symbolic link"));
        assert!(skipped[1].1.contains("hard link"));
        assert!(skipped[2].1.contains("device or pipe"));
    }

    #[test]
    fn a_gzip_bomb_is_refused_before_it_inflates() {
        let zeros = vec![0u8; 64 * 1024 * 1024];
        let bytes = tgz(&[E::File("bomb.txt", &zeros)]);
        assert!(bytes.len() < 200 * 1024, "{}", bytes.len());
        let err = extract("b.tar.gz", &bytes, &ArchiveLimits::default()).unwrap_err();
        assert!(
            matches!(&err, ExtractError::HostileTar(m) if m.contains("gzip bomb")),
            "{err}"
        );
        // Under max_total_bytes, a too-large archive is refused as such.
        let limits = ArchiveLimits {
            max_total_bytes: 4 * 1024 * 1024,
            max_ratio: 100_000,
            ..ArchiveLimits::default()
        };
        let err = extract("b.tar.gz", &bytes, &limits).unwrap_err();
        assert!(
            matches!(&err, ExtractError::HostileTar(m) if m.contains("max_total_bytes")),
            "{err}"
        );
    }

    #[test]
    fn too_many_entries_are_refused() {
        let names: Vec<String> = (0..20).map(|i| format!("d/{i}.md")).collect();
        let entries: Vec<E<'_>> = names.iter().map(|n| E::File(n, b"# x")).collect();
        let limits = ArchiveLimits {
            max_entries: 10,
            ..ArchiveLimits::default()
        };
        let err = extract("many.tgz", &tgz(&entries), &limits).unwrap_err();
        assert!(err.to_string().contains("max_entries"), "{err}");
    }

    #[test]
    fn damaged_archives_say_so() {
        let good = tgz(&[E::File("a.md", &[b'x'; 20_000]), E::File("b.md", b"# b")]);
        let limits = ArchiveLimits::default();
        // Cut short, garbage, and a corrupted deflate stream.
        let mut flipped = good.clone();
        for b in &mut flipped[20..40] {
            *b ^= 0x5a;
        }
        for bytes in [
            &good[..good.len() / 2],
            b"not a tarball at all",
            &flipped[..],
        ] {
            let err = extract("a.tar.gz", bytes, &limits).unwrap_err();
            assert!(matches!(err, ExtractError::CorruptTar(_)), "{err}");
            assert!(err.to_string().contains("damaged"), "{err}");
        }
        // A header whose checksum is wrong.
        let mut raw = tar(&[E::File("a.md", b"# a")]);
        raw[0] = b'b';
        let err = extract("a.tar.gz", &gz(&raw), &limits).unwrap_err();
        assert!(matches!(err, ExtractError::CorruptTar(_)), "{err}");
    }

    #[test]
    fn archives_nest_both_ways_up_to_the_depth_limit() {
        let inner = tgz(&[E::File("inner.md", b"# Inner")]);
        let mut zip = ::zip::ZipWriter::new(Cursor::new(Vec::new()));
        zip.start_file("docs.tar.gz", ::zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(&inner).unwrap();
        let zip = zip.finish().unwrap().into_inner();
        let outer = tgz(&[E::File("bundle.zip", &zip), E::File("top.md", b"# Top")]);
        let x = extract("o.tgz", &outer, &ArchiveLimits::default()).unwrap();
        assert_eq!(paths(&x), ["bundle.zip/docs.tar.gz/inner.md", "top.md"]);
        let shallow = ArchiveLimits {
            max_depth: 2,
            ..ArchiveLimits::default()
        };
        let err = extract("o.tgz", &outer, &shallow).unwrap_err();
        assert!(err.to_string().contains("deep"), "{err}");
    }

    #[test]
    fn memory_is_asked_for_and_a_refusal_stops() {
        struct Cap(u64, u64);
        impl MemoryGauge for Cap {
            fn grow(&mut self, bytes: u64) -> Result<(), String> {
                if self.0 + bytes > self.1 {
                    return Err("out of memory".into());
                }
                self.0 += bytes;
                Ok(())
            }
            fn shrink(&mut self, bytes: u64) {
                self.0 -= bytes;
            }
        }
        let big = vec![b'a'; 300_000];
        let bytes = tgz(&[E::File("a.txt", &big)]);
        let limits = ArchiveLimits::default();
        let mut ok = Cap(0, 10_000_000);
        extract_archive("a.tgz", &bytes, &limits, &mut ok).unwrap();
        assert!(ok.0 >= 300_000, "the text is held: {}", ok.0);
        let err = extract_archive("a.tgz", &bytes, &limits, &mut Cap(0, 100_000)).unwrap_err();
        assert!(matches!(err, ExtractError::OutOfMemory(_)), "{err}");
    }

    #[test]
    fn chosen_entries_only_and_the_rest_counted() {
        let bytes = tgz(&[
            E::File("p/README.md", b"# P"),
            E::File("p/src/a.py", b"x = 1"),
            E::File("p/src/b.py", b"y = 2"),
            E::Symlink("p/link.md", "README.md"),
        ]);
        let limits = ArchiveLimits::default();
        let files = archive_files("p.tar.gz", &bytes, &limits).unwrap();
        assert_eq!(files, ["p/README.md", "p/src/a.py", "p/src/b.py"]);
        let (x, passed) = extract_chosen(
            "p.tar.gz",
            &bytes,
            &limits,
            &mut super::super::Unmetered,
            &mut |name, _| match name.strip_prefix("p/") {
                Some("README.md") => Pick::Take {
                    path: "README.md".into(),
                    format: Format::Markdown,
                },
                _ => Pick::Pass,
            },
        )
        .unwrap();
        assert_eq!(paths(&x), ["README.md"]);
        assert!(x.skipped.is_empty());
        assert_eq!(passed, 3);
    }

    #[test]
    fn an_oversized_name_record_is_refused_unread() {
        let mut b = ::tar::Builder::new(Vec::new());
        let name = vec![b'a'; 100_000];
        let mut h = header(EntryType::GNULongName, name.len() as u64);
        b.append_data(&mut h, "././@LongLink", &name[..]).unwrap();
        let mut h = header(EntryType::Regular, 3);
        b.append_data(&mut h, "a.md", &b"# a"[..]).unwrap();
        let bytes = gz(&b.into_inner().unwrap());
        let err = extract("a.tgz", &bytes, &ArchiveLimits::default()).unwrap_err();
        assert!(
            matches!(&err, ExtractError::HostileTar(m) if m.contains("100000-byte")),
            "{err}"
        );
    }

    #[test]
    fn pax_records_parse_or_are_refused() {
        let pax = parse_pax(b"30 mtime=1350244992.023960108\n13 path=a.md\n11 size=42\n").unwrap();
        assert_eq!(pax.path.as_deref(), Some(&b"a.md"[..]));
        assert_eq!(pax.size, Some(42));
        assert!(parse_pax(b"99 path=a.md\n").is_none());
        assert!(parse_pax(b"x path=a.md\n").is_none());
    }
}
