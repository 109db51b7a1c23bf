//! Where a redirecting Git server says a repository went.
//!
//! docshelf never follows a Git server's redirect (a `Location` could
//! lead a fetch into the server's own network), but "not a repository"
//! alone leaves the user guessing; the `Location` says where the project
//! moved. git does not print it, so the failed command is run once more
//! with git's own HTTP trace on (headers only, secrets redacted by git),
//! over the same pinned connection, and the header read from the trace.
//! What it names is only shown, never fetched: read as a URL, resolved
//! against the request, http(s) alone, without any user part, and cut to
//! length.

use url::Url;

/// The trace line's prefix git writes for a received header.
const RECEIVED: &str = "<= Recv header: ";

/// The last `Location` header in a `GIT_TRACE_CURL` trace, as written.
pub(super) fn location_in_trace(trace: &str) -> Option<&str> {
    trace
        .lines()
        .filter_map(|line| line.split_once(RECEIVED).map(|(_, header)| header))
        .filter_map(|header| header.split_once(':'))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("location"))
        .map(|(_, value)| value.trim())
        .next_back()
}

/// The repository URL a `Location` answered for `repository`'s refs names:
/// resolved against the refs URL, the refs path (`/info/refs`) and query
/// taken off, without a user part. `None` when it is not an http(s) URL.
pub(super) fn moved_to(repository: &Url, location: &str) -> Option<String> {
    let refs = Url::parse(&format!(
        "{}/info/refs?service=git-upload-pack",
        repository.as_str().trim_end_matches('/')
    ))
    .ok()?;
    let mut to = refs.join(location).ok()?;
    if !matches!(to.scheme(), "http" | "https") || to.host().is_none() {
        return None;
    }
    to.set_query(None);
    to.set_fragment(None);
    let path = to.path().to_owned();
    let path = path.strip_suffix("/info/refs").unwrap_or(&path);
    to.set_path(path);
    let shown = crate::source::userinfo::stripped(to.as_str()).unwrap_or_else(|| to.to_string());
    Some(index_core::validate::cut(&shown, 200))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
07:44:33.163301 http.c:872              <= Recv header: HTTP/1.0 301 Moved Permanently
07:44:33.163320 http.c:872              <= Recv header: Server: BaseHTTP/0.6
07:44:33.163328 http.c:872              <= Recv header: Location: https://git.example.org/new/widgets.git/info/refs?service=git-upload-pack
07:44:33.163340 http.c:872              <= Recv header: Content-Length: 6
";

    #[test]
    fn the_location_is_read_from_the_trace() {
        assert_eq!(
            location_in_trace(TRACE),
            Some("https://git.example.org/new/widgets.git/info/refs?service=git-upload-pack")
        );
        assert_eq!(location_in_trace("=> Send header: Location: x\n"), None);
        let lower = "x <= Recv header: location: /elsewhere.git/info/refs\n";
        assert_eq!(location_in_trace(lower), Some("/elsewhere.git/info/refs"));
    }

    #[test]
    fn the_repository_it_moved_to_is_shown_without_secrets() {
        let repo = Url::parse("http://127.0.0.1:9/widgets.git").unwrap();
        let to = |location: &str| moved_to(&repo, location);
        assert_eq!(
            to("https://git.example.org/new/widgets.git/info/refs?service=git-upload-pack")
                .as_deref(),
            Some("https://git.example.org/new/widgets.git")
        );
        // Relative to the refs URL, as HTTP reads it.
        assert_eq!(
            to("/moved/widgets.git/info/refs?service=git-upload-pack").as_deref(),
            Some("http://127.0.0.1:9/moved/widgets.git")
        );
        assert_eq!(
            to("https://u:hunter2@git.example.org/w.git/info/refs").as_deref(),
            Some("https://git.example.org/w.git")
        );
        assert_eq!(to("file:///etc/passwd"), None);
        assert_eq!(to("ssh://host/repo.git"), None);
    }
}
