//! Token secrets: 256 random bits, shown once, kept only as their SHA-256.
//!
//! A plain hash (no salt, no slow KDF) is enough: the secret is random and
//! as long as the hash, so there is no dictionary to guess from, and a
//! fast hash keeps the check off a search's latency.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What every docshelf token starts with, so secret scanners (and people)
/// can tell one when they see it.
pub const PREFIX: &str = "dsk_";

/// A new secret: `dsk_` and 43 characters of URL-safe base64.
pub fn generate() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!(
        "{PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    ))
}

/// The SHA-256 digest of a secret.
pub fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// A digest as stored: lower-case hex.
pub fn to_hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A stored hex digest read back; `None` if it is not one.
pub fn from_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Whether two digests are equal, in time that does not depend on where
/// they differ.
pub fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    bool::from(a.ct_eq(b))
}

/// The part of a secret a listing shows, so people can tell tokens apart:
/// the prefix and four characters (24 bits of 256).
pub fn shown_prefix(secret: &str) -> String {
    secret.chars().take(PREFIX.len() + 4).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_new_each_time_and_their_digests_round_trip() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with(PREFIX) && a.len() == PREFIX.len() + 43, "{a}");
        let d = digest(&a);
        assert_eq!(from_hex(&to_hex(&d)), Some(d));
        assert!(same(&d, &digest(&a)));
        assert!(!same(&d, &digest(&b)));
        assert_eq!(from_hex("zz"), None);
        assert_eq!(shown_prefix(&a).len(), 8);
    }
}
