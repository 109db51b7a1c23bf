//! A package's documentation from its registry: which release, where its
//! archive is, and the archive itself, checked against the digest the
//! registry publishes for it.
//!
//! Each registry is read through the interface that serves installers, so
//! it answers wherever installing works: PyPI's Simple API (JSON, PEP 691),
//! the npm registry's version documents, and crates.io's sparse index with
//! its static download host: [`pypi`], [`npm`], [`crates`], one file each.

use ingest_core::package::{PackageSpec, Registry};
use serde::Deserialize;
use sha2::{Digest, Sha256, Sha512};
use url::Url;

use super::fetch::{FetchError, Fetcher};

mod crates;
mod npm;
mod pypi;

/// The largest package archive downloaded.
pub const MAX_ARCHIVE_BYTES: u64 = 100 * 1024 * 1024;

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
    #[error("{package} has no release matching {pattern:?}{}", newest_of(.newest))]
    NoMatch {
        package: String,
        pattern: String,
        newest: Vec<String>,
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

fn newest_of(versions: &[String]) -> String {
    match versions.is_empty() {
        true => String::new(),
        false => format!(" (newest: {})", versions.join(", ")),
    }
}

/// Finds `spec`'s release: the one it names, else the newest stable one.
#[tracing::instrument(skip(fetcher), fields(package = %spec))]
pub async fn resolve(fetcher: &Fetcher, spec: &PackageSpec) -> Result<Release, RegistryError> {
    match spec.registry {
        Registry::PyPi => pypi::release(fetcher, spec).await,
        Registry::Npm => npm::release(fetcher, spec).await,
        Registry::Crates => crates::release(fetcher, spec).await,
    }
}

/// Every release of `spec`'s package with an archive docshelf reads, not
/// yanked, in the registry's order: what `track` chooses from.
#[tracing::instrument(skip(fetcher), fields(package = %spec))]
pub async fn versions(fetcher: &Fetcher, spec: &PackageSpec) -> Result<Vec<String>, RegistryError> {
    match spec.registry {
        Registry::PyPi => pypi::versions(fetcher, spec).await,
        Registry::Npm => npm::versions(fetcher, spec).await,
        Registry::Crates => crates::versions(fetcher, spec).await,
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
    let stable = |v: &&str| !super::releases::is_prerelease(v);
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

#[cfg(test)]
mod tests {
    use super::*;

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
