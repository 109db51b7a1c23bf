//! Where a package says its documentation lives, read from the package
//! archive itself: an sdist's `PKG-INFO` (`Home-page`, `Project-URL`), an
//! npm tarball's `package.json` (`repository`, `homepage`), a crate's
//! `Cargo.toml` (`repository`, `documentation`, `homepage`). The archive is
//! what every registry serves wherever installing works, so this needs no
//! registry API beside it.

use std::borrow::Cow;
use std::io::Read;

use crate::package::Registry;

/// The most bytes of the metadata file read.
const MAX_META_BYTES: u64 = 1024 * 1024;
/// Entries of a tar looked through for it, at most (it comes first in
/// every archive the registries build).
const MAX_ENTRIES_SEEN: usize = 5_000;

/// The links a package's metadata gives, as written there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageLinks {
    /// The source repository, where the metadata names one.
    pub repository: Option<String>,
    /// The documentation site.
    pub documentation: Option<String>,
    pub homepage: Option<String>,
    /// Which field each came from, for the job's notes (`Project-URL: Source`).
    pub fields: Vec<(String, String)>,
}

/// Reads the metadata of the archive `file_name` (`.tar.gz`, `.tgz`,
/// `.crate`, `.zip`). An archive without it gives no links.
pub fn package_links(file_name: &str, bytes: &[u8]) -> PackageLinks {
    let found = if file_name.ends_with(".zip") {
        zip_member(bytes)
    } else {
        tar_member(bytes)
    };
    match found {
        Some(("PKG-INFO", text)) => from_pkg_info(&text),
        Some(("package.json", text)) => from_package_json(&text),
        Some((_, text)) => from_cargo_toml(&text),
        None => PackageLinks::default(),
    }
}

/// Whether `path` (`top/NAME`) is a metadata file at the archive's top.
fn metadata_name(path: &str) -> Option<&'static str> {
    let (_, name) = path.split_once('/')?;
    match name {
        "PKG-INFO" => Some("PKG-INFO"),
        "package.json" => Some("package.json"),
        "Cargo.toml" => Some("Cargo.toml"),
        _ => None,
    }
}

fn tar_member(bytes: &[u8]) -> Option<(&'static str, String)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    for entry in archive.entries().ok()?.take(MAX_ENTRIES_SEEN) {
        let entry = entry.ok()?;
        let path = entry.path().ok()?.to_string_lossy().into_owned();
        if let Some(name) = metadata_name(&path) {
            let mut text = String::new();
            entry.take(MAX_META_BYTES).read_to_string(&mut text).ok()?;
            return Some((name, text));
        }
    }
    None
}

fn zip_member(bytes: &[u8]) -> Option<(&'static str, String)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).ok()?;
    let name = archive
        .file_names()
        .take(MAX_ENTRIES_SEEN)
        .filter_map(Result::ok)
        .find(|n| metadata_name(n) == Some("PKG-INFO"))?
        .into_owned();
    let file = archive.by_name(&name).ok()?;
    let mut text = String::new();
    file.take(MAX_META_BYTES).read_to_string(&mut text).ok()?;
    Some(("PKG-INFO", text))
}

/// Core metadata (PEP 566): the header lines before the description.
fn from_pkg_info(text: &str) -> PackageLinks {
    let mut links = PackageLinks::default();
    for line in text.lines().take_while(|l| !l.is_empty()) {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "home-page" if value != "UNKNOWN" && !value.is_empty() => {
                links.note("Home-page", value);
                links.homepage.get_or_insert_with(|| value.to_owned());
            }
            "project-url" => {
                let Some((label, url)) = value.split_once(',') else {
                    continue;
                };
                let (label, url) = (label.trim(), url.trim());
                let squashed = label.to_ascii_lowercase().replace([' ', '-', '_'], "");
                let slot = match squashed.as_str() {
                    "source" | "sourcecode" | "repository" | "code" | "github" | "gitlab" => {
                        &mut links.repository
                    }
                    "documentation" | "docs" => &mut links.documentation,
                    "homepage" => &mut links.homepage,
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = Some(url.to_owned());
                    links.note(&format!("Project-URL: {label}"), url);
                }
            }
            _ => {}
        }
    }
    links
}

