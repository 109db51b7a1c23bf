//! What memory holds of the versions one search covers: all of them, some
//! (the rest answered by LanceDB and merged, see `store::retrieve`), or
//! none.

use super::Held;

/// What memory holds of the versions a search covers.
pub enum Coverage {
    /// Every version, held and current.
    All(Held),
    /// Some: these are held, the `missing` (library, version) pairs are
    /// not (or not current).
    Part {
        held: Held,
        missing: Vec<(String, String)>,
    },
    /// None of them (or no copy at all).
    None,
}

impl Coverage {
    /// How much is held, in a word (for tracing).
    pub fn name(&self) -> &'static str {
        match self {
            Self::All(_) => "all",
            Self::Part { .. } => "part",
            Self::None => "none",
        }
    }
}
