//! crates.io: its sparse index, and the `.crate` from its static host.

use ingest_core::package::PackageSpec;
use serde::Deserialize;

use super::{hex_bytes, pick, url, Checksum, FetchError, Fetcher, RegistryError, Release};

const CRATES_INDEX: &str = "https://index.crates.io/";
const CRATES_DOWNLOAD: &str = "https://static.crates.io/crates/";

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

const CRATES: &str = "crates.io";

/// A crate's releases that are not yanked, from its sparse index file.
async fn crate_lines(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Vec<CrateLine>, RegistryError> {
    const REGISTRY: &str = CRATES;
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
    Ok(lines)
}

/// The release `spec` names, else the newest stable one.
pub(super) async fn release(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Release, RegistryError> {
    const REGISTRY: &str = CRATES;
    let lines = crate_lines(fetcher, spec).await?;
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

/// The crate's releases, not yanked.
pub(super) async fn versions(
    fetcher: &Fetcher,
    spec: &PackageSpec,
) -> Result<Vec<String>, RegistryError> {
    Ok(crate_lines(fetcher, spec)
        .await?
        .into_iter()
        .map(|l| l.vers)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_index_paths_follow_the_name_length() {
        assert_eq!(index_path("a"), "1/a");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!(index_path("Serde"), "se/rd/serde");
    }
}
