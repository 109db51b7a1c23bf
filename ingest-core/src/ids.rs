//! Deterministic ids: chunks, sources, content hashes.
//!
//! A chunk's id is a hash of where it lives and what it says, so uploading
//! the same file twice produces the same ids (and stores nothing new), while
//! the same text in another library, version or file is another chunk.

use sha2::{Digest, Sha256};

/// The id of the chunk at `index` of `file_path` in `library`/`version` with
/// text `text`: 32 hex digits (128 bits of SHA-256).
///
/// The index is part of the key because a document may repeat a paragraph
/// word for word (boilerplate, a warning box); both copies must be stored.
/// `text` is what the chunk is embedded as, its context line included
/// ([`crate::context::embedding_input`]): a page whose title or headings
/// change gets new ids, and so new vectors, even where its body did not.
pub fn chunk_id(library: &str, version: &str, file_path: &str, index: usize, text: &str) -> String {
    let mut hasher = Sha256::new();
    // Length-prefix every field so ("ab","c") and ("a","bc") differ.
    for field in [
        library.as_bytes(),
        version.as_bytes(),
        file_path.as_bytes(),
        text.as_bytes(),
    ] {
        hasher.update((field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
    hasher.update((index as u64).to_le_bytes());
    hex(&hasher.finalize()[..16])
}

/// The id of the source that fills `library` `version` (one source per
/// version): `src-` and 16 hex digits, stable, so adding the same place
/// again finds the source it made before, and fit for a URL path whatever
/// characters the names hold.
pub fn source_id(library: &str, version: &str) -> String {
    let mut hasher = Sha256::new();
    for field in [library.as_bytes(), version.as_bytes()] {
        hasher.update((field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
    format!("src-{}", hex(&hasher.finalize()[..8]))
}

/// The SHA-256 of a fetched page or file, in hex: how a refresh tells an
/// unchanged page from a changed one without extracting it.
pub fn content_hash(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_depend_on_every_field() {
        let id = chunk_id(
            "react",
            "18.2",
            "hooks.md",
            0,
            "useEffect runs after render.",
        );
        assert_eq!(
            id,
            chunk_id(
                "react",
                "18.2",
                "hooks.md",
                0,
                "useEffect runs after render."
            )
        );
        assert_eq!(id.len(), 32);
        for other in [
            chunk_id("vue", "18.2", "hooks.md", 0, "useEffect runs after render."),
            chunk_id(
                "react",
                "18.3",
                "hooks.md",
                0,
                "useEffect runs after render.",
            ),
            chunk_id(
                "react",
                "18.2",
                "other.md",
                0,
                "useEffect runs after render.",
            ),
            chunk_id(
                "react",
                "18.2",
                "hooks.md",
                1,
                "useEffect runs after render.",
            ),
            chunk_id(
                "react",
                "18.2",
                "hooks.md",
                0,
                "useEffect runs before render.",
            ),
            chunk_id(
                "reac",
                "t18.2",
                "hooks.md",
                0,
                "useEffect runs after render.",
            ),
        ] {
            assert_ne!(id, other);
        }
    }
}
