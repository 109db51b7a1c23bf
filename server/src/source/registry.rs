//! A package's documentation from its registry: which release, where its
//! archive is, and the archive itself, checked against the digest the
//! registry publishes for it.
//!
//! Each registry is read through the interface that serves installers, so
//! it answers wherever installing works: PyPI's Simple API (JSON, PEP 691),
//! the npm registry's version documents, and crates.io's sparse index with
//! its static download host.

use base64::Engine as _;
use ingest_core::package::{pypi_normalized, PackageSpec, Registry};
use serde::Deserialize;
use sha2::{Digest, Sha256, Sha512};
use url::Url;

use super::fetch::{FetchError, Fetcher};

/// The largest package archive downloaded.
pub const MAX_ARCHIVE_BYTES: u64 = 100 * 1024 * 1024;

const PYPI_SIMPLE: &str = "https://pypi.org/simple/";
const NPM_REGISTRY: &str = "https://registry.npmjs.org/";
const CRATES_INDEX: &str = "https://index.crates.io/";
const CRATES_DOWNLOAD: &str = "https://static.crates.io/crates/";

/// Why a package's archive could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{registry} has no package {name:?}")]
    NoPackage {
        registry: &'static str,
        name: String,
    },
    #[error("{registry} has no release {version:?} of {name} (newest: {newest})")]
    NoRelease {
        registry: &'static str,
        name: String,
        version: String,
        newest: String,
    },
    #[error("{registry} lists no source archive for {name} {version}")]
    NoArchive {
        registry: &'static str,
        name: String,
        version: String,
    },
    #[error("the archive of {0} does not match the digest its registry publishes; not used")]
    Digest(String),
    #[error("cannot read {registry}'s answer: {why}")]
    Answer { registry: &'static str, why: String },
    #[error("cannot fetch from {registry}: {err}")]
    Fetch {
        registry: &'static str,
        err: FetchError,
    },
}

/// Finds `spec`'s release: the one it names, else the newest stable one.
#[tracing::instrument(skip(fetcher), fields(package = %spec))]
pub async fn resolve(fetcher: &Fetcher, spec: &PackageSpec) -> Result<Release, RegistryError> {
    match spec.registry {
        Registry::PyPi => pypi(fetcher, spec).await,
        Registry::Npm => npm(fetcher, spec).await,
        Registry::Crates => crates(fetcher, spec).await,
    }
}

/// Downloads `release`'s archive and checks it against the registry's
/// digest.
#[tracing::instrument(skip(fetcher, release), fields(archive = %release.file_name))]
pub async fn download(fetcher: &Fetcher, release: &Release) -> Result<Vec<u8>, RegistryError> {
    let body = fetcher
        .with_max_bytes(MAX_ARCHIVE_BYTES)
        .get_body(&release.url)
        .await
        .map_err(|err| RegistryError::Fetch {
            registry: release.registry,
            err,
        })?;
    if !release.digest.matches(&body.bytes) {
        return Err(RegistryError::Digest(release.file_name.clone()));
    }
    Ok(body.bytes)
}

/// One release of a package, and where its archive is.
#[derive(Debug, Clone)]
pub struct Release {
    pub registry: &'static str,
    pub version: String,
    pub url: Url,
    /// The archive's file name (`attrs-24.2.0.tar.gz`), which says how to
    /// read it.
    pub file_name: String,
    digest: Checksum,
}

/// The digest a registry publishes for an archive.
#[derive(Debug, Clone)]
enum Checksum {
    Sha256(Vec<u8>),
    Sha512(Vec<u8>),
}

impl Checksum {
    fn matches(&self, bytes: &[u8]) -> bool {
        match self {
            Self::Sha256(want) => Sha256::digest(bytes).as_slice() == want.as_slice(),
            Self::Sha512(want) => Sha512::digest(bytes).as_slice() == want.as_slice(),
        }
    }
}

fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// GETs `url` and reads it as JSON; a 404 is the package missing.
async fn json<T: for<'de> Deserialize<'de>>(
    fetcher: &Fetcher,
    registry: &'static str,
    name: &str,
    url: &Url,
    accept: Option<&'static str>,
) -> Result<T, RegistryError> {
    let body = fetcher
        .get_with_accept(url, accept)
        .await
        .map_err(|err| match err {
            FetchError::Status(404) => RegistryError::NoPackage {
                registry,
                name: name.to_owned(),
            },
            err => RegistryError::Fetch { registry, err },
        })?;
    serde_json::from_slice(&body.bytes).map_err(|e| RegistryError::Answer {
        registry,
        why: e.to_string(),
    })
}

