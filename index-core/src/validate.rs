//! Validation of user-supplied names and identifiers, shared by every face.
//!
//! Two kinds of check live here:
//!
//! - **Names that are stored** (a library or version being written):
//!   [`library`] and [`version`] allow a small alphabet.
//! - **Identifiers that look something up** (a library or version named in
//!   a search, a document's path, a session id, a query): [`lookup`],
//!   [`session_id`], [`query`], each bounded in bytes and free of control
//!   characters. Why: a probe's multi-megabyte library name was resolved
//!   loosely for seconds and echoed whole in the 404; a NUL inside a name was
//!   normalised away and matched a real library; a 1 MiB session id was
//!   silently replaced by a new one. A limit refuses such a request at once
//!   with a 400, and the message names the limit, never the value whole.
//!
//! File names ([`file_path`]) are normalised to a safe relative path rather
//! than refused, because archives and browsers produce `a\b.md` or
//! `./docs/x.md` innocently; only what leaves nothing safe is refused.

/// Why a name or identifier was refused. Messages never carry the value
/// whole: at most one offending character, or a short cut of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} cannot be empty")]
    Empty { what: &'static str },
    #[error("{what} is longer than {max} characters")]
    TooLong { what: &'static str, max: usize },
    #[error("{what} is {len} bytes long; at most {max} are accepted")]
    TooManyBytes {
        what: &'static str,
        len: usize,
        max: usize,
    },
    #[error("{what} may contain letters, digits, spaces and . _ - + @ only (found {found:?})")]
    BadCharacter { what: &'static str, found: char },
    #[error("{what} cannot contain control or bidirectional-formatting characters (found U+{:04X})", *found as u32)]
    ControlCharacter { what: &'static str, found: char },
    #[error("{what} may contain ASCII letters, digits and . _ - only (found {found:?})")]
    BadIdCharacter { what: &'static str, found: char },
    #[error("\"latest\" is reserved: it means the newest version in searches")]
    ReservedVersion,
    #[error("the file name {shown:?} leaves no safe relative path (no `..`, no absolute paths)")]
    UnsafePath { shown: String },
}

/// The longest library or version name stored, in characters.
const MAX_NAME: usize = 100;
/// The longest library or version named in a lookup, in bytes: a stored
/// name is at most [`MAX_NAME`] characters of at most 4 bytes each; a
/// loose name is not much longer.
pub const MAX_NAME_BYTES: usize = 4 * MAX_NAME;
/// The longest session id, in bytes (ours are 36-byte UUIDs).
pub const MAX_SESSION_ID_BYTES: usize = 128;
/// The longest query, in characters: a huge query string is minutes of
/// work (docs/benchmarks.md), and a question about documentation fits in
/// far less. The limits on what a client sends live here, where they are
/// checked; `search` and `ask` read them.
pub const MAX_QUERY_CHARS: usize = 1000;
/// The longest query or question, in bytes ([`MAX_QUERY_CHARS`] characters
/// of at most 4 bytes each).
pub const MAX_QUERY_BYTES: usize = 4 * MAX_QUERY_CHARS;
/// The longest file path (a document's, or a path prefix), in bytes.
pub const MAX_FILE_PATH_BYTES: usize = 1024;

fn validate(what: &'static str, raw: &str) -> Result<String, NameError> {
    bounded(what, raw, MAX_NAME_BYTES)?;
    let name = raw.trim();
    if name.is_empty() {
        return Err(NameError::Empty { what });
    }
    if name.chars().count() > MAX_NAME {
        return Err(NameError::TooLong {
            what,
            max: MAX_NAME,
        });
    }
    if let Some(found) = name.chars().find(|&c| !is_name_char(c)) {
        return Err(NameError::BadCharacter { what, found });
    }
    Ok(name.to_owned())
}

/// Whether a stored library or version name may hold `c`: letters, digits,
/// spaces and `. _ - + @`. Grant patterns are made of the same (and `*`).
pub fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, ' ' | '.' | '_' | '-' | '+' | '@')
}

/// A library name to store, trimmed.
pub fn library(raw: &str) -> Result<String, NameError> {
    validate("library", raw)
}

/// A version name to store, trimmed; `latest` is reserved.
pub fn version(raw: &str) -> Result<String, NameError> {
    let v = validate("version", raw)?;
    if crate::version::is_latest(&v) {
        return Err(NameError::ReservedVersion);
    }
    Ok(v)
}

/// Whether `c` is a control character or one that breaks, reorders or
/// hides text when shown (the line and paragraph separators U+2028 and
/// U+2029, bidirectional embeddings, overrides and isolates, marks,
/// zero-width characters, the BOM): what makes a name read as something
/// it is not, or a log line as two.
pub fn is_control_or_bidi(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{061C}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// `raw` is at most `max` bytes and has no control or bidi characters.
fn bounded(what: &'static str, raw: &str, max: usize) -> Result<(), NameError> {
    if raw.len() > max {
        return Err(NameError::TooManyBytes {
            what,
            len: raw.len(),
            max,
        });
    }
    if let Some(found) = raw.chars().find(|&c| is_control_or_bidi(c)) {
        return Err(NameError::ControlCharacter { what, found });
    }
    Ok(())
}

/// A library, version or other name given to look something up (it may be
/// loose: resolution finds the stored one), checked before any work: at
/// most [`MAX_NAME_BYTES`], no control characters. `what` names the field
/// in the message. Blank is allowed: callers decide whether it means
/// "not given".
pub fn lookup<'a>(what: &'static str, raw: &'a str) -> Result<&'a str, NameError> {
    bounded(what, raw, MAX_NAME_BYTES)?;
    Ok(raw)
}

/// A name that must be given: as [`lookup`], and not blank.
pub fn required<'a>(what: &'static str, raw: &'a str) -> Result<&'a str, NameError> {
    let name = lookup(what, raw)?;
    if name.trim().is_empty() {
        return Err(NameError::Empty { what });
    }
    Ok(name)
}

/// A document path given to look a document up, or a path prefix:
/// at most [`MAX_FILE_PATH_BYTES`], no control characters.
pub fn path_lookup<'a>(what: &'static str, raw: &'a str) -> Result<&'a str, NameError> {
    bounded(what, raw, MAX_FILE_PATH_BYTES)?;
    Ok(raw)
}

/// Where a stored document, version or library is looked up: the library,
/// then the version, then the file path, each within its limits
/// ([`lookup`], [`path_lookup`]). One sequence for every face, so that a
/// request with two bad parts is refused for the same part (and with the
/// same message) over REST, the dashboard and MCP.
pub fn address(
    library: &str,
    version: Option<&str>,
    file_path: Option<&str>,
) -> Result<(), NameError> {
    lookup("library", library)?;
    if let Some(version) = version {
        lookup("version", version)?;
    }
    if let Some(path) = file_path {
        path_lookup("file_path", path)?;
    }
    Ok(())
}

/// A session id sent back by a client: at most [`MAX_SESSION_ID_BYTES`] of
/// ASCII letters, digits and `. _ -`. Refused rather than replaced, so a
/// client that mangles its id learns it instead of losing its session.
pub fn session_id(raw: &str) -> Result<&str, NameError> {
    id("session_id", raw)
}

/// An id the server made (a session's, a job's) sent back by a client: at
/// most [`MAX_SESSION_ID_BYTES`] of ASCII letters, digits and `. _ -`.
pub fn id<'a>(what: &'static str, raw: &'a str) -> Result<&'a str, NameError> {
    bounded(what, raw, MAX_SESSION_ID_BYTES)?;
    let id = raw.trim();
    if let Some(found) = id
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(NameError::BadIdCharacter { what, found });
    }
    Ok(id)
}

/// A query or question: at most [`MAX_QUERY_BYTES`]. Control characters
/// other than white space are refused; tabs and newlines are words'
/// separators in pasted text.
pub fn query<'a>(what: &'static str, raw: &'a str) -> Result<&'a str, NameError> {
    if raw.len() > MAX_QUERY_BYTES {
        return Err(NameError::TooManyBytes {
            what,
            len: raw.len(),
            max: MAX_QUERY_BYTES,
        });
    }
    if let Some(found) = raw
        .chars()
        .find(|&c| is_control_or_bidi(c) && !c.is_whitespace())
    {
        return Err(NameError::ControlCharacter { what, found });
    }
    Ok(raw)
}

/// An uploaded file's name, or an archive entry's, as a safe relative path
/// (`docs/guide/intro.md`): backslashes become `/`; control and bidi
/// characters are dropped; empty, `.` and `..` components, a leading `/`
/// and a drive letter (`C:`) are removed, so the path never climbs out of
/// its version or reads as absolute. Names are stored and shown to people
/// and agents as addresses: `../../x.md` or a right-to-left override would
/// mislead them. Refused when nothing is left, or when the result is over
/// [`MAX_FILE_PATH_BYTES`].
pub fn file_path(raw: &str) -> Result<String, NameError> {
    const WHAT: &str = "file name";
    let cleaned: String = raw
        .chars()
        .filter(|&c| !is_control_or_bidi(c))
        .map(|c| if c == '\\' { '/' } else { c })
        .collect();
    let mut parts: Vec<&str> = Vec::new();
    for part in cleaned.split('/') {
        let mut part = part.trim();
        if parts.is_empty() {
            // Windows' device prefixes (`\\?\`, `\\.\`) and a drive, with
            // or without a separator after it (`C:\x`, `C:x`), lead nowhere
            // inside the version.
            if part == "?" {
                continue;
            }
            let mut chars = part.chars();
            if let (Some(letter), Some(':')) = (chars.next(), chars.next()) {
                if letter.is_ascii_alphabetic() {
                    part = chars.as_str().trim();
                }
            }
        }
        if part.is_empty() || part == "." || part == ".." {
            continue;
        }
        parts.push(part);
    }
    let path = parts.join("/");
    if path.is_empty() {
        return Err(NameError::UnsafePath {
            shown: cut(raw, 60),
        });
    }
    if path.len() > MAX_FILE_PATH_BYTES {
        return Err(NameError::TooManyBytes {
            what: WHAT,
            len: path.len(),
            max: MAX_FILE_PATH_BYTES,
        });
    }
    Ok(path)
}

/// Every upload's name made a safe relative path ([`file_path`]), where
/// uploads enter the engine: names are stored as documents' addresses and
/// shown to people and agents, so `../../x.md`, `C:\\x.md` or a bidi
/// override must not reach the store.
pub fn upload_names(
    uploads: Vec<crate::job::Upload>,
) -> Result<Vec<crate::job::Upload>, NameError> {
    uploads
        .into_iter()
        .map(|u| {
            Ok(crate::job::Upload {
                name: file_path(&u.name)?,
                bytes: u.bytes,
            })
        })
        .collect()
}

/// The first `chars` characters of `text`, with `…` where it was cut: what
/// a message may show of a value a client sent.
/// Line breaks and tabs become spaces, so the cut is one line; other control
/// and bidi characters are dropped. Every face's messages about what a
/// client or an upstream service sent go through here.
pub fn cut(text: &str, chars: usize) -> String {
    let mut shown: String = text
        .chars()
        .take(chars)
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if is_control_or_bidi(c) => None,
            c => Some(c),
        })
        .collect();
    if text.chars().nth(chars).is_some() {
        shown.push('…');
    }
    shown
}

