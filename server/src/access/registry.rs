//! The store's tokens, as this process knows them, and the one decision
//! of who a presented secret names.
//!
//! Every request with a token is checked here, so the table is cached: a
//! snapshot is trusted for the store's read-consistency interval, then read
//! again. A token made or revoked on another replica therefore counts here
//! within that interval; one made or revoked here counts at once.
//!
//! Lookup: the snapshot is keyed by the first 8 bytes of each secret's
//! SHA-256, and the whole digest is then compared in constant time, so the
//! time a check takes does not depend on how much of a guess was right.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use index_core::access::{CreatedToken, GrantError, NewToken, TokenInfo};
use tokio::sync::{Mutex, RwLock};

use super::secret;
use crate::store::tokens::StoredToken;
use crate::store::{Store, StoreError};

/// Why a token, or a request for one, was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("this request needs a token: send Authorization: Bearer <token>")]
    Missing,
    #[error("the token is not one this server knows")]
    Invalid,
    #[error("the token {name:?} expired; an admin can make a new one")]
    Expired { name: String },
    #[error("the token {name:?} was revoked; an admin can make a new one")]
    Revoked { name: String },
    #[error("tokens are not accepted in the query string ({0}), where logs keep them: send Authorization: Bearer <token>")]
    InQuery(String),
    #[error("too many requests with a wrong token came from this client; try again in {0} s")]
    TooManyAttempts(u64),
    /// A write or an admin action the caller's grants do not cover.
    #[error("the token {caller:?} may not {action}")]
    NotPermitted { caller: String, action: String },
    #[error("no token with id {0:?} (GET /api/tokens lists them)")]
    UnknownToken(String),
    #[error("a token named {0:?} exists already (revoked tokens keep their names, so that the audit log names one token); choose another name")]
    NameTaken(String),
    #[error(transparent)]
    Grant(#[from] GrantError),
    #[error("cannot make a token secret: {0}")]
    Random(getrandom::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a stored token cannot be read: {0}")]
    Corrupt(String),
}

/// A token as the snapshot holds it.
struct Known {
    digest: [u8; 32],
    info: TokenInfo,
}

/// The tokens as read at one moment.
struct Snapshot {
    read_at: Instant,
    /// By the first 8 bytes of their digest.
    by_key: HashMap<[u8; 8], Vec<Known>>,
}

/// The store's tokens, cached.
pub struct Registry {
    refresh: Duration,
    snapshot: RwLock<Option<Snapshot>>,
    /// One reload at a time: requests that find the snapshot stale while
    /// another reloads it wait for that reload instead of starting theirs.
    reloading: Mutex<()>,
}

fn key(digest: &[u8; 32]) -> [u8; 8] {
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest[..8]);
    key
}

fn now_secs() -> i64 {
    crate::store::now_micros() / 1_000_000
}

impl Registry {
    /// A registry that trusts what it read for `refresh`.
    pub fn new(refresh: Duration) -> Self {
        Self {
            refresh,
            snapshot: RwLock::new(None),
            reloading: Mutex::new(()),
        }
    }

    /// The token `presented` names, if it is known, current and not
    /// revoked.
    pub async fn identify(&self, store: &Store, presented: &str) -> Result<TokenInfo, AccessError> {
        let digest = secret::digest(presented);
        self.fresh(store).await?;
        let guard = self.snapshot.read().await;
        let found = guard
            .as_ref()
            .and_then(|s| s.by_key.get(&key(&digest)))
            .and_then(|candidates| candidates.iter().find(|k| secret::same(&k.digest, &digest)))
            .map(|k| k.info.clone());
        drop(guard);
        let info = found.ok_or(AccessError::Invalid)?;
        if info.revoked_at.is_some() {
            return Err(AccessError::Revoked { name: info.name });
        }
        if info.expires_at.is_some_and(|at| at <= now_secs()) {
            return Err(AccessError::Expired { name: info.name });
        }
        Ok(info)
    }

