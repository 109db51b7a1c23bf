//! Credentials for private sources, given by reference.
//!
//! A request names where the secret is (`env:GIT_TOKEN`, `file:/run/secrets/docs`),
//! never the secret itself, so the store, the job, the API's answers and the
//! logs only ever hold the reference. The secret is read when a fetch
//! starts, kept in a [`Secret`] whose `Debug` and `Display` print nothing of
//! it, and handed to the tool that needs it outside its command line.

use std::path::PathBuf;

/// The most bytes a credential file is read for: a token or a
/// `user:password`, not a document.
const MAX_SECRET_BYTES: u64 = 64 * 1024;

/// Where a secret is kept on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialRef {
    /// An environment variable of the server.
    Env(String),
    /// A file on the server.
    File(PathBuf),
}

/// Why a credential cannot be used. The messages name the reference, never
/// what it holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("a credential is given by reference: env:NAME (an environment variable of the server) or file:/absolute/path (a file on the server), not {0:?}")]
    Form(String),
    #[error("the credential env:{0} is not set in the server's environment")]
    UnsetVariable(String),
    #[error("the credential file:{path} cannot be read: {why}")]
    Unreadable { path: String, why: String },
    #[error("the credential {0} is empty")]
    Empty(String),
    #[error("the credential {0} is not something an HTTP header can carry")]
    NotAHeader(String),
}

impl CredentialRef {
    /// Reads `env:NAME` or `file:/absolute/path`. What is not one of those
    /// is refused without being echoed (it may be a secret pasted by
    /// mistake).
    pub fn parse(raw: &str) -> Result<Self, CredentialError> {
        let refused = || CredentialError::Form(shape_of(raw));
        let raw = raw.trim();
        if let Some(name) = raw.strip_prefix("env:") {
            let valid = !name.is_empty()
                && name.len() <= 128
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !name.as_bytes()[0].is_ascii_digit();
            return valid
                .then(|| Self::Env(name.to_owned()))
                .ok_or_else(refused);
        }
        if let Some(path) = raw.strip_prefix("file:") {
            let path = PathBuf::from(path);
            return (path.is_absolute() && path.as_os_str().len() <= 4096)
                .then_some(Self::File(path))
                .ok_or_else(refused);
        }
        Err(refused())
    }

    /// The reference `raw` names and the secret it holds now: what a
    /// source's `credential` gives, for a site and a repository alike.
    pub fn read(raw: &str) -> Result<(Self, Secret), CredentialError> {
        let reference = Self::parse(raw)?;
        let secret = reference.resolve()?;
        Ok((reference, secret))
    }

    /// Reads the secret now.
    pub fn resolve(&self) -> Result<Secret, CredentialError> {
        let value = match self {
            Self::Env(name) => {
                std::env::var(name).map_err(|_| CredentialError::UnsetVariable(name.clone()))?
            }
            Self::File(path) => read_file(path).map_err(|why| CredentialError::Unreadable {
                path: path.display().to_string(),
                why,
            })?,
        };
        let value = value.trim().to_owned();
        if value.is_empty() {
            return Err(CredentialError::Empty(self.to_string()));
        }
        Ok(Secret(value))
    }
}

impl std::fmt::Display for CredentialRef {
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

/// What a refused reference looked like, without its content: its length
/// and the prefix it lacked.
fn shape_of(raw: &str) -> String {
    format!("a value of {} characters", raw.chars().count())
}

/// A secret read from its reference. Printing it shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret, for the one place that hands it on.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// An HTTP `Authorization` value for it: `user:password` as Basic
    /// credentials, a bare token as the password of Basic credentials
    /// (what GitHub, GitLab, Gitea and Bitbucket take for HTTPS Git).
    pub fn basic_authorization(&self) -> String {
        use base64::Engine as _;
        let pair = if self.0.contains(':') {
            self.0.clone()
        } else {
            format!("x-access-token:{}", self.0)
        };
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// A private site's credential, sent as one header to the site's own
/// origin (scheme, host and port) only: never to another host a page
/// links or redirects to.
#[derive(Clone)]
pub struct SiteCredential {
    origin: url::Origin,
    name: http::HeaderName,
    value: http::HeaderValue,
}

impl SiteCredential {
    /// The header a secret stands for, read as Git's is wherever the two
    /// agree: `user:password` as Basic credentials, a bare token as a
    /// bearer token (`Authorization: Bearer …`). A header is taken as
    /// written only when it names one a site signs in with: `Cookie: …`,
    /// `Authorization: …`, or an `X-…` header written with a space after
    /// its colon (`X-Api-Key: …`), since Git's own `x-access-token:TOKEN`
    /// is a user and password. The error names the reference, never the
    /// secret.
    pub fn new(
        site: &url::Url,
        secret: &Secret,
        reference: &CredentialRef,
    ) -> Result<Self, CredentialError> {
        let raw = secret.expose();
        let header = raw.split_once(':').and_then(|(name, value)| {
            let name = name.trim().to_ascii_lowercase();
            let spelled_as_header = value.starts_with(' ');
            let signs_in = name == "cookie"
                || name == "authorization"
                || (name.starts_with("x-") && spelled_as_header);
            let value = value.trim();
            let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
            (signs_in && !value.is_empty()).then(|| (name, value.to_owned()))
        });
        let (name, value) = match header {
            Some(header) => header,
            None if raw.contains(':') => {
                (http::header::AUTHORIZATION, secret.basic_authorization())
            }
            None => (http::header::AUTHORIZATION, format!("Bearer {raw}")),
        };
        let mut value = http::HeaderValue::from_str(&value)
            .map_err(|_| CredentialError::NotAHeader(reference.to_string()))?;
        value.set_sensitive(true);
        Ok(Self {
            origin: site.origin(),
            name,
            value,
        })
    }

    /// The header to send with a request for `url`, if `url` is on the
    /// site's origin.
    pub fn header_for(&self, url: &url::Url) -> Option<(&http::HeaderName, &http::HeaderValue)> {
        (url.origin() == self.origin).then_some((&self.name, &self.value))
    }
}

impl std::fmt::Debug for SiteCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SiteCredential({}: …)", self.name)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_env_names_or_absolute_files() {
        assert_eq!(
            CredentialRef::parse("env:GIT_TOKEN"),
            Ok(CredentialRef::Env("GIT_TOKEN".into()))
        );
        assert_eq!(
            CredentialRef::parse("file:/run/secrets/t"),
            Ok(CredentialRef::File("/run/secrets/t".into()))
        );
        for bad in [
            "ghp_abcdef123456",
            "env:",
            "env:1X",
            "env:A-B",
            "file:rel/path",
        ] {
            let err = CredentialRef::parse(bad).expect_err(bad);
            assert!(!err.to_string().contains("abcdef"), "{err}");
        }
    }

