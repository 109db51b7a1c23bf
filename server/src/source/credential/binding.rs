//! Where a named credential may be sent: hosts, or URL prefixes, that the
//! operator bound it to.
//!
//! Every URL a secret would go to is checked here: the repository or start
//! page a source names (after `--rewrite-url`, so a mirror receives it only
//! when the mirror is bound too), and every page and redirect of a crawl.

use url::Url;

/// One place a credential may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// A host, over http or https, on the port given, else on the scheme's
    /// default port (80, 443): another port of a host may be another
    /// service, run by someone else.
    Host { host: String, port: Option<u16> },
    /// Everything under a URL: the same scheme, host and port, and a path
    /// that is the prefix's or continues it past a `/`.
    Prefix(Url),
}

impl Bound {
    /// Reads `host`, `host:port` or an http(s) URL prefix, as the URL
    /// parser writes them (host names lower-cased, IDNA applied).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.contains("://") {
            let url = Url::parse(raw).map_err(|e| format!("{raw:?} is not a URL: {e}"))?;
            if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
                return Err(format!("{raw:?} is not an http(s) URL"));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err(format!("{raw:?} holds a user or password"));
            }
            if url.query().is_some() || url.fragment().is_some() {
                return Err(format!("{raw:?}: a prefix has no query or fragment"));
            }
            return Ok(Self::Prefix(url));
        }
        let url = Url::parse(&format!("http://{raw}/"))
            .ok()
            .filter(|u| u.path() == "/" && u.username().is_empty() && u.password().is_none())
            .ok_or_else(|| format!("{raw:?} is neither a host[:port] nor an http(s) URL"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("{raw:?} names no host"))?
            .to_owned();
        // `http://h:80/` parses with no port: ask the text whether one was given.
        let port = url
            .port()
            .or_else(|| raw.rsplit_once(':').and_then(|(_, p)| p.parse().ok()));
        Ok(Self::Host { host, port })
    }

    /// Whether a request for `url` may carry the credential.
    pub fn admits(&self, url: &Url) -> bool {
        if !matches!(url.scheme(), "http" | "https") {
            return false;
        }
        match self {
            Self::Host { host, port } => {
                let Some(at) = url.host_str() else {
                    return false;
                };
                let at_port = url.port_or_known_default();
                at == host
                    && match port {
                        Some(port) => at_port == Some(*port),
                        None => url.port().is_none(),
                    }
            }
            Self::Prefix(prefix) => {
                if url.scheme() != prefix.scheme()
                    || url.host_str() != prefix.host_str()
                    || url.port_or_known_default() != prefix.port_or_known_default()
                {
                    return false;
                }
                let (base, path) = (prefix.path(), url.path());
                path == base
                    || (base.ends_with('/') && path.starts_with(base))
                    || path
                        .strip_prefix(base)
                        .is_some_and(|rest| rest.starts_with('/'))
            }
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Host {
                host,
                port: Some(port),
            } => write!(f, "{host}:{port}"),
            Self::Host { host, port: None } => f.write_str(host),
            Self::Prefix(url) => f.write_str(url.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admits(bound: &str, url: &str) -> bool {
        Bound::parse(bound)
            .unwrap()
            .admits(&Url::parse(url).unwrap())
    }

    #[test]
    fn a_host_admits_its_default_ports_or_the_one_given() {
        assert!(admits(
            "GitLab.Example.com",
            "https://gitlab.example.com/a/b.git"
        ));
        assert!(admits("gitlab.example.com", "http://gitlab.example.com/x"));
        assert!(!admits(
            "gitlab.example.com",
            "https://gitlab.example.com:8443/x"
        ));
        assert!(!admits("gitlab.example.com", "https://evil.example.com/x"));
        assert!(!admits(
            "gitlab.example.com",
            "https://gitlab.example.com.evil.io/x"
        ));
        assert!(admits("127.0.0.1:9418", "http://127.0.0.1:9418/r.git"));
        assert!(!admits("127.0.0.1:9418", "http://127.0.0.1:9419/r.git"));
        assert!(admits("git.lan:443", "https://git.lan/r.git"));
        assert!(admits("[::1]:8080", "http://[::1]:8080/r.git"));
    }

    #[test]
    fn a_prefix_admits_what_lies_under_it_alone() {
        let team = "https://git.example.com/team/";
        assert!(admits(team, "https://git.example.com/team/docs.git"));
        assert!(!admits(team, "https://git.example.com/teammate/docs.git"));
        assert!(!admits(team, "http://git.example.com/team/docs.git"));
        assert!(!admits(team, "https://git.example.com:444/team/docs.git"));
        let repo = "https://git.example.com/team/docs";
        assert!(admits(repo, "https://git.example.com/team/docs"));
        assert!(admits(repo, "https://git.example.com/team/docs/info/refs"));
        assert!(!admits(repo, "https://git.example.com/team/docs-private"));
    }

    #[test]
    fn bindings_that_are_not_places_are_refused() {
        for bad in [
            "",
            "ftp://x/",
            "https://u:p@git.example.com/",
            "host/path",
            "https://x/?a=1",
            "a b",
        ] {
            assert!(Bound::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Bound::parse("Git.Lan:8443").unwrap().to_string(),
            "git.lan:8443"
        );
    }
}
