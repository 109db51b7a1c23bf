//! Who is looking at the page, and what they may do: the signed-in
//! token's grants, fetched once the page has hydrated. The pages hide the
//! actions the server would refuse, by the same rule the server applies
//! (`index_core::access::Permissions::allows`). Until it is known, write
//! actions stay hidden: a button that appears late is better than one that
//! is refused.

use index_core::access::{Caller, Role};
use leptos::prelude::*;

/// The page's caller, once known.
#[derive(Clone, Copy)]
pub struct Viewer(RwSignal<Option<Caller>>);

impl Viewer {
    /// Creates the viewer for the page and fetches who it is.
    pub fn provide() -> Self {
        let viewer = Self(RwSignal::new(None));
        provide_context(viewer);
        Effect::new(move |_| viewer.reload());
        viewer
    }

    /// Asks the server again (after signing in or out).
    pub fn reload(self) {
        leptos::task::spawn_local(async move {
            if let Ok(caller) = crate::api::get_caller().await {
                self.0.set(Some(caller));
            }
        });
    }

    /// The caller, once known.
    pub fn caller(self) -> Option<Caller> {
        self.0.get()
    }

    /// Whether the caller may `role` on `library` (false while unknown).
    pub fn may(self, role: Role, library: &str) -> bool {
        self.0.with(|c| {
            c.as_ref()
                .is_some_and(|c| c.permissions.allows(role, library))
        })
    }

    /// Whether the caller may write to some library.
    pub fn writes_any(self) -> bool {
        self.0
            .with(|c| c.as_ref().is_some_and(|c| c.permissions.writes_any()))
    }

    /// Whether the caller manages tokens.
    pub fn is_admin(self) -> bool {
        self.0
            .with(|c| c.as_ref().is_some_and(|c| c.permissions.is_admin()))
    }

    /// Whether who the caller is has been fetched.
    pub fn known(self) -> bool {
        self.0.with(Option::is_some)
    }
}

/// The page's viewer (a page outside the app has none: it may do nothing).
pub fn use_viewer() -> Viewer {
    use_context::<Viewer>().unwrap_or_else(|| Viewer(RwSignal::new(None)))
}