fn from_package_json(text: &str) -> PackageLinks {
    let mut links = PackageLinks::default();
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return links;
    };
    let repository = match &json["repository"] {
        serde_json::Value::String(s) => Some(s.clone()),
        other => other["url"].as_str().map(str::to_owned),
    };
    if let Some(url) = repository {
        links.note("repository", &url);
        links.repository = Some(url);
    }
    if let Some(url) = json["homepage"].as_str() {
        links.note("homepage", url);
        links.homepage = Some(url.to_owned());
    }
    links
}

/// The `[package]` table's `repository`, `documentation` and `homepage`,
/// read line by line: registries normalise `Cargo.toml` to one
/// `key = "value"` per line.
fn from_cargo_toml(text: &str) -> PackageLinks {
    let mut links = PackageLinks::default();
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        let slot = match key.trim() {
            "repository" => &mut links.repository,
            "documentation" => &mut links.documentation,
            "homepage" => &mut links.homepage,
            _ => continue,
        };
        *slot = Some(value.to_owned());
        let key = key.trim().to_owned();
        links.note(&key, value);
    }
    links
}

impl PackageLinks {
    fn note(&mut self, field: &str, value: &str) {
        self.fields.push((field.to_owned(), value.to_owned()));
    }

    /// The documentation sites to try, in order, each with what named
    /// it: the `documentation` field (PyPI's `Project-URL: Documentation`),
    /// then a home page that is not a forge's project page (npm's
    /// `homepage` is often the docs site). A crate's are its own
    /// documentation site, if it names one other than docs.rs, then docs.rs
    /// pinned to `version`: docs.rs builds every crate's documentation and
    /// keeps each release at its own address, while a crate's home page is
    /// its project's website (tokio.rs), not its API.
    pub fn documentation_sites(
        &self,
        registry: Registry,
        name: &str,
        version: &str,
    ) -> Vec<(String, String)> {
        let field = |url: &str| self.field_of(url).unwrap_or("its metadata").to_owned();
        let named = self.documentation.iter().chain(
            self.homepage
                .iter()
                .filter(|h| registry != Registry::Crates && !is_forge_page(h)),
        );
        let mut sites: Vec<(String, String)> = Vec::new();
        for url in named.filter(|u| site_host(u).is_some()) {
            if registry == Registry::Crates && site_host(url).as_deref() == Some("docs.rs") {
                continue;
            }
            let bare = url.split('#').next().unwrap_or(url);
            if !sites.iter().any(|(u, _)| u == bare) {
                sites.push((bare.to_owned(), field(url)));
            }
        }
        if registry == Registry::Crates {
            let why = match self.documentation.as_deref() {
                Some(u) if site_host(u).as_deref() == Some("docs.rs") => field(u),
                _ => "docs.rs, where every crate's documentation is built".to_owned(),
            };
            // The crate's page itself, as its own pages link to it (not
            // the folder, which would be a second address of one page).
            let module = name.replace('-', "_");
            let url = format!("https://docs.rs/{name}/{version}/{module}/index.html");
            sites.push((url, why));
        }
        sites
    }

    /// Which field named `url`, if one did.
    pub fn field_of(&self, url: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(_, v)| v == url)
            .map(|(f, _)| f.as_str())
    }
}

/// The Git forges whose project pages are repositories.
const FORGES: [&str; 4] = ["github.com", "gitlab.com", "codeberg.org", "bitbucket.org"];
/// Registries' package pages: where a package is listed, not documented.
const PACKAGE_PAGES: [&str; 4] = ["pypi.org", "npmjs.com", "crates.io", "lib.rs"];

/// The host of an http(s) URL, lower case, without a leading `www.`.
fn site_host(raw: &str) -> Option<String> {
    let url = url::Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.to_ascii_lowercase();
    Some(host.strip_prefix("www.").map(str::to_owned).unwrap_or(host))
}

/// Whether `url` is a forge's project page (or a registry's package
/// page), which is where the code is, not its documentation.
fn is_forge_page(url: &str) -> bool {
    site_host(url)
        .is_some_and(|h| FORGES.contains(&h.as_str()) || PACKAGE_PAGES.contains(&h.as_str()))
}

