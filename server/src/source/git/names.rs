//! Which of a repository's documentation files cannot be stored as they
//! are named, and the job's notes saying so.
//!
//! A file's path in the repository is its address in the library: how a
//! reader opens it, how a refresh finds it again, how it is deleted. So a
//! repository's names are held to the rule uploads are
//! ([`index_core::validate::file_path`]), and where that rule would change
//! a name (a bidi override, a newline, a backslash), the file is left out
//! rather than renamed: a renamed file would no longer be where the
//! repository has it. Stored as it was, a name with a right-to-left
//! override could be neither read nor deleted by path, since every lookup
//! refuses such characters. Symbolic links and submodules are left out
//! too (a link is not followed out of the tree). Nothing is left out
//! silently: each reason is one note, with a count and the first few
//! names, escaped so that the characters in question are seen, never
//! acted on.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use index_core::validate::{self, is_control_or_bidi, MAX_FILE_PATH_BYTES};

/// How many names a note shows for each reason.
const SHOWN: usize = 3;

/// Why a documentation file of the tree is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// Not UTF-8: no document address can name it.
    NotUtf8,
    /// A control or bidirectional-formatting character.
    Control,
    /// Longer than a stored path may be.
    TooLong,
    /// Not a plain relative path (a backslash, an empty or `..` part, a
    /// part with spaces at an end, a drive letter).
    NotPlain,
    SymbolicLink,
    Submodule,
}

impl Skip {
    /// Why a file named `raw` (its path's bytes as git listed them) cannot
    /// be stored under that name, if it cannot.
    pub fn of_name(raw: &[u8]) -> Option<Self> {
        let Ok(name) = std::str::from_utf8(raw) else {
            return Some(Self::NotUtf8);
        };
        if name.chars().any(is_control_or_bidi) {
            return Some(Self::Control);
        }
        if name.len() > MAX_FILE_PATH_BYTES {
            return Some(Self::TooLong);
        }
        match validate::file_path(name) {
            Ok(path) if path == name => None,
            _ => Some(Self::NotPlain),
        }
    }

    fn reason(self) -> String {
        match self {
            Self::NotUtf8 => "their names are not UTF-8".to_owned(),
            Self::Control => {
                "their names hold control or bidirectional-formatting characters, which no reader could type back".to_owned()
            }
            Self::TooLong => format!("their names are longer than {MAX_FILE_PATH_BYTES} bytes"),
            Self::NotPlain => {
                "their names are not plain relative paths (a backslash, an empty or `..` part, spaces at an end of a part), which uploads would rename".to_owned()
            }
            Self::SymbolicLink => "they are symbolic links, which are not followed".to_owned(),
            Self::Submodule => "they are submodules, whose repositories are not fetched".to_owned(),
        }
    }
}

/// The documentation files left out, by reason: counted, the first few
/// names kept (escaped) for the notes.
#[derive(Debug, Default)]
pub struct LeftOut {
    by_reason: BTreeMap<Skip, (usize, Vec<String>)>,
}

impl LeftOut {
    /// Counts the file named `raw` as left out for `why`.
    pub fn add(&mut self, why: Skip, raw: &[u8]) {
        let (count, shown) = self.by_reason.entry(why).or_default();
        *count += 1;
        if shown.len() < SHOWN {
            shown.push(escaped(raw));
        }
    }

    /// How many files were left out, for every reason.
    pub fn total(&self) -> usize {
        self.by_reason.values().map(|(count, _)| count).sum()
    }

    /// One note per reason.
    pub fn notes(&self) -> Vec<String> {
        self.by_reason
            .iter()
            .map(|(why, (count, shown))| {
                let files = if *count == 1 { "file" } else { "files" };
                let more = match count - shown.len() {
                    0 => String::new(),
                    more => format!(" and {more} more"),
                };
                format!(
                    "{count} documentation {files} left out because {}: {}{more}",
                    why.reason(),
                    shown.join(", ")
                )
            })
            .collect()
    }
}

/// `raw` quoted, with every control or bidi character written as an
/// escape (`\n`, `\u{202e}`), and bytes that are not UTF-8 as `\xNN`,
/// cut to a length a note can hold.
pub fn escaped(raw: &[u8]) -> String {
    let mut shown = String::from("\"");
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => shown.push_str("\\n"),
                '\r' => shown.push_str("\\r"),
                '\t' => shown.push_str("\\t"),
                '"' => shown.push_str("\\\""),
                '\\' => shown.push_str("\\\\"),
                c if is_control_or_bidi(c) => {
                    let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
                }
                c => shown.push(c),
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(shown, "\\x{byte:02x}");
        }
    }
    shown.push('"');
    validate::cut(&shown, 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_upload_rule_would_change_are_left_out() {
        assert_eq!(Skip::of_name(b"docs/guide/intro.md"), None);
        assert_eq!(
            Skip::of_name("docs/caf\u{e9} cr\u{e8}me.md".as_bytes()),
            None
        );
        assert_eq!(
            Skip::of_name("docs/evil\u{202e}dm.md".as_bytes()),
            Some(Skip::Control)
        );
        assert_eq!(Skip::of_name(b"docs/new\nline.md"), Some(Skip::Control));
        assert_eq!(Skip::of_name(b"docs/a\\b.md"), Some(Skip::NotPlain));
        assert_eq!(Skip::of_name(b"docs/trailing .md "), Some(Skip::NotPlain));
        assert_eq!(Skip::of_name(b"docs/\xff.md"), Some(Skip::NotUtf8));
        let long = format!("docs/{}.md", "x".repeat(MAX_FILE_PATH_BYTES));
        assert_eq!(Skip::of_name(long.as_bytes()), Some(Skip::TooLong));
    }

    #[test]
    fn escaped_names_show_what_they_hide() {
        assert_eq!(
            escaped("docs/evil\u{202e}dm.md".as_bytes()),
            "\"docs/evil\\u{202e}dm.md\""
        );
        assert_eq!(escaped(b"a\nb\x1b.md"), "\"a\\nb\\u{1b}.md\"");
        assert_eq!(escaped(b"x\xff\"y"), "\"x\\xff\\\"y\"");
        let shown = escaped("\u{200b}\u{2066}".as_bytes());
        assert!(!shown.chars().any(is_control_or_bidi), "{shown}");
    }

    #[test]
    fn notes_count_each_reason_and_show_a_few_names() {
        let mut left = LeftOut::default();
        left.add(Skip::SymbolicLink, b"docs/link.md");
        for i in 0..5 {
            left.add(Skip::Control, format!("docs/{i}\u{202e}.md").as_bytes());
        }
        assert_eq!(left.total(), 6);
        let notes = left.notes();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("5 documentation files left out"),
            "{notes:?}"
        );
        assert!(notes[0].contains("\"docs/0\\u{202e}.md\""), "{notes:?}");
        assert!(notes[0].ends_with("and 2 more"), "{notes:?}");
        assert!(
            notes[1].starts_with("1 documentation file left out because they are symbolic links")
        );
        assert!(!notes.concat().chars().any(is_control_or_bidi));
    }
}
