//! What part of the store a request covers: the library (named exactly,
//! named loosely, or the session's sticky one) and the version (given,
//! `latest`, or every one), resolved once against the catalog.
//!
//! Searches, document reads, listings and deletes all resolve versions
//! through [`version_in`], so "latest" and the "it has …" message of an
//! unknown version mean the same on every path.
//!
//! Pure: it reads the catalog and the session's sticky library and says
//! what should change ([`StickyChange`]); [`super::sessions`] applies it.

use index_core::catalog::LibraryInfo;
use index_core::library::{self, Resolution};
use index_core::search::{Search, Sticky};
use index_core::version;

use crate::error::EngineError;
use crate::store::filter::Scope;

/// The stored library named exactly `name`, or an error that lists the
/// closest stored names.
pub fn library_named<'a>(
    libraries: &'a [LibraryInfo],
    name: &str,
) -> Result<&'a LibraryInfo, EngineError> {
    if let Some(info) = libraries.iter().find(|l| l.name == name) {
        return Ok(info);
    }
    let candidates = match library::resolve(name, &names(libraries)) {
        Resolution::Unknown { candidates, .. } => candidates,
        other => other
            .library()
            .map(|l| vec![l.to_owned()])
            .unwrap_or_default(),
    };
    Err(EngineError::UnknownLibrary {
        given: name.to_owned(),
        candidates,
        stored: libraries.len(),
    })
}

/// The stored version of `info` that `wanted` names: itself, or the newest
/// for `latest`. An unknown version is an error that lists what exists.
pub fn version_in(info: &LibraryInfo, wanted: &str) -> Result<String, EngineError> {
    let versions: Vec<&str> = info.versions.iter().map(|v| v.version.as_str()).collect();
    let found = if version::is_latest(wanted) {
        version::latest(versions.iter().copied())
    } else {
        versions.iter().copied().find(|v| *v == wanted)
    };
    found
        .map(str::to_owned)
        .ok_or_else(|| EngineError::UnknownVersion {
            library: info.name.clone(),
            version: wanted.to_owned(),
            versions: versions.iter().map(|v| (*v).to_owned()).collect(),
        })
}

fn names(libraries: &[LibraryInfo]) -> Vec<String> {
    libraries.iter().map(|l| l.name.clone()).collect()
}

/// A search's scope, resolved.
#[derive(Debug, Default)]
pub struct SearchScope {
    /// The filter the legs run under.
    pub scope: Scope,
    /// The one library searched, if the search is in one.
    pub library: Option<String>,
    /// The version searched, when one was asked for.
    pub version: Option<String>,
    /// How a loosely named library was resolved.
    pub resolution: Option<Resolution>,
    /// Whether the library came from the session, not the request.
    pub sticky_applied: bool,
    /// What the session's sticky library becomes.
    pub sticky: StickyChange,
}

/// What a search does to its session's sticky library.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StickyChange {
    /// Leave it as it is.
    #[default]
    Keep,
    /// A library named in the request sticks for the session's next searches.
    Set(Sticky),
    /// The sticky library was deleted since it was set: forget it.
    Forget,
}

