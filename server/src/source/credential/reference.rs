//! Where the operator keeps a credential's secret: an environment
//! variable or a file of the server.
//!
//! Only the operator writes these (in `--credential`, never in a request):
//! a reference a client could choose would let it send any of the server's
//! variables or files to a host of its own.

use std::path::PathBuf;

use super::Secret;

/// The most bytes a credential file is read for: a token or a
/// `user:password`, not a document.
const MAX_SECRET_BYTES: u64 = 64 * 1024;

/// Where a secret is kept on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretRef {
    /// An environment variable of the server.
    Env(String),
    /// A file on the server.
    File(PathBuf),
}

/// Why a reference's secret cannot be read now. Said to the operator (the
/// server's log), never to a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("{0} is not set in the server's environment")]
    Unset(SecretRef),
    #[error("{reference} cannot be read: {why}")]
    File { reference: SecretRef, why: String },
    #[error("{0} is empty")]
    Empty(SecretRef),
}

impl SecretRef {
    /// Reads `env:NAME` or `file:/absolute/path`; `None` for anything else.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if let Some(name) = raw.strip_prefix("env:") {
            let valid = !name.is_empty()
                && name.len() <= 128
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !name.as_bytes()[0].is_ascii_digit();
            return valid.then(|| Self::Env(name.to_owned()));
        }
        let path = PathBuf::from(raw.strip_prefix("file:")?);
        (path.is_absolute() && path.as_os_str().len() <= 4096).then_some(Self::File(path))
    }

    /// Whether `raw` is written as a reference (`env:…`, `file:…`), well
    /// formed or not: what sources stored before credentials had names
    /// hold.
    pub fn looks_like(raw: &str) -> bool {
        let raw = raw.trim_start();
        raw.starts_with("env:") || raw.starts_with("file:")
    }

    /// Reads the secret now (a rotated file is read anew at every fetch).
    pub fn resolve(&self) -> Result<Secret, Unreadable> {
        let value = match self {
            Self::Env(name) => std::env::var(name).map_err(|_| Unreadable::Unset(self.clone()))?,
            Self::File(path) => read_file(path).map_err(|why| Unreadable::File {
                reference: self.clone(),
                why,
            })?,
        };
        let value = value.trim();
        if value.is_empty() {
            return Err(Unreadable::Empty(self.clone()));
        }
        Ok(Secret(value.to_owned()))
    }
}

impl std::fmt::Display for SecretRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Env(name) => write!(f, "env:{name}"),
            Self::File(path) => write!(f, "file:{}", path.display()),
        }
    }
}

fn read_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.kind().to_string())?;
    let mut text = String::new();
    file.take(MAX_SECRET_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| e.kind().to_string())?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_env_names_or_absolute_files() {
        assert_eq!(
            SecretRef::parse("env:GIT_TOKEN"),
            Some(SecretRef::Env("GIT_TOKEN".into()))
        );
        assert_eq!(
            SecretRef::parse("file:/run/secrets/t"),
            Some(SecretRef::File("/run/secrets/t".into()))
        );
        for bad in ["ghp_abcdef", "env:", "env:1X", "env:A-B", "file:rel/path"] {
            assert_eq!(SecretRef::parse(bad), None, "{bad}");
        }
        assert!(SecretRef::looks_like(" env:X") && SecretRef::looks_like("file:rel"));
        assert!(!SecretRef::looks_like("gitlab-ci"));
    }

    #[test]
    fn secrets_are_read_when_asked_and_trimmed() {
        let unset = SecretRef::Env("DOCSHELF_TEST_SURELY_UNSET_VARIABLE".into());
        assert_eq!(unset.resolve(), Err(Unreadable::Unset(unset.clone())));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "  s3cret\n").unwrap();
        let file = SecretRef::File(path.clone());
        assert_eq!(file.resolve().unwrap().expose(), "s3cret");
        std::fs::write(&path, "\n").unwrap();
        assert!(matches!(file.resolve(), Err(Unreadable::Empty(_))));
        let dir_itself = SecretRef::File(dir.path().to_owned());
        assert!(matches!(dir_itself.resolve(), Err(Unreadable::File { .. })));
    }
}