    #[test]
    fn secrets_do_not_print() {
        let secret = Secret("hunter2".into());
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        assert!(!secret.basic_authorization().contains("hunter2"));
        // user:password is used as given; a bare token as Basic's password.
        assert_eq!(Secret("u:p".into()).basic_authorization(), "Basic dTpw");
    }

    #[test]
    fn a_site_credential_is_a_header_for_its_origin_only() {
        let site = url::Url::parse("https://docs.intranet:8443/guide/").unwrap();
        let reference = CredentialRef::Env("T".into());
        let bearer = SiteCredential::new(&site, &Secret("s3cret".into()), &reference).unwrap();
        let same = url::Url::parse("https://docs.intranet:8443/other/page").unwrap();
        let (name, value) = bearer.header_for(&same).expect("same origin");
        assert_eq!(
            (name.as_str(), value.to_str().unwrap()),
            ("authorization", "Bearer s3cret")
        );
        assert!(value.is_sensitive());
        for elsewhere in [
            "http://docs.intranet:8443/",
            "https://docs.intranet/",
            "https://cdn.example/x",
        ] {
            let url = url::Url::parse(elsewhere).unwrap();
            assert!(bearer.header_for(&url).is_none(), "{elsewhere}");
        }
        let header = |secret: &str| {
            let credential =
                SiteCredential::new(&site, &Secret(secret.into()), &reference).unwrap();
            let (name, value) = credential.header_for(&same).expect("same origin");
            (name.to_string(), value.to_str().unwrap().to_owned())
        };
        let written = [
            ("Cookie: session=abc", "cookie", "session=abc"),
            ("reader:pa55", "authorization", "Basic cmVhZGVyOnBhNTU="),
            // Git's token form is a user and password, not an X- header.
            (
                "x-access-token:t0k",
                "authorization",
                "Basic eC1hY2Nlc3MtdG9rZW46dDBr",
            ),
            ("X-Api-Key: k3y", "x-api-key", "k3y"),
        ];
        for (secret, name, value) in written {
            assert_eq!(
                header(secret),
                (name.to_owned(), value.to_owned()),
                "{secret}"
            );
        }
        let cookie =
            SiteCredential::new(&site, &Secret("Cookie: session=abc".into()), &reference).unwrap();
        assert!(!format!("{cookie:?}").contains("abc"));
        let bad = SiteCredential::new(&site, &Secret("X-Key: a\u{7f}b".into()), &reference);
        assert!(bad.unwrap_err().to_string().contains("env:T"));
    }

    #[test]
    fn missing_secrets_name_their_reference() {
        let unset = CredentialRef::Env("DOCSHELF_TEST_SURELY_UNSET_VARIABLE".into());
        assert_eq!(
            unset.resolve(),
            Err(CredentialError::UnsetVariable(
                "DOCSHELF_TEST_SURELY_UNSET_VARIABLE".into()
            ))
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "  s3cret\n").unwrap();
        let file = CredentialRef::File(path.clone());
        assert_eq!(file.resolve().unwrap().expose(), "s3cret");
        std::fs::write(&path, "\n").unwrap();
        assert!(matches!(file.resolve(), Err(CredentialError::Empty(_))));
    }
}
