//! PyPI, through its Simple API (JSON, PEP 691): a project's sdists.

use ingest_core::package::{pypi_normalized, PackageSpec};
use serde::Deserialize;
use url::Url;

use super::{hex_bytes, json, pick, url, Checksum, Fetcher, RegistryError, Release};

const PYPI_SIMPLE: &str = "https://pypi.org/simple/";

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

const PYPI: &str = "PyPI";

async fn pypi_project(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<SimpleProject, RegistryError> {
    json(
        fetcher,
        PYPI,
        &spec.name,
        &url(PYPI_SIMPLE, &format!("{}/", spec.normalized_name()))?,
        Some("application/vnd.pypi.simple.v1+json"),
    )
    .await
}

/// A project's sdists that are not yanked, with their versions.
fn pypi_sdists<'a>(project: &'a SimpleProject, normalized: &str) -> Vec<(&'a str, &'a SimpleFile)> {
    project
        .files
        .iter()
        .filter(|f| {
            matches!(
                f.yanked,
                serde_json::Value::Null | serde_json::Value::Bool(false)
            )
        })
        .filter_map(|f| Some((sdist_version(&f.filename, normalized)?, f)))
        .collect()
}

/// The release `spec` names, else the newest stable one.
pub(super) async fn release(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Release, RegistryError> {
    const REGISTRY: &str = PYPI;
    let project = pypi_project(fetcher, spec).await?;
    let sdists = pypi_sdists(&project, &spec.normalized_name());
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

/// The project's versions that have an sdist, not yanked.
pub(super) async fn versions(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Vec<String>, RegistryError> {
    let project = pypi_project(fetcher, spec).await?;
    let normalized = spec.normalized_name();
    Ok(pypi_sdists(&project, &normalized)
        .into_iter()
        .map(|(v, _)| v.to_owned())
        .collect())
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
}
