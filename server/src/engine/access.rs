//! The engine's side of access: who a token is, tokens and the audit log
//! managed by admins, and the checks every other engine call makes with
//! its caller.
//!
//! Reads are filtered, not refused: a caller sees the catalog through
//! [`Engine::visible_libraries`], so a library it may not read is absent
//! from listings, resolution, searches (their scope is the visible
//! libraries, set before ranking), documents, jobs and sources alike, and
//! a name it cannot see is refused exactly as a name that does not exist.
//! Writes are refused with `not_permitted` (403) when the caller's grants
//! do not cover their library, before the library is looked up, so the
//! refusal says nothing about whether it exists.

use std::sync::Arc;

use index_core::access::{AuditEntry, Caller, CreatedToken, NewToken, Role, TokenInfo};
use index_core::catalog::LibraryInfo;
use index_core::validate;

use super::{Engine, EngineError};
use crate::access::AccessError;

/// Most audit entries one listing returns.
pub const MAX_AUDIT_ENTRIES: usize = 10_000;

impl Engine {
    /// The token a presented secret names, if it is current.
    pub async fn identify(&self, secret: &str) -> Result<TokenInfo, EngineError> {
        Ok(self.tokens.identify(&self.store, secret).await?)
    }

    /// Fails unless `caller` holds `role` on `library`: a caller without
    /// a token, where the server has tokens, is told it needs one.
    ///
    /// The name is checked first ([`validate::lookup`]): a write names its
    /// library before anything else, and a name with a control character
    /// or over its limit is refused as `invalid_name` whatever the caller
    /// holds, so what the audit log records of it is a refusal for the
    /// name, not a permission question about a library that cannot exist.
    pub fn require(&self, caller: &Caller, role: Role, library: &str) -> Result<(), EngineError> {
        validate::lookup("library", library)?;
        if caller.permissions.allows(role, library) {
            return Ok(());
        }
        Err(refusal(
            caller,
            format!("{} the library {library:?}", verb(role)),
        ))
    }

    /// Fails unless `caller` is an admin.
    pub fn require_admin(&self, caller: &Caller, action: &str) -> Result<(), EngineError> {
        if caller.permissions.is_admin() {
            return Ok(());
        }
        Err(refusal(caller, action.to_owned()))
    }

    /// Whether `caller` may read `library`.
    pub fn may_read(caller: &Caller, library: &str) -> bool {
        caller.permissions.allows(Role::Read, library)
    }

    /// The libraries `caller` may read, as the catalog has them.
    pub async fn visible_libraries(
        &self,
        caller: &Caller,
    ) -> Result<Arc<Vec<LibraryInfo>>, EngineError> {
        let all = self.store.libraries().await?;
        if caller.permissions.reads_everything() {
            return Ok(all);
        }
        Ok(Arc::new(
            all.iter()
                .filter(|l| Self::may_read(caller, &l.name))
                .cloned()
                .collect(),
        ))
    }

    /// Appends an audit entry for a write that ended with `result`, and
    /// passes the result on. An entry that cannot be written is logged,
    /// and does not undo or fail the write it records.
    ///
    /// A write refused to a caller without a token, where the server has
    /// tokens, is not entered: anyone can send those, and each entry is a
    /// commit, so logging them would let anyone grow the log.
    ///
    /// The target is what the client named: it is cut to 500 characters
    /// and stored with its control and bidi characters escaped
    /// ([`AuditEntry::one_line`]), so no name can add a line to the log.
    pub async fn audited<T>(
        &self,
        caller: &Caller,
        action: &str,
        target: &str,
        result: Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        if result.is_err() && caller.tokens_required && !caller.signed_in {
            return result;
        }
        let outcome = match &result {
            Ok(_) => "ok".to_owned(),
            Err(err) => err.code().name().to_owned(),
        };
        let entry = AuditEntry {
            at_micros: crate::store::now_micros(),
            token: caller.name.clone(),
            action: action.to_owned(),
            target: target.chars().take(500).collect(),
            outcome,
        }
        .one_line();
        if let Err(err) = self.store.append_audit(&entry).await {
            tracing::error!(%err, action, "cannot append to the audit log");
        }
        result
    }

    /// Makes a token (admins only); its secret is in the answer and
    /// nowhere else.
    // The name as Debug: it is not checked yet, and a `\n` in it must not
    // start a line of the server's log.
    #[tracing::instrument(skip_all, fields(name = ?request.name))]
    pub async fn create_token(
        &self,
        caller: &Caller,
        request: NewToken,
    ) -> Result<CreatedToken, EngineError> {
        let name = request.name.chars().take(64).collect::<String>();
        let result = match self.require_admin(caller, "make tokens") {
            Ok(()) => self
                .tokens
                .create(&self.store, &caller.name, request)
                .await
                .map_err(EngineError::from),
            Err(err) => Err(err),
        };
        self.audited(caller, "create_token", &name, result).await
    }

    /// Every token, without secrets (admins only).
    pub async fn list_tokens(&self, caller: &Caller) -> Result<Vec<TokenInfo>, EngineError> {
        self.require_admin(caller, "list tokens")?;
        Ok(self.tokens.list(&self.store).await?)
    }

    /// Revokes a token (admins only): every replica refuses it within its
    /// read-consistency interval, this one at once.
    #[tracing::instrument(skip(self, caller))]
    pub async fn revoke_token(&self, caller: &Caller, id: &str) -> Result<TokenInfo, EngineError> {
        let result = match self.require_admin(caller, "revoke tokens") {
            Ok(()) => self
                .tokens
                .revoke(&self.store, id)
                .await
                .map_err(EngineError::from),
            Err(err) => Err(err),
        };
        let target = match &result {
            Ok(info) => info.name.clone(),
            Err(_) => id.chars().take(64).collect(),
        };
        self.audited(caller, "revoke_token", &target, result).await
    }

    /// The newest audit entries, newest first (admins only), each one line
    /// ([`AuditEntry::one_line`]; entries written before targets were
    /// escaped are escaped here), for every face that shows them.
    pub async fn audit_log(
        &self,
        caller: &Caller,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, EngineError> {
        self.require_admin(caller, "read the audit log")?;
        let entries = self.store.audit(limit.min(MAX_AUDIT_ENTRIES)).await?;
        Ok(entries.into_iter().map(AuditEntry::one_line).collect())
    }
}

/// Why `caller` may not `action`: it needs a token at all, or its token
/// does not grant this.
fn refusal(caller: &Caller, action: String) -> EngineError {
    if caller.tokens_required && !caller.signed_in {
        return AccessError::Missing.into();
    }
    AccessError::NotPermitted {
        caller: caller.name.clone(),
        action,
    }
    .into()
}

fn verb(role: Role) -> &'static str {
    match role {
        Role::Read => "read",
        Role::Write => "write to",
        Role::Admin => "administer",
    }
}
