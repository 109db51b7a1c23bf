//! What a crawl tells the job about each address it met, what it keeps of
//! each page it stored, and how it ended.

use std::collections::BTreeMap;

use index_core::format::Format;

use crate::source::fetch::{FetchError, Validators};

/// What a crawl keeps of each page it stored, to ask "changed since?"
/// next time and to follow the page's links when it has not changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageRecord {
    #[serde(default, flatten)]
    pub validators: Validators,
    /// SHA-256 of the page as fetched.
    pub hash: String,
    /// The in-scope links it had.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}

/// Pages stored by the last crawl, by address.
pub type Previous = BTreeMap<String, PageRecord>;

/// What the crawl found at one address.
#[derive(Debug)]
pub enum Found {
    /// A page to read: new, or changed since the last crawl.
    Page {
        address: String,
        format: Format,
        bytes: Vec<u8>,
        record: PageRecord,
    },
    /// A page as the last crawl stored it.
    Unchanged { address: String, record: PageRecord },
    /// A page that could not be taken; `gone` when it no longer exists.
    Failed {
        address: String,
        reason: String,
        gone: bool,
    },
    /// Not a page to store: another's duplicate, not a document, or one
    /// that asks not to be indexed.
    Skipped { address: String, reason: String },
    /// How many pages the crawl expects to take, once its sitemaps are
    /// read (within its page bound).
    Expected(usize),
}

impl Found {
    /// `address` could not be fetched, for `err`, said in words a user can
    /// act on: a site that asks to sign in is named as a private one (a
    /// registry or a Git server says so in its own words).
    /// `credential_sent`: whether this request carried the source's
    /// credential.
    pub fn failed(address: String, err: &FetchError, credential_sent: bool) -> Self {
        let reason = match (err.is_unauthorized(), credential_sent) {
            (true, false) => format!(
                "{err} (a private site: name a credential the server's operator declared for it, credential: NAME)"
            ),
            (true, true) => format!("{err} (it refused the credential given)"),
            (false, _) => err.to_string(),
        };
        Self::Failed {
            address,
            reason,
            gone: err.is_gone(),
        }
    }

    /// The same finding, its address and the links it records renamed by
    /// `rename` (a mirror's addresses as their source names them: a
    /// refresh follows the stored links through whichever mirror it then
    /// goes through).
    pub fn renamed(self, rename: impl Fn(&str) -> String) -> Self {
        let relinked = |mut record: PageRecord| {
            record.links = record.links.iter().map(|l| rename(l)).collect();
            record
        };
        match self {
            Self::Page {
                address,
                format,
                bytes,
                record,
            } => Self::Page {
                address: rename(&address),
                format,
                bytes,
                record: relinked(record),
            },
            Self::Unchanged { address, record } => Self::Unchanged {
                address: rename(&address),
                record: relinked(record),
            },
            Self::Failed {
                address,
                reason,
                gone,
            } => Self::Failed {
                address: rename(&address),
                reason,
                gone,
            },
            Self::Skipped { address, reason } => Self::Skipped {
                address: rename(&address),
                reason,
            },
            Self::Expected(n) => Self::Expected(n),
        }
    }
}

/// How a crawl ended.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every page within scope was visited: a page of the last crawl
    /// that was not found again is gone. When a bound stopped the crawl
    /// early this is false, and unvisited pages are kept.
    pub complete: bool,
    /// What a user should know about the crawl as a whole.
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(err: FetchError, credential_sent: bool) -> String {
        match Found::failed("https://x.io/a".into(), &err, credential_sent) {
            Found::Failed { reason, .. } => reason,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_site_that_asks_to_sign_in_is_named_private() {
        let asked = reason(FetchError::Status(401), false);
        assert!(
            asked.contains("401 (a private site: name a credential the server's operator declared"),
            "{asked}"
        );
        let refused = reason(FetchError::Status(403), true);
        assert!(
            refused.ends_with("(it refused the credential given)"),
            "{refused}"
        );
        assert_eq!(
            reason(FetchError::Status(500), false),
            "the server answered 500"
        );
    }
}
