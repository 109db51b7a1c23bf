//! The kinds of file docshelf reads, named once.
//!
//! The extractor dispatches on [`Format`] once, the CLI picks files from
//! folders by it, uploads and the dashboard's file picker accept its
//! extensions, the crawler reads a response's media type through it, and
//! every error message lists them from here: one variant per reader, each
//! with its extensions and media types in one place. It lives outside the
//! extractors so that the browser, which extracts nothing, still knows what
//! may be uploaded.

/// What kind of file an upload is, from its name (or, fetched, from its
/// media type): one variant per reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    /// Markdown with JSX (Docusaurus, Nextra): its components and imports
    /// are read for their text, not shown as code.
    Mdx,
    Text,
    /// reStructuredText (Sphinx): titles, sections, directives.
    Rst,
    AsciiDoc,
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
    pub const ALL: [Self; 11] = [
        Self::Markdown,
        Self::Mdx,
        Self::Text,
        Self::Rst,
        Self::AsciiDoc,
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
            Self::Markdown => &["md", "markdown"],
            Self::Mdx => &["mdx"],
            Self::Text => &["txt", "text"],
            Self::Rst => &["rst", "rest"],
            // Not `.asc`: that is as often an armored PGP signature
            // (`x.tar.gz.asc`), which is no document.
            Self::AsciiDoc => &["adoc", "asciidoc"],
            Self::Html => &["html", "htm", "xhtml"],
            Self::Pdf => &["pdf"],
            Self::Docx => &["docx"],
            Self::Notebook => &["ipynb"],
            Self::Zip => &["zip"],
            Self::TarGz => &["tar.gz", "tgz", "crate"],
        }
    }

    /// The media types (`Content-Type` without parameters, lowercase) that
    /// mean this format when a server sends them. `text/plain` is not
    /// here: servers send Markdown and reST as plain text too, so the
    /// crawler reads it by the URL's extension first
    /// ([`Self::from_media_type`]).
    pub const fn media_types(self) -> &'static [&'static str] {
        match self {
            Self::Markdown => &["text/markdown", "text/x-markdown"],
            Self::Mdx => &["text/mdx"],
            Self::Text => &[],
            Self::Rst => &["text/x-rst", "text/prs.fallenstein.rst"],
            Self::AsciiDoc => &["text/asciidoc", "text/x-asciidoc"],
            Self::Html => &["text/html", "application/xhtml+xml"],
            Self::Pdf => &["application/pdf"],
            Self::Docx => {
                &["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]
            }
            Self::Notebook => &["application/x-ipynb+json"],
            Self::Zip => &["application/zip"],
            Self::TarGz => &[
                "application/gzip",
                "application/x-gzip",
                "application/x-tar",
            ],
        }
    }

    /// The format a fetched body is read as: by its media type, and for
    /// plain text or no useful type by `path`'s extension (plain text
    /// otherwise). `None` for a type docshelf does not read.
    pub fn from_media_type(media_type: Option<&str>, path: &str) -> Option<Self> {
        let by_path = Self::from_path(path);
        match media_type {
            Some("text/plain") => Some(by_path.unwrap_or(Self::Text)),
            None | Some("application/octet-stream" | "binary/octet-stream") => by_path,
            // MDX has no registered type: servers send it as Markdown.
            Some(media_type) => Self::ALL
                .into_iter()
                .find(|f| f.media_types().contains(&media_type))
                .map(|f| match (f, by_path) {
                    (Self::Markdown, Some(Self::Mdx)) => Self::Mdx,
                    (f, _) => f,
                }),
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
    fn media_types_decide_before_extensions() {
        assert_eq!(
            Format::from_media_type(Some("text/html"), "/a"),
            Some(Format::Html)
        );
        assert_eq!(
            Format::from_media_type(Some("text/plain"), "/a.md"),
            Some(Format::Markdown)
        );
        assert_eq!(
            Format::from_media_type(Some("text/plain"), "/guide.rst"),
            Some(Format::Rst)
        );
        assert_eq!(
            Format::from_media_type(Some("text/plain"), "/a"),
            Some(Format::Text)
        );
        assert_eq!(
            Format::from_media_type(Some("text/x-rst"), "/a"),
            Some(Format::Rst)
        );
        assert_eq!(
            Format::from_media_type(None, "/a.adoc"),
            Some(Format::AsciiDoc)
        );
        assert_eq!(Format::from_media_type(Some("image/png"), "/a.md"), None);
        assert_eq!(
            Format::from_media_type(Some("text/markdown"), "/guide.mdx"),
            Some(Format::Mdx)
        );
        // Every media type of the table reads back as its format.
        for format in Format::ALL {
            for media_type in format.media_types() {
                assert_eq!(
                    Format::from_media_type(Some(media_type), "/x"),
                    Some(format)
                );
            }
        }
    }

    #[test]
    fn lists_name_every_format() {
        assert_eq!(
            Format::summary(),
            ".md, .mdx, .txt, .rst, .adoc, .html, .pdf, .docx, .ipynb, .zip or .tar.gz"
        );
        let accept = Format::accept();
        assert!(
            accept.starts_with(".md,.markdown,.mdx,.txt,.text,.rst,.rest,.adoc,.asciidoc,.html"),
            "{accept}"
        );
        assert!(
            accept.ends_with(".pdf,.docx,.ipynb,.zip,.tar.gz,.tgz,.crate"),
            "{accept}"
        );
    }
}
