//! One module per page of the dashboard, and one per part a page shares or
//! grows by: a job's progress (`job`), and the upload page's sources
//! (`add_source`, `sources`).

mod add_source;
mod ask;
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