/// A repository URL as Git fetches it over HTTP(S), from the forms
/// package metadata writes it in:
///
/// - `git+https://…`, `git://…`, `ssh://…` and Git's scp-like
///   `git@host:owner/name.git`, and npm's shorthands `github:owner/name`
///   and `owner/name`, all become `https://host/…` (an `http://` URL stays
///   `http://`);
/// - a forge project URL (GitHub, GitLab, Codeberg, Bitbucket) is cut to
///   `owner/name`, without `.git` or more path (`…/tree/main/docs`);
///   another host keeps its whole path;
/// - what only the original scheme reads is dropped: a Git or SSH port, a
///   user and password, a query, a fragment.
///
/// `None` for another scheme, or a URL that names no repository.
pub fn https_repository(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let raw = raw.strip_prefix("git+").unwrap_or(raw);
    let url = url::Url::parse(&spelled_as_url(raw)).ok()?;
    let scheme = match url.scheme() {
        "http" => "http",
        "https" | "git" | "ssh" => "https",
        _ => return None,
    };
    // Only http(s) URLs have their host lower-cased by the parser.
    let host = url.host_str()?.to_ascii_lowercase();
    let port = match (url.scheme(), url.port()) {
        ("http" | "https", Some(port)) => format!(":{port}"),
        _ => String::new(),
    };
    let segments: Vec<&str> = url.path_segments()?.filter(|s| !s.is_empty()).collect();
    let forge = FORGES.contains(&host.strip_prefix("www.").unwrap_or(&host));
    let path = match segments[..] {
        [] => return None,
        [owner, name, ..] if forge => {
            format!("{owner}/{}", name.strip_suffix(".git").unwrap_or(name))
        }
        _ if forge => return None,
        _ => segments.join("/"),
    };
    Some(format!("{scheme}://{host}{port}/{path}"))
}

/// npm's shorthands (`github:owner/name`, a bare `owner/name`) and Git's
/// scp-like addresses written as URLs; anything else as given. Git's
/// `git@host:path` has no port (`git@host:10up/x` is owner `10up`); in
/// `ssh://git@host:…` a colon followed by digits up to the next `/` is a
/// port, anything else the scp-like path.
fn spelled_as_url(raw: &str) -> Cow<'_, str> {
    let scp_like = |host: &str, path: &str| format!("ssh://git@{host}/{path}");
    if let Some(rest) = raw.strip_prefix("github:") {
        format!("https://github.com/{rest}").into()
    } else if let Some((host, path)) = raw.strip_prefix("git@").and_then(|r| r.split_once(':')) {
        scp_like(host, path).into()
    } else if let Some((host, path)) = raw
        .strip_prefix("ssh://git@")
        .and_then(|r| r.split_once(':'))
        .filter(|(_, path)| !path.split('/').next().is_some_and(is_port))
    {
        scp_like(host, path).into()
    } else if raw.split('/').count() == 2 && !raw.contains(':') {
        format!("https://github.com/{raw}").into()
    } else {
        raw.into()
    }
}