    /// Reads the table again if the snapshot is older than the interval.
    async fn fresh(&self, store: &Store) -> Result<(), AccessError> {
        let stale = |s: &Option<Snapshot>| {
            s.as_ref()
                .is_none_or(|s| s.read_at.elapsed() >= self.refresh)
        };
        if !stale(&*self.snapshot.read().await) {
            return Ok(());
        }
        let _turn = self.reloading.lock().await;
        if !stale(&*self.snapshot.read().await) {
            return Ok(());
        }
        let mut by_key: HashMap<[u8; 8], Vec<Known>> = HashMap::new();
        for stored in store.tokens().await? {
            let known = read(&stored)?;
            by_key.entry(key(&known.digest)).or_default().push(known);
        }
        *self.snapshot.write().await = Some(Snapshot {
            read_at: Instant::now(),
            by_key,
        });
        Ok(())
    }

    /// Forgets the snapshot, so the next check reads the table.
    async fn invalidate(&self) {
        *self.snapshot.write().await = None;
    }

    /// Every token, revoked and expired ones included, newest first.
    pub async fn list(&self, store: &Store) -> Result<Vec<TokenInfo>, AccessError> {
        let mut all = store
            .tokens()
            .await?
            .iter()
            .map(|s| read(s).map(|k| k.info))
            .collect::<Result<Vec<_>, _>>()?;
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.name.cmp(&b.name)));
        Ok(all)
    }

    /// Makes a token for `request`, recorded as made by `by`.
    ///
    /// Its name is one no token of the store has, in any case, revoked or
    /// not: the audit log names tokens, and two of one name would read as
    /// one. (Two replicas making the same name at the same moment can
    /// both succeed; tokens are made by people, not in races.)
    pub async fn create(
        &self,
        store: &Store,
        by: &str,
        request: NewToken,
    ) -> Result<CreatedToken, AccessError> {
        request.check()?;
        for stored in store.tokens().await? {
            if read(&stored)?.info.name.eq_ignore_ascii_case(&request.name) {
                return Err(AccessError::NameTaken(request.name));
            }
        }
        let token = secret::generate().map_err(AccessError::Random)?;
        let now = now_secs();
        let info = TokenInfo {
            id: uuid::Uuid::new_v4().simple().to_string(),
            name: request.name,
            grants: request.grants,
            prefix: secret::shown_prefix(&token),
            created_at: now,
            expires_at: request
                .expires_in_days
                .map(|days| now.saturating_add(i64::from(days) * 86_400)),
            revoked_at: None,
            created_by: by.to_owned(),
        };
        store
            .save_token(&StoredToken {
                id: info.id.clone(),
                hash: secret::to_hex(&secret::digest(&token)),
                record: encode(&info)?,
            })
            .await?;
        self.invalidate().await;
        Ok(CreatedToken { token, info })
    }

    /// Revokes the token with id `id` (revoking it again changes nothing).
    pub async fn revoke(&self, store: &Store, id: &str) -> Result<TokenInfo, AccessError> {
        let stored = store
            .tokens()
            .await?
            .into_iter()
            .find(|t| t.id == id)
            .ok_or_else(|| AccessError::UnknownToken(id.chars().take(64).collect()))?;
        let mut info = read(&stored)?.info;
        if info.revoked_at.is_none() {
            info.revoked_at = Some(now_secs());
            store
                .save_token(&StoredToken {
                    record: encode(&info)?,
                    ..stored
                })
                .await?;
            self.invalidate().await;
        }
        Ok(info)
    }
}

fn encode(info: &TokenInfo) -> Result<String, AccessError> {
    serde_json::to_string(info).map_err(|e| AccessError::Corrupt(e.to_string()))
}

fn read(stored: &StoredToken) -> Result<Known, AccessError> {
    let digest = secret::from_hex(&stored.hash).ok_or_else(|| {
        AccessError::Corrupt(format!("token {}: its hash is not a SHA-256", stored.id))
    })?;
    let info: TokenInfo = serde_json::from_str(&stored.record)
        .map_err(|e| AccessError::Corrupt(format!("token {}: {e}", stored.id)))?;
    Ok(Known { digest, info })
}
