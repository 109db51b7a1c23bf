//! One module per page of the dashboard.

mod ask;
mod document;
pub(crate) mod libraries;
mod not_found;
pub(crate) mod search;
mod status;
mod upload;

pub use ask::AskPage;
pub use document::DocumentPage;
pub use libraries::LibrariesPage;
pub use not_found::NotFound;
pub use search::SearchPage;
pub use status::StatusPage;
pub use upload::UploadPage;