fn url(base: &str, path: &str) -> Result<Url, RegistryError> {
    Url::parse(base)
        .and_then(|b| b.join(path))
        .map_err(|e| RegistryError::Answer {
            registry: "docshelf",
            why: e.to_string(),
        })
}

/// The newest version that is not a pre-release, else the newest.
fn newest<'a>(versions: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    let stable = |v: &&str| !v.chars().any(|c| c.is_ascii_alphabetic() || c == '-');
    index_core::version::latest(versions.clone().filter(stable))
        .or_else(|| index_core::version::latest(versions))
}

fn pick<'a>(
    registry: &'static str,
    spec: &PackageSpec,
    versions: impl Iterator<Item = &'a str> + Clone,
) -> Result<String, RegistryError> {
    let newest = newest(versions.clone()).ok_or_else(|| RegistryError::NoPackage {
        registry,
        name: spec.name.clone(),
    })?;
    match &spec.version {
        None => Ok(newest.to_owned()),
        Some(wanted) if versions.clone().any(|v| v == wanted) => Ok(wanted.clone()),
        Some(wanted) => Err(RegistryError::NoRelease {
            registry,
            name: spec.name.clone(),
            version: wanted.clone(),
            newest: newest.to_owned(),
        }),
    }
}

#[derive(Deserialize)]
struct SimpleProject {
    files: Vec<SimpleFile>,
}

#[derive(Deserialize)]
struct SimpleFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: std::collections::HashMap<String, String>,
    #[serde(default)]
    yanked: serde_json::Value,
}

/// The version an sdist's file name carries, if it is an sdist of `name`
/// (`attrs-24.2.0.tar.gz`; older ones spell the name as the project did).
fn sdist_version<'a>(file: &'a str, normalized: &str) -> Option<&'a str> {
    let stem = file
        .strip_suffix(".tar.gz")
        .or_else(|| file.strip_suffix(".zip"))?;
    let (name, version) = stem.rsplit_once('-')?;
    (pypi_normalized(name) == normalized).then_some(version)
}

async fn pypi(fetcher: &Fetcher, spec: &PackageSpec) -> Result<Release, RegistryError> {
    const REGISTRY: &str = "PyPI";
    let normalized = spec.normalized_name();
    let project: SimpleProject = json(
        fetcher,
        REGISTRY,
        &spec.name,
        &url(PYPI_SIMPLE, &format!("{normalized}/"))?,
        Some("application/vnd.pypi.simple.v1+json"),
    )
    .await?;
    let sdists: Vec<(&str, &SimpleFile)> = project
        .files
        .iter()
        .filter(|f| {
            matches!(
                f.yanked,
                serde_json::Value::Null | serde_json::Value::Bool(false)
            )
        })
        .filter_map(|f| Some((sdist_version(&f.filename, &normalized)?, f)))
        .collect();
    let version = pick(REGISTRY, spec, sdists.iter().map(|(v, _)| *v))?;
    let no_archive = || RegistryError::NoArchive {
        registry: REGISTRY,
        name: spec.name.clone(),
        version: version.clone(),
    };
    let (_, file) = sdists
        .iter()
        .find(|(v, _)| *v == version)
        .ok_or_else(no_archive)?;
    let digest = file
        .hashes
        .get("sha256")
        .and_then(|h| hex_bytes(h))
        .ok_or_else(no_archive)?;
    Ok(Release {
        registry: REGISTRY,
        url: Url::parse(&file.url).map_err(|_| no_archive())?,
        file_name: file.filename.clone(),
        digest: Checksum::Sha256(digest),
        version,
    })
}

#[derive(Deserialize)]
struct NpmVersion {
    version: String,
    dist: NpmDist,
}

#[derive(Deserialize)]
struct NpmDist {
    tarball: String,
    #[serde(default)]
    integrity: Option<String>,
}

