//! Validation of user-supplied names.

/// Why a library or version name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} cannot be empty")]
    Empty { what: &'static str },
    #[error("{what} is longer than {max} characters")]
    TooLong { what: &'static str, max: usize },
    #[error("{what} may contain letters, digits, spaces and . _ - + @ only (found {found:?})")]
    BadCharacter { what: &'static str, found: char },
    #[error("\"latest\" is reserved: it means the newest version in searches")]
    ReservedVersion,
}

const MAX_NAME: usize = 100;

fn validate(what: &'static str, raw: &str) -> Result<String, NameError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(NameError::Empty { what });
    }
    if name.chars().count() > MAX_NAME {
        return Err(NameError::TooLong {
            what,
            max: MAX_NAME,
        });
    }
    if let Some(found) = name
        .chars()
        .find(|&c| !(c.is_alphanumeric() || matches!(c, ' ' | '.' | '_' | '-' | '+' | '@')))
    {
        return Err(NameError::BadCharacter { what, found });
    }
    Ok(name.to_owned())
}

/// A library name, trimmed.
pub fn library(raw: &str) -> Result<String, NameError> {
    validate("library", raw)
}

/// A version name, trimmed; `latest` is reserved.
pub fn version(raw: &str) -> Result<String, NameError> {
    let v = validate("version", raw)?;
    if crate::version::is_latest(&v) {
        return Err(NameError::ReservedVersion);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_checked() {
        assert_eq!(library("  react ").unwrap(), "react");
        assert_eq!(version("18.2.0-rc+1").unwrap(), "18.2.0-rc+1");
        assert_eq!(library(" "), Err(NameError::Empty { what: "library" }));
        assert!(matches!(
            library("a/b"),
            Err(NameError::BadCharacter { found: '/', .. })
        ));
        assert!(matches!(
            library("x'; DROP"),
            Err(NameError::BadCharacter { found: '\'', .. })
        ));
        assert_eq!(version("latest"), Err(NameError::ReservedVersion));
        assert!(library(&"x".repeat(101)).is_err());
    }
}
