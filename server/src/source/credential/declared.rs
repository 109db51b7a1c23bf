//! The credentials the operator declared, by name, and the one decision
//! of whether a source may use one.
//!
//! A declaration is written
//! `NAME=REFERENCE@WHERE[,WHERE…][;libraries=PATTERN[,PATTERN…]]`:
//! `gitlab-ci=env:GITLAB_TOKEN@gitlab.example.com`,
//! `handbook=file:/run/secrets/handbook@https://docs.intranet/handbook/;libraries=team-*`.
//! `WHERE` is a host (`host`, `host:port`) or a URL prefix; the libraries
//! are patterns as token grants write them (`*` any run of characters),
//! every library when none is given.

use std::collections::BTreeMap;

use index_core::access::matches;
use index_core::source::CredentialInfo;
use url::Url;

use super::binding::Bound;
use super::reference::SecretRef;
use super::{CredentialError, Secret};

/// The longest credential name.
const MAX_NAME: usize = 64;

/// One credential the operator declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    pub reference: SecretRef,
    /// Where it may be sent: at least one place.
    pub bound: Vec<Bound>,
    /// Library patterns whose sources may name it; empty for every library.
    pub libraries: Vec<String>,
}

impl Declared {
    /// Reads a declaration (see the module's notes). The message of a
    /// refused one is the operator's, at start-up, and may quote it: it
    /// holds a reference, never a secret.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        let (declaration, libraries) = match raw.rsplit_once(";libraries=") {
            Some((declaration, libraries)) => (declaration, libraries),
            None => (raw, ""),
        };
        let (name, rest) = declaration.split_once('=').ok_or_else(|| {
            format!("{raw:?}: write it as NAME=env:VARIABLE@HOST (or =file:/path@HOST)")
        })?;
        let name = name.trim();
        if !is_name(name) {
            return Err(format!(
                "{name:?}: a credential's name is 1 to {MAX_NAME} letters, digits, '-', '_' or '.', starting with a letter or digit"
            ));
        }
        let (reference, places) = rest.rsplit_once('@').ok_or_else(|| {
            format!("{name}: say where it may be sent, as …@HOST or …@https://HOST/PREFIX/")
        })?;
        let reference = SecretRef::parse(reference).ok_or_else(|| {
            format!("{name}: {reference:?} is not env:VARIABLE or file:/absolute/path")
        })?;
        let bound = places
            .split(',')
            .map(Bound::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{name}: {e}"))?;
        let libraries: Vec<String> = libraries
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        if let Some(bad) = libraries.iter().find(|p| !is_pattern(p)) {
            return Err(format!(
                "{name}: {bad:?} is not a library pattern (a name, `*` any run of characters)"
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            reference,
            bound,
            libraries,
        })
    }

    fn admits_library(&self, library: &str) -> bool {
        self.libraries.is_empty() || self.libraries.iter().any(|p| matches(p, library))
    }

    fn admits_all(&self, urls: &[&Url]) -> bool {
        urls.iter()
            .all(|url| self.bound.iter().any(|b| b.admits(url)))
    }

    /// What an admin is shown of it: never the reference's target.
    pub fn info(&self) -> CredentialInfo {
        CredentialInfo {
            name: self.name.clone(),
            sent_to: self.bound.iter().map(ToString::to_string).collect(),
            libraries: self.libraries.clone(),
        }
    }
}

/// Whether `name` is a credential's name, as a request may write it.
pub fn is_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_NAME
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn is_pattern(pattern: &str) -> bool {
    pattern.len() <= 200
        && pattern
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '*'))
}

/// A credential lent to one source: its name (what the source stores),
/// its secret, and where that may go.
#[derive(Clone)]
pub struct Lent {
    pub name: String,
    pub secret: Secret,
    bound: Vec<Bound>,
}

impl Lent {
    /// Whether a request for `url` may carry the secret.
    pub fn admits(&self, url: &Url) -> bool {
        self.bound.iter().any(|b| b.admits(url))
    }
}

impl std::fmt::Debug for Lent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lent({}: …)", self.name)
    }
}

/// Every credential the operator declared, by name.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    by_name: BTreeMap<String, Declared>,
}

impl Credentials {
    /// The declarations, each name once.
    pub fn new(declared: Vec<Declared>) -> Result<Self, String> {
        let mut by_name = BTreeMap::new();
        for credential in declared {
            let name = credential.name.clone();
            if by_name.insert(name.clone(), credential).is_some() {
                return Err(format!("the credential {name:?} is declared twice"));
            }
        }
        Ok(Self { by_name })
    }

    /// Names, where each may be sent and for which libraries, by name.
    pub fn list(&self) -> Vec<CredentialInfo> {
        self.by_name.values().map(Declared::info).collect()
    }

    /// Declarations whose secret cannot be read now, with why: said in
    /// the log at start-up, so the operator learns before a source fails.
    pub fn unreadable(&self) -> Vec<(String, String)> {
        self.by_name
            .values()
            .filter_map(|c| {
                c.reference
                    .resolve()
                    .err()
                    .map(|e| (c.name.clone(), e.to_string()))
            })
            .collect()
    }