/// `text` with every control and bidi character ([`is_control_or_bidi`])
/// written out as an escape (`\n`, `\r`, `\t`, else `\u{202E}`), so it
/// shows as one line, in the order it was written: what a log shows of a
/// value a client chose. Unlike [`cut`], nothing is dropped, so an
/// admin reading the log sees what was sent.
///
/// A backslash is left as it is: the escaped text holds no control
/// character, so escaping it again changes nothing, and every view of a
/// log (the store, the engine's listing, a client printing an older
/// server's answer) can apply it without stacking escapes.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_control_or_bidi) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            c if is_control_or_bidi(c) => shown.push_str(&format!("\\u{{{:04X}}}", c as u32)),
            c => shown.push(c),
        }
    }
    std::borrow::Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_refused_for_its_first_bad_part() {
        let long_name = "x".repeat(MAX_NAME_BYTES + 1);
        let long_path = "p".repeat(MAX_FILE_PATH_BYTES + 1);
        assert!(address("git", Some("latest"), Some(&"p".repeat(MAX_NAME_BYTES + 1))).is_ok());
        assert!(address("git", None, None).is_ok());
        let refused = |library: &str, version: Option<&str>, path: Option<&str>| match address(
            library, version, path,
        ) {
            Err(
                NameError::TooManyBytes { what, .. } | NameError::ControlCharacter { what, .. },
            ) => what,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refused(&long_name, Some("a\0b"), Some(&long_path)),
            "library"
        );
        assert_eq!(refused("git", Some("a\0b"), Some(&long_path)), "version");
        assert_eq!(refused("git", Some(&long_name), None), "version");
        assert_eq!(refused("git", Some("1"), Some(&long_path)), "file_path");
        assert_eq!(refused("git", None, Some("a\u{202E}b")), "file_path");
    }

    #[test]
    fn names_are_trimmed_and_checked() {
        assert_eq!(library("  react ").unwrap(), "react");
        assert_eq!(version("18.2.0-rc+1").unwrap(), "18.2.0-rc+1");
        assert_eq!(library(" "), Err(NameError::Empty { what: "library" }));
        assert!(matches!(
            library("a/b"),
            Err(NameError::BadCharacter { found: '/', .. })
        ));
        assert!(matches!(
            library("x'; DROP"),
            Err(NameError::BadCharacter { found: '\'', .. })
        ));
        assert_eq!(version("latest"), Err(NameError::ReservedVersion));
        assert!(library(&"x".repeat(101)).is_err());
    }

    #[test]
    fn lookups_are_bounded_in_bytes_and_never_echoed() {
        let huge = "a".repeat(5 << 20);
        let err = lookup("library", &huge).unwrap_err();
        assert!(matches!(err, NameError::TooManyBytes { len, .. } if len == 5 << 20));
        assert!(err.to_string().len() < 100, "{err}");
        assert_eq!(lookup("library", "Next.js"), Ok("Next.js"));
        assert_eq!(lookup("library", ""), Ok(""));
        assert_eq!(
            required("name", "  "),
            Err(NameError::Empty { what: "name" })
        );
        assert!(path_lookup("file_path", &"p".repeat(MAX_FILE_PATH_BYTES + 1)).is_err());
    }

    #[test]
    fn a_nul_or_bidi_character_in_a_name_is_refused_not_normalised_away() {
        assert_eq!(
            lookup("library", "rea\0ct"),
            Err(NameError::ControlCharacter {
                what: "library",
                found: '\0'
            })
        );
        assert!(lookup("library", "re\u{202E}act").is_err());
        assert!(library("re\u{2066}act").is_err());
        let message = lookup("library", "a\0b").unwrap_err().to_string();
        assert!(message.contains("U+0000"), "{message}");
    }

    #[test]
    fn session_ids_are_short_plain_ascii() {
        assert_eq!(
            session_id("0b6e1c2a-7f3e-4c1d-9a55-2e9f3c1d0a11"),
            Ok("0b6e1c2a-7f3e-4c1d-9a55-2e9f3c1d0a11")
        );
        assert!(matches!(
            session_id(&"s".repeat(1 << 20)),
            Err(NameError::TooManyBytes { .. })
        ));
        assert!(matches!(
            session_id("a b"),
            Err(NameError::BadIdCharacter { found: ' ', .. })
        ));
    }

    #[test]
    fn queries_are_bounded_and_keep_white_space() {
        assert_eq!(query("query", "how\tto\nmerge"), Ok("how\tto\nmerge"));
        assert!(query("query", "a\0b").is_err());
        assert!(query("query", &"q".repeat(MAX_QUERY_BYTES + 1)).is_err());
    }

    #[test]
    fn file_names_become_safe_relative_paths() {
        let ok = |raw: &str| file_path(raw).unwrap();
        assert_eq!(ok("guide/intro.md"), "guide/intro.md");
        assert_eq!(ok("../../x.md"), "x.md");
        assert_eq!(ok("/etc/passwd"), "etc/passwd");
        assert_eq!(ok("C:\\Users\\me\\notes.md"), "Users/me/notes.md");
        assert_eq!(ok("docs\\..\\..\\a.md"), "docs/a.md");
        assert_eq!(ok("./a//b/./c.md"), "a/b/c.md");
        assert_eq!(ok("evil\u{202E}dm.exe"), "evildm.exe");
        assert_eq!(ok("a\u{2066}b\u{2069}\u{200F}.md"), "ab.md");
        assert_eq!(ok("tab\there\0.md"), "tabhere.md");
        assert_eq!(ok("  spaced / name.md "), "spaced/name.md");
        assert_eq!(ok("résumé.md"), "résumé.md");
        assert_eq!(ok("C:x2.md"), "x2.md");
        assert_eq!(ok("\\\\?\\C:\\long.md"), "long.md");
        assert_eq!(ok("\\\\.\\C:\\dev.md"), "dev.md");
        assert_eq!(ok("notes/C:x.md"), "notes/C:x.md");
    }

    #[test]
    fn file_names_with_nothing_safe_left_are_refused() {
        for raw in ["", "..", "../..", "/", "\\", "C:", "\u{202E}", "./."] {
            assert!(
                matches!(file_path(raw), Err(NameError::UnsafePath { .. })),
                "{raw:?}"
            );
        }
        let long = format!("{}.md", "d/".repeat(MAX_FILE_PATH_BYTES));
        assert!(matches!(
            file_path(&long),
            Err(NameError::TooManyBytes { .. })
        ));
        let shown = file_path(&"../".repeat(10_000)).unwrap_err().to_string();
        assert!(shown.len() < 200, "{shown}");
    }

    #[test]
    fn one_line_escapes_what_would_break_or_reorder_a_line() {
        assert_eq!(one_line("react/18"), "react/18");
        assert_eq!(
            one_line("x\n2024-01-01  admin  delete  ok  prod"),
            "x\\n2024-01-01  admin  delete  ok  prod"
        );
        assert_eq!(
            one_line("a\u{202E}b\u{2069}\0\r\t"),
            "a\\u{202E}b\\u{2069}\\u{0000}\\r\\t"
        );
        assert_eq!(one_line("a\u{2028}b"), "a\\u{2028}b");
        let once = one_line("a\u{2066}b\nc");
        assert_eq!(one_line(&once), once, "escaping twice changes nothing");
        assert!(!once.chars().any(is_control_or_bidi));
    }

    #[test]
    fn a_cut_is_one_line_and_says_it_was_cut() {
        assert_eq!(cut("bad\nkey", 300), "bad key");
        assert_eq!(cut("abcdef", 6), "abcdef");
        assert_eq!(cut("abcdéf", 4), "abcd…");
        assert_eq!(cut("a\u{202E}b\0c", 10), "abc");
    }
}
