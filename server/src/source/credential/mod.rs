//! Credentials for private sources: the operator's, by name.
//!
//! The operator declares each credential in the server's configuration
//! (`--credential NAME=env:VARIABLE@HOST`, [`declared`]): where its secret
//! is kept, the hosts or URL prefixes it may be sent to ([`binding`]), and
//! which libraries' sources may use it. A source request names one
//! (`"credential": "gitlab-ci"`) and nothing else: no client field chooses
//! a variable or a file of the server, or where a secret goes.
//!
//! The secret is read when a fetch starts ([`reference`]), kept in a
//! [`Secret`] whose `Debug` and `Display` print nothing of it, and handed
//! to the tool that needs it outside its command line: Git's remote
//! ([`crate::source::git::remote`]) only when its URL is bound, a crawl's
//! requests ([`site`]) only for the pages and redirects that are.

mod binding;
mod declared;
mod reference;
mod site;

pub use binding::Bound;
pub use declared::{is_name, Credentials, Declared, Lent};
pub use reference::SecretRef;
pub use site::SiteCredential;

/// Why a source cannot use the credential it names. No message names a
/// variable or file of the server, or says whether one exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("a credential is named by the server's operator (letters, digits, '-', '_', '.'), not given by value: a value of {0} characters was refused and not stored")]
    Form(usize),
    #[error("no credential named {0:?} may be used for this source: credentials are declared by the server's operator, each for its own hosts and libraries (an admin lists them: GET /api/credentials or `docshelf credentials`)")]
    NotLent(String),
    #[error("this source names its credential by a reference to the server's environment or files (env:…, file:…), which a request may no longer choose: an operator declares it by name (--credential NAME=REFERENCE@HOST) and the source names it as credential NAME")]
    Stored,
    #[error("the credential {0:?} cannot be read on the server now (its operator finds why in the server's log)")]
    Unreadable(String),
    #[error("the credential {0:?} is not something an HTTP header can carry")]
    NotAHeader(String),
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

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        let secret = Secret("hunter2".into());
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        assert!(!secret.basic_authorization().contains("hunter2"));
        // user:password is used as given; a bare token as Basic's password.
        assert_eq!(Secret("u:p".into()).basic_authorization(), "Basic dTpw");
    }
}
