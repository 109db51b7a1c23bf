//! Who may read and write which library: roles granted per library
//! pattern, the tokens that carry them, and the audit log of what they did.
//!
//! Pure data and the one rule every face applies ([`Permissions::allows`]):
//! the server decides with it, and the dashboard hides the actions it
//! would refuse with the same function, so the two cannot disagree.

use serde::{Deserialize, Serialize};

/// What a grant lets its holder do, each role including the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Role {
    /// Search, list and read the libraries it covers.
    Read,
    /// Also upload, add, refresh and delete sources, delete versions and
    /// documents, and vote on results.
    Write,
    /// Every library, and tokens and the audit log too.
    Admin,
}

impl Role {
    pub const fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Admin => "admin",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = GrantError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(Self::Read),
            "write" => Ok(Self::Write),
            "admin" => Ok(Self::Admin),
            other => Err(GrantError::Role(other.to_owned())),
        }
    }
}

/// A role on the libraries whose names match a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Grant {
    pub role: Role,
    /// Library names, exact, with `*` standing for any run of characters
    /// (`team-*`, `*`). An admin grant covers every library whatever it says.
    #[serde(default = "every_library")]
    pub libraries: String,
}

fn every_library() -> String {
    "*".to_owned()
}

/// Why a grant or a token request is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    #[error("unknown role {0:?}: use read, write or admin")]
    Role(String),
    #[error("a grant is ROLE:PATTERN (read:team-*, write:docs) or admin, not {0:?}")]
    Shape(String),
    #[error("the library pattern {0:?} is empty or longer than 200 characters")]
    Pattern(String),
    /// A character no library name holds: the grant would match nothing,
    /// and a NUL or a bidirectional override would make it read, in a
    /// listing, as a grant on another library.
    #[error("a library pattern holds what library names do (letters, digits, spaces and . _ - + @) and *, not {}", shown(*found))]
    PatternCharacter { found: char },
    /// Library names are stored trimmed, so `" alpha "` matches none.
    #[error("the library pattern {0:?} starts or ends with a space, so it matches no library (names are stored trimmed)")]
    PatternSpaces(String),
    #[error("a token needs at least one grant")]
    NoGrants,
    #[error("a token needs a name of 1 to 64 letters, digits, '-', '_' or '.'")]
    Name,
    #[error("{0:?} names a caller the server itself acts as (the audit log could not tell them apart); choose another name")]
    ReservedName(String),
    #[error("a token may hold at most {MAX_GRANTS} grants")]
    TooManyGrants,
    #[error("the expiry must be in the future")]
    Expired,
}

/// A character as a message shows it: itself where it prints as itself,
/// else its code point, so a message never carries a control or bidi
/// character.
fn shown(c: char) -> String {
    if crate::validate::is_control_or_bidi(c) || c.is_whitespace() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("{c:?}")
    }
}

/// Most grants one token holds.
pub const MAX_GRANTS: usize = 64;

impl std::str::FromStr for Grant {
    type Err = GrantError;

    /// `read:PATTERN`, `write:PATTERN`, or `admin` (the command line's form).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (role, libraries) = match s.split_once(':') {
            Some((role, pattern)) => (role.parse()?, pattern.trim().to_owned()),
            None if s.trim().eq_ignore_ascii_case("admin") => (Role::Admin, every_library()),
            None => return Err(GrantError::Shape(s.to_owned())),
        };
        let grant = Self { role, libraries };
        grant.check()?;
        Ok(grant)
    }
}

impl std::fmt::Display for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.role {
            Role::Admin => f.write_str("admin"),
            role => write!(f, "{}:{}", role.name(), self.libraries),
        }
    }
}

impl Grant {
    /// The pattern could match a library: within its length, of the
    /// characters library names are made of (`validate::library`) and `*`,
    /// and not padded with spaces, which stored names never are. An admin
    /// grant is checked too, though it covers every library whatever it
    /// says: a token's listing shows it.
    fn check(&self) -> Result<(), GrantError> {
        let pattern = self.libraries.as_str();
        if pattern.is_empty() || pattern.chars().count() > 200 {
            return Err(GrantError::Pattern(crate::validate::cut(pattern, 40)));
        }
        if let Some(found) = pattern
            .chars()
            .find(|&c| !(c == '*' || crate::validate::is_name_char(c)))
        {
            return Err(GrantError::PatternCharacter { found });
        }
        if pattern.trim() != pattern {
            return Err(GrantError::PatternSpaces(pattern.to_owned()));
        }
        Ok(())
    }

    /// Whether this grant gives `role` on `library`.
    pub fn allows(&self, role: Role, library: &str) -> bool {
        match self.role {
            Role::Admin => true,
            held => held >= role && matches(&self.libraries, library),
        }
    }
}

