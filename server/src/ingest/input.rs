//! What a job reads: a file's bytes, the address it is stored under, and
//! how it is read (by its name, as a fetched page's media type said, or as
//! a registry's package archive).

use index_core::job::Upload;
use ingest_core::docs_tree::DocsSelection;
use ingest_core::extract::Format;

/// One thing for a job to read: a file's bytes and the address it is
/// stored under.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
    pub read: Read,
}

/// How an input is read.
#[derive(Debug, Clone)]
pub enum Read {
    /// By its name's extension: uploads.
    ByName,
    /// As this format, whatever its name: a fetched page, whose
    /// `Content-Type` said what it is (a URL often has no extension).
    As(Format),
    /// A package archive from a registry, of which only the documentation
    /// is read (README, docs folder), or what the source's selection asks.
    PackageDocs(DocsSelection),
}

impl Input {
    /// Whether this input is read as a PDF of its own (not an archive).
    pub(super) fn reads_as_pdf(&self) -> bool {
        match self.read {
            Read::ByName => Format::from_path(&self.name) == Some(Format::Pdf),
            Read::As(format) => format == Format::Pdf,
            Read::PackageDocs(_) => false,
        }
    }
}

impl From<Upload> for Input {
    fn from(upload: Upload) -> Self {
        Self {
            name: upload.name,
            bytes: upload.bytes,
            read: Read::ByName,
        }
    }
}
