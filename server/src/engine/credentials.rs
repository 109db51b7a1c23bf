//! The credentials the operator declared: listed for admins, and lent to
//! a source for the one address it fetches (the one check of whether a
//! source may use a credential, [`crate::source::credential::Credentials::lend`]).

use index_core::access::Caller;
use index_core::source::{CredentialList, SourceRequest};
use url::Url;

use super::{Engine, EngineError};
use crate::source::credential::Lent;
use crate::source::SourceError;

impl Engine {
    /// The credentials the operator declared: names, where each is sent
    /// and for which libraries, never a secret or where it is kept. For
    /// admins, who tell writers which name a private source takes.
    pub fn credentials(&self, caller: &Caller) -> Result<CredentialList, EngineError> {
        self.require_admin(caller, "list the server's credentials")?;
        Ok(CredentialList {
            credentials: self.credentials.list(),
        })
    }

    /// The credential `request` names, lent to a source of `library` for
    /// requests to `sent_to`: the one check of whether a source may use a
    /// credential ([`crate::source::credential::Credentials::lend`]).
    pub(super) fn lend(
        &self,
        request: &SourceRequest,
        library: &str,
        sent_to: &Url,
    ) -> Result<Option<Lent>, EngineError> {
        let Some(asked) = request.credential.as_deref() else {
            return Ok(None);
        };
        let lent = self
            .credentials
            .lend(asked, library, &[sent_to])
            .map_err(SourceError::from)?;
        Ok(Some(lent))
    }
}
