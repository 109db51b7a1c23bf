//! The kinds of file docshelf reads, named once.
//!
//! The extractor dispatches on [`Format`], the CLI picks files from folders
//! by it, the dashboard's file picker offers its extensions and every error
//! message lists them from here. It lives outside [`crate::extract`] so that
//! the browser, which extracts nothing, still knows what may be uploaded.

/// What kind of file an upload is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Text,
    Html,
    Pdf,
    /// Word documents (Office Open XML): their headings, paragraphs, lists
    /// and tables.
    Docx,
    /// Jupyter notebooks: their Markdown cells and code, not their outputs.
    Notebook,
    Zip,
    /// A gzip'd tar: `.tar.gz`, `.tgz`, and Rust's `.crate`, which is one.
    TarGz,
}

impl Format {
    /// Every format docshelf reads.
    pub const ALL: [Self; 8] = [
        Self::Markdown,
        Self::Text,
        Self::Html,
        Self::Pdf,
        Self::Docx,
        Self::Notebook,
        Self::Zip,
        Self::TarGz,
    ];

    /// The file-name extensions that mean this format, lowercase, the usual
    /// one first.
    pub const fn extensions(self) -> &'static [&'static str] {
        match self {
            Self::Markdown => &["md", "markdown", "mdx"],
            Self::Text => &["txt", "text", "rst", "adoc"],
            Self::Html => &["html", "htm", "xhtml"],
            Self::Pdf => &["pdf"],
            Self::Docx => &["docx"],
            Self::Notebook => &["ipynb"],
            Self::Zip => &["zip"],
            Self::TarGz => &["tar.gz", "tgz", "crate"],
        }
    }

    /// Whether this format is an archive of other files, expanded rather
    /// than read.
    pub const fn is_archive(self) -> bool {
        matches!(self, Self::Zip | Self::TarGz)
    }

    /// The format a file name implies, or `None` for a type docshelf does not read.
    ///
    /// Matched on the name's end rather than its last extension, so that
    /// two-part extensions (`.tar.gz`) count.
    pub fn from_path(path: &str) -> Option<Self> {
        let name = path.as_bytes();
        Self::ALL.into_iter().find(|f| {
            f.extensions().iter().any(|ext| {
                let ext = ext.as_bytes();
                name.len() > ext.len()
                    && name[name.len() - ext.len() - 1] == b'.'
                    && name[name.len() - ext.len()..].eq_ignore_ascii_case(ext)
            })
        })
    }

    /// The formats for a message: ".md, .txt, .html, .pdf, .docx, .ipynb, .zip or .tar.gz".
    pub fn summary() -> String {
        let usual: Vec<String> = Self::ALL
            .iter()
            .map(|f| format!(".{}", f.extensions()[0]))
            .collect();
        crate::phrase::one_of(&usual)
    }

    /// Every extension, as a file input's `accept` attribute wants them.
    pub fn accept() -> String {
        Self::ALL
            .iter()
            .flat_map(|f| f.extensions())
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_extension_maps_back_to_its_format() {
        for format in Format::ALL {
            for ext in format.extensions() {
                assert_eq!(Format::from_path(&format!("a/b.{ext}")), Some(format));
                let upper = ext.to_ascii_uppercase();
                assert_eq!(Format::from_path(&format!("B.{upper}")), Some(format));
            }
        }
        assert_eq!(Format::from_path("notes.docx"), Some(Format::Docx));
        assert_eq!(Format::from_path("notes.doc"), None);
        assert_eq!(Format::from_path("Makefile"), None);
    }

    #[test]
    fn two_part_extensions_count_and_only_in_the_file_name() {
        assert_eq!(
            Format::from_path("attrs-24.2.0.tar.gz"),
            Some(Format::TarGz)
        );
        assert_eq!(Format::from_path("X.TAR.GZ"), Some(Format::TarGz));
        assert_eq!(Format::from_path("itoa-1.0.11.crate"), Some(Format::TarGz));
        assert_eq!(Format::from_path("backup.gz"), None);
        assert_eq!(Format::from_path("a.tar/gz"), None);
        assert_eq!(Format::from_path("a.md/README"), None);
        assert_eq!(Format::from_path("tar.gz"), None);
        assert_eq!(Format::from_path("v1.2/notes.md"), Some(Format::Markdown));
        assert!(Format::TarGz.is_archive() && !Format::Html.is_archive());
    }

    #[test]
    fn lists_name_every_format() {
        assert_eq!(
            Format::summary(),
            ".md, .txt, .html, .pdf, .docx, .ipynb, .zip or .tar.gz"
        );
        let accept = Format::accept();
        assert!(accept.starts_with(".md,.markdown,.mdx,.txt"), "{accept}");
        assert!(
            accept.ends_with(".pdf,.docx,.ipynb,.zip,.tar.gz,.tgz,.crate"),
            "{accept}"
        );
    }
}
