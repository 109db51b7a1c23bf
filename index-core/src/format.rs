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
    /// Jupyter notebooks: their Markdown cells and code, not their outputs.
    Notebook,
    Zip,
}

impl Format {
    /// Every format docshelf reads.
    pub const ALL: [Self; 6] = [
        Self::Markdown,
        Self::Text,
        Self::Html,
        Self::Pdf,
        Self::Notebook,
        Self::Zip,
    ];

    /// The file-name extensions that mean this format, lowercase, the usual
    /// one first.
    pub const fn extensions(self) -> &'static [&'static str] {
        match self {
            Self::Markdown => &["md", "markdown", "mdx"],
            Self::Text => &["txt", "text", "rst", "adoc"],
            Self::Html => &["html", "htm", "xhtml"],
            Self::Pdf => &["pdf"],
            Self::Notebook => &["ipynb"],
            Self::Zip => &["zip"],
        }
    }

    /// The format a file name implies, or `None` for a type docshelf does not read.
    pub fn from_path(path: &str) -> Option<Self> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|f| f.extensions().contains(&ext.as_str()))
    }

    /// The formats for a message: ".md, .txt, .html, .pdf, .ipynb or .zip".
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
        assert_eq!(Format::from_path("notes.docx"), None);
        assert_eq!(Format::from_path("Makefile"), None);
    }

    #[test]
    fn lists_name_every_format() {
        assert_eq!(Format::summary(), ".md, .txt, .html, .pdf, .ipynb or .zip");
        let accept = Format::accept();
        assert!(accept.starts_with(".md,.markdown,.mdx,.txt"), "{accept}");
        assert!(accept.ends_with(".pdf,.ipynb,.zip"), "{accept}");
    }
}
