//! A URL's user name and password (`https://user:pw@host/…`), which a
//! source may not carry.
//!
//! A source's URL is stored, listed to every reader of its library and
//! quoted in errors, so a password in it would leak to all of them; the
//! secret belongs in a named credential the operator declares, sent only
//! to the host it is bound to. This finds the user part however the URL
//! is written and gives the URL without it, for the error to show.

use url::Url;

/// `raw` without its user name and password, if it carries either; `None`
/// if it carries none.
///
/// Looked for twice: as the URL parser reads `raw` (with or without a
/// `git+` prefix), which finds forms such as `https:user:pw@host` that
/// have no `//`, and in the text's authority (between `://` and the next
/// `/`, `\`, `?` or `#`), which finds a user part even where the rest of
/// the URL does not parse.
pub(crate) fn stripped(raw: &str) -> Option<String> {
    parsed(raw).or_else(|| textual(raw))
}

fn parsed(raw: &str) -> Option<String> {
    let (prefix, rest) = match raw.strip_prefix("git+") {
        Some(rest) => ("git+", rest),
        None => ("", raw),
    };
    let mut url = Url::parse(rest).ok()?;
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    // Neither fails on a URL that has a user part to remove.
    let _ = url.set_password(None);
    let _ = url.set_username("");
    Some(format!("{prefix}{url}"))
}

fn textual(raw: &str) -> Option<String> {
    let start = raw.find("://")? + 3;
    let end = raw[start..]
        .find(['/', '\\', '?', '#'])
        .map_or(raw.len(), |i| start + i);
    // The host follows the last `@`, as the URL standard reads it.
    let at = raw[start..end].rfind('@')?;
    Some(format!("{}{}", &raw[..start], &raw[start + at + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_user_part_is_found_and_removed() {
        for (raw, shown) in [
            (
                "https://user:pw@docs.example.org/guide/",
                "https://docs.example.org/guide/",
            ),
            (
                "https://user@docs.example.org/",
                "https://docs.example.org/",
            ),
            ("https://:pw@docs.example.org/", "https://docs.example.org/"),
            (
                "git+https://u:secret@git.example.org/r",
                "git+https://git.example.org/r",
            ),
            (
                "https://u:secret@example.org/r.git",
                "https://example.org/r.git",
            ),
            ("https:u:secret@example.org/", "https://example.org/"),
            ("https://u:p%40ss@example.org/", "https://example.org/"),
            ("https://a@b:secret@example.org/", "https://example.org/"),
            ("HTTPS://u:secret@example.org", "https://example.org/"),
            // Not a URL the parser takes, but its authority still holds one.
            ("https://u:secret@", "https://"),
            ("ftp://u:secret@example.org/x", "ftp://example.org/x"),
        ] {
            let found = stripped(raw).unwrap_or_else(|| panic!("{raw}: user part not found"));
            assert_eq!(found, shown, "{raw}");
            assert!(
                !found.contains("secret") && !found.contains("pw"),
                "{found}"
            );
        }
    }

    #[test]
    fn urls_without_a_user_part_pass() {
        for raw in [
            "https://docs.example.org/guide/",
            "https://example.org/users/@me/docs",
            "https://example.org/a?b=c@d",
            "https://example.org/#x@y",
            "git+https://git.example.org/team/r",
            "npm:@scope/name@1.0.0",
            "pypi:requests==2.0",
        ] {
            assert_eq!(stripped(raw), None, "{raw}");
        }
    }
}