/// Whether `name` matches `pattern`, where `*` is any run of characters
/// (none included) and everything else stands for itself. Linear in the
/// name for each star: the classic greedy match with one backtrack point.
/// It compares bytes, which is exact for UTF-8: `*` is one byte that no
/// other character's encoding contains, and equal runs of bytes are equal
/// runs of characters. No allocation: a caller's grants are matched
/// against every stored library on every read.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == b'*')
}

/// What one caller may do: the union of its grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Permissions {
    pub grants: Vec<Grant>,
}

impl Permissions {
    /// Everything: a server without tokens, the admin token, a local process.
    pub fn everything() -> Self {
        Self {
            grants: vec![Grant {
                role: Role::Admin,
                libraries: every_library(),
            }],
        }
    }

    /// Reads of every library, nothing else: a request without a token on
    /// a server whose reads are open.
    pub fn read_all() -> Self {
        Self {
            grants: vec![Grant {
                role: Role::Read,
                libraries: every_library(),
            }],
        }
    }

    /// Nothing at all.
    pub fn nothing() -> Self {
        Self { grants: Vec::new() }
    }

    /// Whether `role` is granted on `library`.
    pub fn allows(&self, role: Role, library: &str) -> bool {
        self.grants.iter().any(|g| g.allows(role, library))
    }

    /// Whether every library is readable, so that reads need no filter.
    pub fn reads_everything(&self) -> bool {
        self.grants
            .iter()
            .any(|g| g.role == Role::Admin || g.libraries.chars().all(|c| c == '*'))
    }

    /// Whether tokens and the audit log are this caller's to manage.
    pub fn is_admin(&self) -> bool {
        self.grants.iter().any(|g| g.role == Role::Admin)
    }

    /// Whether some library could be written (the dashboard shows the
    /// upload and source forms only then).
    pub fn writes_any(&self) -> bool {
        self.grants.iter().any(|g| g.role >= Role::Write)
    }
}

/// A token as listed: never its secret, which is shown once, when it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenInfo {
    /// The id revocation takes (`DELETE /api/tokens/{id}`).
    pub id: String,
    pub name: String,
    pub grants: Vec<Grant>,
    /// The secret's first characters, so a person can tell tokens apart.
    pub prefix: String,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    /// When it stops working, if ever (seconds since the Unix epoch).
    pub expires_at: Option<i64>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<i64>,
    /// The name of the token that made it.
    pub created_by: String,
}

/// A request for a new token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// A name for people and the audit log (`ci-react`, `agents`).
    pub name: String,
    /// What it may do, e.g. `[{"role": "read", "libraries": "team-*"}]`.
    pub grants: Vec<Grant>,
    /// Days until it stops working; none: it works until revoked.
    #[serde(default)]
    pub expires_in_days: Option<u32>,
}

/// The names of the callers the server acts as itself: the `--token`
/// admin, a local process on the store, and a request without a token.
pub const RESERVED_NAMES: [&str; 3] = ["admin", "local", "anonymous"];

impl NewToken {
    /// Every part within its limits, its name not a reserved one.
    pub fn check(&self) -> Result<(), GrantError> {
        let name_ok = (1..=64).contains(&self.name.len())
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok {
            return Err(GrantError::Name);
        }
        if RESERVED_NAMES
            .iter()
            .any(|r| r.eq_ignore_ascii_case(&self.name))
        {
            return Err(GrantError::ReservedName(self.name.clone()));
        }
        if self.grants.is_empty() {
            return Err(GrantError::NoGrants);
        }
        if self.grants.len() > MAX_GRANTS {
            return Err(GrantError::TooManyGrants);
        }
        if self.expires_in_days == Some(0) {
            return Err(GrantError::Expired);
        }
        self.grants.iter().try_for_each(Grant::check)
    }
}

/// A token just made: the secret, shown this once, and what was stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedToken {
    /// The bearer token. docshelf keeps only its hash: it cannot be shown again.
    pub token: String,
    pub info: TokenInfo,
}

/// Who the caller is, as the dashboard shows it and hides what it may not do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Caller {
    /// The token's name; `anonymous` without one, `admin` for the server's
    /// own `--token`, `local` where no token is set.
    pub name: String,
    /// Who this caller is for as long as it exists, and nobody else: a
    /// stored token's id, else the name of a caller the server acts as
    /// itself (`admin`, `anonymous`, `local`, `nobody`). Not its name: two
    /// tokens may share one, and a name is free again once its token is
    /// revoked. What owns the caller's sessions (their sticky library and
    /// Ask history). Kept on the server: a client has no use for it.
    #[serde(skip)]
    pub id: String,
    pub permissions: Permissions,
    /// Whether a token was given (the dashboard offers sign-out then).
    pub signed_in: bool,
    /// Whether this server asks for tokens at all.
    pub tokens_required: bool,
}

