//! What a crawl tells the job about each address it met, what it keeps of
//! each page it stored, and how it ended.

use std::collections::BTreeMap;

use index_core::format::Format;

use crate::source::fetch::Validators;

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
    /// The same finding, its address renamed by `rename`.
    pub fn renamed(self, rename: impl Fn(&str) -> String) -> Self {
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
                record,
            },
            Self::Unchanged { address, record } => Self::Unchanged {
                address: rename(&address),
                record,
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