fn is_port(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkg_info_names_its_project_urls() {
        let text =
            "Metadata-Version: 2.1\nName: six\nHome-page: https://github.com/benjaminp/six\n\
                    Project-URL: Documentation, https://six.readthedocs.io/\n\
                    Project-URL: Source Code, https://github.com/benjaminp/six\n\nDescription";
        let links = from_pkg_info(text);
        assert_eq!(
            links.repository.as_deref(),
            Some("https://github.com/benjaminp/six")
        );
        assert_eq!(
            links.documentation.as_deref(),
            Some("https://six.readthedocs.io/")
        );
        assert_eq!(
            links.homepage.as_deref(),
            Some("https://github.com/benjaminp/six")
        );
        assert_eq!(
            links.field_of("https://six.readthedocs.io/"),
            Some("Project-URL: Documentation")
        );
    }

    #[test]
    fn package_json_and_cargo_toml_name_theirs() {
        let npm = from_package_json(
            r#"{"name":"x","repository":{"type":"git","url":"git+https://github.com/o/x.git"},"homepage":"https://x.dev"}"#,
        );
        assert_eq!(
            npm.repository.as_deref(),
            Some("git+https://github.com/o/x.git")
        );
        let cargo = from_cargo_toml(
            "[package]\nname = \"itoa\"\nrepository = \"https://github.com/dtolnay/itoa\"\n\
             documentation = \"https://docs.rs/itoa\"\n[dependencies]\nrepository = \"no\"\n",
        );
        assert_eq!(
            cargo.repository.as_deref(),
            Some("https://github.com/dtolnay/itoa")
        );
        assert_eq!(cargo.documentation.as_deref(), Some("https://docs.rs/itoa"));
    }

    #[test]
    fn the_docs_site_is_named_or_docs_rs_pinned_to_the_release() {
        let pypi = from_pkg_info(
            "Name: six\nHome-page: https://github.com/benjaminp/six\n\
             Project-URL: Documentation, https://six.readthedocs.io/\n\nx",
        );
        assert_eq!(
            pypi.documentation_sites(Registry::PyPi, "six", "1.16.0"),
            [(
                "https://six.readthedocs.io/".to_owned(),
                "Project-URL: Documentation".to_owned()
            )]
        );
        let urls = |links: &PackageLinks, registry, name: &str| -> Vec<String> {
            links
                .documentation_sites(registry, name, "1.0.1")
                .into_iter()
                .map(|(u, _)| u)
                .collect()
        };
        let npm =
            from_package_json(r#"{"repository":"o/x","homepage":"https://github.com/o/x#readme"}"#);
        assert!(urls(&npm, Registry::Npm, "x").is_empty());
        let npm = from_package_json(r#"{"homepage":"https://zod.dev/#intro"}"#);
        assert_eq!(urls(&npm, Registry::Npm, "zod"), ["https://zod.dev/"]);
        let cargo = from_cargo_toml("[package]\ndocumentation = \"https://docs.rs/serde-json\"\n");
        assert_eq!(
            cargo.documentation_sites(Registry::Crates, "serde-json", "1.0.1"),
            [(
                "https://docs.rs/serde-json/1.0.1/serde_json/index.html".to_owned(),
                "documentation".to_owned()
            )]
        );
        let upper = from_cargo_toml("[package]\ndocumentation = \"https://Docs.rs:443/x\"\n");
        assert_eq!(
            urls(&upper, Registry::Crates, "x"),
            ["https://docs.rs/x/1.0.1/x/index.html"]
        );
        let docs_rs = "https://docs.rs/itoa/1.0.1/itoa/index.html";
        assert_eq!(
            urls(&PackageLinks::default(), Registry::Crates, "itoa"),
            [docs_rs]
        );
        // A crate's home page is its project's site, not its API: docs.rs.
        let tokio = from_cargo_toml("[package]\nhomepage = \"https://tokio.rs\"\n");
        assert_eq!(
            urls(&tokio, Registry::Crates, "tokio"),
            ["https://docs.rs/tokio/1.0.1/tokio/index.html"]
        );
        // Its own documentation site first, docs.rs if that fails.
        let own = from_cargo_toml("[package]\ndocumentation = \"https://x.dev/api\"\n");
        assert_eq!(
            urls(&own, Registry::Crates, "x"),
            ["https://x.dev/api", "https://docs.rs/x/1.0.1/x/index.html"]
        );
    }

    #[test]
    fn repository_urls_become_https() {
        for (raw, want) in [
            (
                "git@github.com:stevemao/left-pad.git",
                "https://github.com/stevemao/left-pad",
            ),
            ("git+https://github.com/o/x.git", "https://github.com/o/x"),
            ("git://github.com/o/x.git", "https://github.com/o/x"),
            ("github:o/x", "https://github.com/o/x"),
            ("o/x", "https://github.com/o/x"),
            (
                "https://github.com/o/x/tree/main/docs",
                "https://github.com/o/x",
            ),
            (
                "https://git.example.org/team/x.git",
                "https://git.example.org/team/x.git",
            ),
            ("ssh://git@github.com:o/x.git", "https://github.com/o/x"),
            (
                "ssh://git@git.example.org:2222/team/x.git",
                "https://git.example.org/team/x.git",
            ),
            (
                "http://git.example.org:8080/team/x/",
                "http://git.example.org:8080/team/x",
            ),
            ("https://github.com/o/x#readme", "https://github.com/o/x"),
            // Owners may begin with a digit; only ssh:// URLs have ports.
            ("git@github.com:10up/x.git", "https://github.com/10up/x"),
            (
                "ssh://git@github.com:3box/3box-js.git",
                "https://github.com/3box/3box-js",
            ),
            ("git@host.org:2222/x.git", "https://host.org/2222/x.git"),
            ("git@GitHub.com:o/x.git", "https://github.com/o/x"),
            (
                "https://www.github.com/o/x.git/",
                "https://www.github.com/o/x",
            ),
            (
                "https://user:secret@git.example.org/x.git?ref=1",
                "https://git.example.org/x.git",
            ),
        ] {
            assert_eq!(https_repository(raw).as_deref(), Some(want), "{raw}");
        }
        for refused in [
            "file:///etc",
            "https://github.com/o",
            "https://git.example.org/",
            "not a url",
        ] {
            assert_eq!(https_repository(refused), None, "{refused}");
        }
    }
}