/// Resolves a search's library and version: the request's library
/// (loosely named, and then sticky for the session), else the session's
/// `sticky` library, else every library.
///
/// `libraries` are those the caller may read. When that is not every
/// stored library (`restricted`), a search of "every library" is a search
/// of exactly these, and a sticky library outside them is passed over but
/// kept: it may be another caller's in a shared session.
pub fn for_search(
    libraries: &[LibraryInfo],
    search: &Search,
    sticky: Option<Sticky>,
    restricted: bool,
) -> Result<SearchScope, EngineError> {
    let mut out = SearchScope {
        scope: Scope {
            file_prefix: search.file_path.clone(),
            only_listed: restricted,
            ..Scope::default()
        },
        ..SearchScope::default()
    };
    let mut wanted_version = search.version.clone();
    out.library = match &search.library {
        Some(given) => {
            let resolved = library::resolve(given, &names(libraries));
            let Some(name) = resolved.library().map(str::to_owned) else {
                let candidates = match resolved {
                    Resolution::Unknown { candidates, .. } => candidates,
                    _ => Vec::new(),
                };
                return Err(EngineError::UnknownLibrary {
                    given: given.clone(),
                    candidates,
                    stored: libraries.len(),
                });
            };
            out.resolution = Some(resolved);
            Some(name)
        }
        None => match sticky {
            Some(sticky) if libraries.iter().any(|l| l.name == sticky.library) => {
                out.sticky_applied = true;
                wanted_version = wanted_version.or(sticky.version);
                Some(sticky.library)
            }
            Some(_) if restricted => None,
            Some(_) => {
                out.sticky = StickyChange::Forget;
                None
            }
            None => None,
        },
    };

    match &out.library {
        Some(name) => {
            let info = library_named(libraries, name)?;
            let version = wanted_version
                .as_deref()
                .map(|v| version_in(info, v))
                .transpose()?;
            out.version.clone_from(&version);
            out.scope.targets = vec![(name.clone(), version)];
        }
        None => match wanted_version.as_deref() {
            None if restricted => {
                out.scope.targets = libraries.iter().map(|l| (l.name.clone(), None)).collect();
            }
            None => {}
            // The newest version of every library.
            Some(v) if version::is_latest(v) => {
                out.scope.targets = libraries
                    .iter()
                    .filter_map(|l| {
                        Some((l.name.clone(), Some(l.versions.first()?.version.clone())))
                    })
                    .collect();
            }
            Some(v) => {
                if restricted {
                    out.scope.targets = libraries.iter().map(|l| (l.name.clone(), None)).collect();
                }
                out.scope.version = Some(v.to_owned());
                out.version = Some(v.to_owned());
            }
        },
    }
    // A library named in the request sticks for the session's next searches.
    if let (Some(name), true) = (&out.library, search.library.is_some()) {
        out.sticky = StickyChange::Set(Sticky {
            library: name.clone(),
            version: search.version.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use index_core::catalog::VersionInfo;
    use index_core::search::SearchParams;

    use super::*;

    fn library(name: &str, versions: &[&str]) -> LibraryInfo {
        LibraryInfo {
            name: name.to_owned(),
            versions: versions
                .iter()
                .map(|v| VersionInfo {
                    version: (*v).to_owned(),
                    documents: 1,
                    chunks: 1,
                    updated_at: 0,
                })
                .collect(),
            documents: 1,
            chunks: 1,
            updated_at: 0,
        }
    }

    fn search(library: Option<&str>, version: Option<&str>) -> Search {
        SearchParams {
            query: "install".into(),
            library: library.map(str::to_owned),
            version: version.map(str::to_owned),
            ..SearchParams::default()
        }
        .validate()
        .expect("a valid search")
    }

    fn sticky(library: &str) -> Option<Sticky> {
        Some(Sticky {
            library: library.to_owned(),
            version: None,
        })
    }

    #[test]
    fn a_named_library_is_searched_and_becomes_sticky() {
        let libraries = [
            library("react", &["18.2", "19.0"]),
            library("vue", &["3.4"]),
        ];
        let scope = for_search(
            &libraries,
            &search(Some("React"), Some("latest")),
            None,
            false,
        )
        .expect("resolves");
        assert_eq!(scope.library.as_deref(), Some("react"));
        assert_eq!(scope.version.as_deref(), Some("19.0"));
        assert!(!scope.sticky_applied);
        assert_eq!(
            scope.sticky,
            StickyChange::Set(Sticky {
                library: "react".into(),
                version: Some("latest".into()),
            })
        );
    }

    #[test]
    fn the_sessions_library_applies_when_none_is_named_and_stays() {
        let libraries = [library("react", &["18.2"]), library("vue", &["3.4"])];
        let scope =
            for_search(&libraries, &search(None, None), sticky("vue"), false).expect("resolves");
        assert_eq!(scope.library.as_deref(), Some("vue"));
        assert!(scope.sticky_applied);
        assert_eq!(scope.sticky, StickyChange::Keep);
    }

    #[test]
    fn a_deleted_sticky_library_is_forgotten_and_everything_searched() {
        let libraries = [library("react", &["18.2"])];
        let scope =
            for_search(&libraries, &search(None, None), sticky("gone"), false).expect("resolves");
        assert_eq!(scope.library, None);
        assert!(!scope.sticky_applied);
        assert_eq!(scope.sticky, StickyChange::Forget);
    }

    #[test]
    fn a_restricted_caller_searches_only_its_libraries_and_never_sees_others() {
        let visible = [library("react", &["18.2"])];
        let everywhere = for_search(&visible, &search(None, None), None, true).expect("resolves");
        assert_eq!(everywhere.scope.targets, vec![("react".to_owned(), None)]);
        assert!(everywhere.scope.only_listed);
        let hidden =
            for_search(&visible, &search(None, None), sticky("secret"), true).expect("resolves");
        assert_eq!(hidden.library, None);
        assert_eq!(hidden.sticky, StickyChange::Keep);
        let none = for_search(&[], &search(None, None), None, true).expect("resolves");
        assert_eq!(none.scope.to_sql().as_deref(), Some("false"));
        assert!(!none.scope.covers("react", "18.2"));
    }

    #[test]
    fn an_unknown_library_or_version_changes_nothing_and_says_what_exists() {
        let libraries = [library("react", &["18.2"])];
        let err = for_search(
            &libraries,
            &search(Some("zzzz"), None),
            sticky("react"),
            false,
        )
        .expect_err("unknown library");
        assert!(matches!(err, EngineError::UnknownLibrary { .. }), "{err}");
        let err = for_search(&libraries, &search(Some("react"), Some("9.9")), None, false)
            .expect_err("unknown version");
        assert!(err.to_string().contains("18.2"), "{err}");
    }
}
