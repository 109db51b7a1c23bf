//! One module per page of the dashboard, and one per part a page shares or
//! grows by: a job's progress (`job`), the upload page's sources
//! (`add_source`, `sources`), and the libraries page's comparison of two
//! versions (`changes`).

mod add_source;
mod ask;
mod changes;
mod document;
mod job;
pub(crate) mod libraries;
mod not_found;
pub(crate) mod search;
mod settings;
mod sources;
mod status;
mod upload;

pub use ask::AskPage;
pub use document::DocumentPage;
pub use libraries::LibrariesPage;
pub use not_found::NotFound;
pub use search::SearchPage;
pub use settings::SettingsPage;
pub use status::StatusPage;
pub use upload::UploadPage;