    /// The credential a source of `library` asks for by `asked`, to be
    /// sent to each of `urls`, with its secret read now.
    ///
    /// `asked` is a declared name. A reference (`env:…`, `file:…`), which
    /// sources stored before credentials had names hold, is taken only
    /// where the operator declared exactly that reference for these URLs
    /// and this library: the source then goes on under that name. Any
    /// other answer is [`CredentialError::NotLent`], one message whether
    /// the name is unknown, bound elsewhere or not for this library, so a
    /// client learns nothing of the server's files, variables or other
    /// credentials.
    pub fn lend(&self, asked: &str, library: &str, urls: &[&Url]) -> Result<Lent, CredentialError> {
        let asked = asked.trim();
        let usable = |c: &&Declared| c.admits_library(library) && c.admits_all(urls);
        let declared = if SecretRef::looks_like(asked) {
            let reference = SecretRef::parse(asked).ok_or(CredentialError::Stored)?;
            let mut mapped = self
                .by_name
                .values()
                .filter(|c| c.reference == reference)
                .filter(usable);
            match (mapped.next(), mapped.next()) {
                (Some(only), None) => only,
                _ => return Err(CredentialError::Stored),
            }
        } else if is_name(asked) {
            self.by_name
                .get(asked)
                .filter(|c| usable(c))
                .ok_or_else(|| CredentialError::NotLent(asked.to_owned()))?
        } else {
            return Err(CredentialError::Form(asked.chars().count()));
        };
        let secret = declared.reference.resolve().map_err(|why| {
            tracing::warn!(credential = %declared.name, %why, "a source's credential cannot be read");
            CredentialError::Unreadable(declared.name.clone())
        })?;
        Ok(Lent {
            name: declared.name.clone(),
            secret,
            bound: declared.bound.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(raw: &str) -> Url {
        Url::parse(raw).unwrap()
    }

    #[test]
    fn declarations_name_a_reference_its_places_and_libraries() {
        let declared = Declared::parse(
            "handbook=file:/run/secrets/a@b@https://Docs.Intranet/handbook/,git.lan:8443;libraries=team-*, docs",
        )
        .unwrap();
        assert_eq!(declared.name, "handbook");
        assert_eq!(
            declared.reference,
            SecretRef::File("/run/secrets/a@b".into())
        );
        assert_eq!(
            declared.info().sent_to,
            ["https://docs.intranet/handbook/", "git.lan:8443"]
        );
        assert_eq!(declared.libraries, ["team-*", "docs"]);
        for bad in [
            "gitlab-ci",
            "gitlab-ci=env:T",
            "-x=env:T@h",
            "a b=env:T@h",
            "x=T@h",
            "x=env:T@",
            "x=env:T@h;libraries=a\nb",
        ] {
            assert!(Declared::parse(bad).is_err(), "{bad:?}");
        }
        let twice = vec![
            Declared::parse("x=env:A@h").unwrap(),
            Declared::parse("x=env:B@h").unwrap(),
        ];
        assert!(Credentials::new(twice).is_err());
    }

    #[test]
    fn a_credential_is_lent_by_name_for_its_places_and_libraries_only() {
        std::env::set_var("DOCSHELF_TEST_CREDENTIAL_LENT", "s3cret");
        let credentials = Credentials::new(vec![Declared::parse(
            "ci=env:DOCSHELF_TEST_CREDENTIAL_LENT@git.lan;libraries=team-*",
        )
        .unwrap()])
        .unwrap();
        let repo = url("https://git.lan/team/docs.git");
        let lent = credentials.lend("ci", "team-x", &[&repo]).unwrap();
        assert_eq!((lent.name.as_str(), lent.secret.expose()), ("ci", "s3cret"));
        assert!(lent.admits(&repo) && !lent.admits(&url("https://evil.io/")));
        assert!(!format!("{lent:?}").contains("s3cret"));

        // Unknown, bound elsewhere, another library: one answer.
        let elsewhere = url("https://evil.io/x.git");
        let refusals = [
            credentials.lend("nope", "team-x", &[&repo]),
            credentials.lend("ci", "team-x", &[&elsewhere]),
            credentials.lend("ci", "team-x", &[&repo, &elsewhere]),
            credentials.lend("ci", "other", &[&repo]),
        ];
        let messages: Vec<String> = refusals
            .into_iter()
            .map(|r| r.unwrap_err().to_string().replace("\"nope\"", "\"ci\""))
            .collect();
        assert!(messages.iter().all(|m| m == &messages[0]), "{messages:?}");

        // A reference: only the declared one, for its places.
        let mapped = credentials
            .lend("env:DOCSHELF_TEST_CREDENTIAL_LENT", "team-x", &[&repo])
            .unwrap();
        assert_eq!(mapped.name, "ci");
        for stored in [
            "env:DOCSHELF_TOKEN",
            "file:/proc/self/environ",
            "env:",
            "file:relative",
        ] {
            assert_eq!(
                credentials.lend(stored, "team-x", &[&repo]).unwrap_err(),
                CredentialError::Stored,
                "{stored}"
            );
        }
        assert_eq!(
            credentials
                .lend("env:DOCSHELF_TEST_CREDENTIAL_LENT", "team-x", &[&elsewhere])
                .unwrap_err(),
            CredentialError::Stored
        );
        // A secret pasted in its place is not echoed.
        let pasted = credentials.lend("ghp_abc:def/ghi", "team-x", &[&repo]);
        assert!(!pasted.unwrap_err().to_string().contains("ghp_abc"));
    }

    #[test]
    fn an_unreadable_secret_says_its_name_only() {
        let credentials = Credentials::new(vec![Declared::parse(
            "gone=file:/surely/not/here/token@git.lan",
        )
        .unwrap()])
        .unwrap();
        let repo = url("https://git.lan/r.git");
        let err = credentials.lend("gone", "x", &[&repo]).unwrap_err();
        assert_eq!(err, CredentialError::Unreadable("gone".into()));
        assert!(!err.to_string().contains("/surely"), "{err}");
        assert_eq!(credentials.unreadable().len(), 1);
    }
}