async fn npm(fetcher: &Fetcher, spec: &PackageSpec) -> Result<Release, RegistryError> {
    const REGISTRY: &str = "npm";
    // A scoped name's slash is part of the name: `@scope%2fname`.
    let name = spec.name.replace('/', "%2f");
    let wanted = spec.version.as_deref().unwrap_or("latest");
    let doc: NpmVersion = json(
        fetcher,
        REGISTRY,
        &spec.name,
        &url(NPM_REGISTRY, &format!("{name}/{wanted}"))?,
        Some("application/json"),
    )
    .await
    .map_err(|e| match (e, &spec.version) {
        (RegistryError::NoPackage { .. }, Some(version)) => RegistryError::NoRelease {
            registry: REGISTRY,
            name: spec.name.clone(),
            version: version.clone(),
            newest: "see npm".into(),
        },
        (e, _) => e,
    })?;
    let no_archive = || RegistryError::NoArchive {
        registry: REGISTRY,
        name: spec.name.clone(),
        version: doc.version.clone(),
    };
    let digest = doc
        .dist
        .integrity
        .as_deref()
        .and_then(|i| i.strip_prefix("sha512-"))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .ok_or_else(no_archive)?;
    let url = Url::parse(&doc.dist.tarball).map_err(|_| no_archive())?;
    let file_name = url
        .path_segments()
        .and_then(|mut s| s.next_back())
        .unwrap_or("package.tgz")
        .to_owned();
    Ok(Release {
        registry: REGISTRY,
        version: doc.version.clone(),
        url,
        file_name,
        digest: Checksum::Sha512(digest),
    })
}

#[derive(Deserialize)]
struct CrateLine {
    vers: String,
    cksum: String,
    #[serde(default)]
    yanked: bool,
}

/// A crate's file in the sparse index: `1/a`, `2/ab`, `3/a/abc`, `se/rd/serde`.
fn index_path(name: &str) -> String {
    let name = name.to_ascii_lowercase();
    match name.len() {
        1 => format!("1/{name}"),
        2 => format!("2/{name}"),
        3 => format!("3/{}/{name}", &name[..1]),
        _ => format!("{}/{}/{name}", &name[..2], &name[2..4]),
    }
}

async fn crates(fetcher: &Fetcher, spec: &PackageSpec) -> Result<Release, RegistryError> {
    const REGISTRY: &str = "crates.io";
    let index_url = url(CRATES_INDEX, &index_path(&spec.name))?;
    let body = fetcher
        .get_body(&index_url)
        .await
        .map_err(|err| match err {
            FetchError::Status(404) => RegistryError::NoPackage {
                registry: REGISTRY,
                name: spec.name.clone(),
            },
            err => RegistryError::Fetch {
                registry: REGISTRY,
                err,
            },
        })?;
    let lines: Vec<CrateLine> = String::from_utf8_lossy(&body.bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|l: &CrateLine| !l.yanked)
        .collect();
    let version = pick(REGISTRY, spec, lines.iter().map(|l| l.vers.as_str()))?;
    let line = lines.iter().find(|l| l.vers == version);
    let no_archive = || RegistryError::NoArchive {
        registry: REGISTRY,
        name: spec.name.clone(),
        version: version.clone(),
    };
    let digest = line
        .and_then(|l| hex_bytes(&l.cksum))
        .ok_or_else(no_archive)?;
    let file_name = format!("{}-{version}.crate", spec.name);
    Ok(Release {
        registry: REGISTRY,
        url: url(CRATES_DOWNLOAD, &format!("{}/{file_name}", spec.name))?,
        file_name,
        digest: Checksum::Sha256(digest),
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdist_names_are_matched_normalized() {
        assert_eq!(
            sdist_version("attrs-24.2.0.tar.gz", "attrs"),
            Some("24.2.0")
        );
        assert_eq!(
            sdist_version("zope_interface-6.0.tar.gz", "zope-interface"),
            Some("6.0")
        );
        assert_eq!(
            sdist_version("attrs-24.2.0-py3-none-any.whl", "attrs"),
            None
        );
        assert_eq!(sdist_version("attrs_extra-1.0.tar.gz", "attrs"), None);
    }

    #[test]
    fn sparse_index_paths_follow_the_name_length() {
        assert_eq!(index_path("a"), "1/a");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!(index_path("Serde"), "se/rd/serde");
    }

    #[test]
    fn the_newest_stable_release_is_the_default() {
        let versions = ["1.0.0", "1.10.0", "2.0.0rc1", "1.9.3"];
        assert_eq!(newest(versions.iter().copied()), Some("1.10.0"));
        assert_eq!(
            newest(["2.0.0-beta.1"].iter().copied()),
            Some("2.0.0-beta.1")
        );
    }
}