impl Caller {
    /// A caller that may do nothing: what a request that reached a face
    /// without passing the server's check acts as (none should), so a
    /// missing check fails closed.
    pub fn nobody() -> Self {
        Self {
            name: "anonymous".to_owned(),
            id: "nobody".to_owned(),
            permissions: Permissions::nothing(),
            signed_in: false,
            tokens_required: true,
        }
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// Microseconds since the Unix epoch.
    pub at_micros: i64,
    /// The name of the token that acted.
    pub token: String,
    /// `upload`, `add_source`, `refresh_source`, `delete_source`, `delete`,
    /// `feedback`, `create_token`, `revoke_token`.
    pub action: String,
    /// What it acted on: `library/version/path`, a source id, a token's name.
    pub target: String,
    /// `ok`, or the error code that refused it.
    pub outcome: String,
}

impl AuditEntry {
    /// The entry with its control and bidi characters escaped
    /// ([`crate::validate::one_line`]), so one entry shows as one line
    /// however it is printed: a target is what a client sent, and a name
    /// holding `\n` and a made-up line would otherwise print as a second
    /// entry. Every view of the log reads entries through this.
    pub fn one_line(self) -> Self {
        let line = |text: String| crate::validate::one_line(&text).into_owned();
        Self {
            at_micros: self.at_micros,
            token: line(self.token),
            action: line(self.action),
            target: line(self.target),
            outcome: line(self.outcome),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_with_stars_only() {
        for (pattern, name, expected) in [
            ("*", "anything", true),
            ("*", "", true),
            ("react", "react", true),
            ("react", "react-dom", false),
            ("team-*", "team-a", true),
            ("team-*", "team-", true),
            ("team-*", "teams", false),
            ("*-docs", "rust-docs", true),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("a?c", "abc", false),
            ("**", "x", true),
            ("e*", "école", false),
            ("é*", "école", true),
            ("éc*", "écrire", true),
            ("*ße", "straße", true),
            ("*ß", "straße", false),
        ] {
            assert_eq!(matches(pattern, name), expected, "{pattern} ~ {name}");
        }
    }

    #[test]
    fn roles_include_the_lesser_ones_and_admin_covers_everything() {
        let permissions = Permissions {
            grants: vec!["read:*".parse().unwrap(), "write:team-*".parse().unwrap()],
        };
        assert!(permissions.allows(Role::Read, "other"));
        assert!(!permissions.allows(Role::Write, "other"));
        assert!(permissions.allows(Role::Write, "team-a"));
        assert!(!permissions.is_admin());
        assert!(permissions.reads_everything());
        assert!(Permissions::everything().allows(Role::Admin, "x"));
        let narrow = Permissions {
            grants: vec!["read:a".parse().unwrap()],
        };
        assert!(!narrow.reads_everything());
        assert!(!narrow.writes_any());
    }

    #[test]
    fn grants_read_and_print_in_the_command_lines_form() {
        let grant: Grant = "write:team-*".parse().unwrap();
        assert_eq!(grant.to_string(), "write:team-*");
        assert_eq!("admin".parse::<Grant>().unwrap().role, Role::Admin);
        assert!("owner:x".parse::<Grant>().is_err());
        assert!("read".parse::<Grant>().is_err());
        assert!("read:".parse::<Grant>().is_err());
        assert_eq!("read: alpha ".parse::<Grant>().unwrap().libraries, "alpha");
    }

    #[test]
    fn patterns_that_could_match_no_library_are_refused() {
        let request = |libraries: &str| NewToken {
            name: "probe".into(),
            grants: vec![Grant {
                role: Role::Read,
                libraries: libraries.into(),
            }],
            expires_in_days: None,
        };
        for ok in ["alpha", "team-*", "*", "my docs", "é+@_.-"] {
            assert_eq!(request(ok).check(), Ok(()), "{ok:?}");
        }
        for (bad, found) in [
            ("al\0pha", '\0'),
            ("al\u{202E}pha", '\u{202E}'),
            ("al\u{2066}pha", '\u{2066}'),
            ("a\nb", '\n'),
            ("a/b", '/'),
        ] {
            assert_eq!(
                request(bad).check(),
                Err(GrantError::PatternCharacter { found }),
                "{bad:?}"
            );
        }
        for bad in [" alpha ", "alpha ", " *"] {
            assert_eq!(
                request(bad).check(),
                Err(GrantError::PatternSpaces(bad.to_owned())),
                "{bad:?}"
            );
        }
        let message = request("a\u{202E}b").check().unwrap_err().to_string();
        assert!(message.contains("U+202E"), "{message}");
        assert!(!message.chars().any(crate::validate::is_control_or_bidi));
    }

    #[test]
    fn token_requests_are_checked() {
        let ok = NewToken {
            name: "ci-react".into(),
            grants: vec!["write:react".parse().unwrap()],
            expires_in_days: Some(30),
        };
        assert_eq!(ok.check(), Ok(()));
        for bad in [
            NewToken {
                name: "has space".into(),
                ..ok.clone()
            },
            NewToken {
                grants: vec![],
                ..ok.clone()
            },
            NewToken {
                expires_in_days: Some(0),
                ..ok.clone()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
