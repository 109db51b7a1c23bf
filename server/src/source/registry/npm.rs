//! The npm registry: a package's version documents and tarballs.

use base64::Engine as _;
use ingest_core::package::PackageSpec;
use serde::Deserialize;
use url::Url;

use super::{json, url, Checksum, Fetcher, RegistryError, Release};

const NPM_REGISTRY: &str = "https://registry.npmjs.org/";

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

/// The largest package document read from npm (a package with thousands
/// of releases has a large one, even abbreviated).
const MAX_NPM_DOCUMENT: u64 = 64 * 1024 * 1024;

#[derive(Deserialize)]
struct NpmPackage {
    #[serde(default)]
    versions: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

/// A package's versions, from npm's abbreviated package document (the one
/// installers read).
pub(super) async fn versions(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Vec<String>, RegistryError> {
    let name = spec.name.replace('/', "%2f");
    let doc: NpmPackage = json(
        &fetcher.with_max_bytes(MAX_NPM_DOCUMENT),
        "npm",
        &spec.name,
        &url(NPM_REGISTRY, &name)?,
        Some("application/vnd.npm.install-v1+json"),
    )
    .await?;
    Ok(doc.versions.into_keys().collect())
}

/// The release `spec` names, else the one npm tags `latest`.
pub(super) async fn release(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Release, RegistryError> {
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
