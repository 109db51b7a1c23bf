//! A document's sections, named as search results name them: by heading
//! path (`Guide > Install`, the chunker's [`crate::chunk::Chunk::heading_path`]),
//! so an agent that found a passage can read the whole section it sits in.

use crate::chunk::{heading_path, headings};

/// A section found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Its full heading path.
    pub heading_path: String,
    /// Byte offsets of the section in the text: its heading, and all up to
    /// the next heading of its level or above.
    pub start: usize,
    pub end: usize,
}

/// Every section of the Markdown `text`, in document order, each from its
/// heading to the next heading of its level or above, subsections
/// included; text before the first heading is a section with an empty
/// heading path, when there is any.
pub fn all(text: &str) -> Vec<Section> {
    walk(text, Extent::WithSubsections)
}

/// Every section of the Markdown `text` without its subsections: each
/// from its heading to the next heading of any level, so a change is
/// told of the section it is in and not of every section above it too.
pub fn own(text: &str) -> Vec<Section> {
    walk(text, Extent::OwnText)
}

/// Where a section ends.
#[derive(Clone, Copy)]
enum Extent {
    /// At the next heading of its level or above.
    WithSubsections,
    /// At the next heading.
    OwnText,
}

fn walk(text: &str, extent: Extent) -> Vec<Section> {
    let found = headings(text);
    let mut sections = Vec::with_capacity(found.len() + 1);
    let first = found.first().map_or(text.len(), |(start, _, _)| *start);
    if !text[..first].trim().is_empty() {
        sections.push(Section {
            heading_path: String::new(),
            start: 0,
            end: first,
        });
    }
    let mut path: Vec<(usize, &str)> = Vec::new();
    for (i, (start, level, title)) in found.iter().enumerate() {
        path.retain(|(l, _)| l < level);
        path.push((*level, title));
        let next = match extent {
            Extent::WithSubsections => found[i + 1..].iter().find(|(_, l, _)| l <= level),
            Extent::OwnText => found.get(i + 1),
        };
        sections.push(Section {
            heading_path: heading_path(path.iter().map(|(_, t)| *t)),
            start: *start,
            end: next.map_or(text.len(), |(s, _, _)| *s),
        });
    }
    sections
}

/// Finds the section `wanted` names in the Markdown `text`: its whole
/// heading path, or the path's last parts (`Install`, `Guide > Install`),
/// compared without case and spacing around `>`. The first in document
/// order wins.
pub fn find(text: &str, wanted: &str) -> Option<Section> {
    let wanted = parts(wanted);
    if wanted.is_empty() {
        return None;
    }
    all(text)
        .into_iter()
        .find(|section| parts(&section.heading_path).ends_with(&wanted))
}

/// Every heading path of the document, in order: what a section may be
/// asked for by.
pub fn outline(text: &str) -> Vec<String> {
    all(text)
        .into_iter()
        .filter(|s| !s.heading_path.is_empty())
        .map(|s| s.heading_path)
        .collect()
}

fn parts(path: &str) -> Vec<String> {
    path.split('>')
        .map(normal)
        .filter(|p| !p.is_empty())
        .collect()
}

fn normal(title: &str) -> String {
    title
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n```sh\n# not a heading\n```\n\n### From source\n\nBuild it.\n\n## Use\n\nCall it.\n";

    #[test]
    fn a_section_is_found_by_its_heading_path_or_its_end() {
        let install = find(DOC, "Guide > Install").expect("install");
        assert_eq!(install.heading_path, "Guide > Install");
        let text = &DOC[install.start..install.end];
        assert!(text.starts_with("## Install"), "{text}");
        assert!(
            text.contains("# not a heading") && text.contains("Build it."),
            "{text}"
        );
        assert!(!text.contains("Call it."), "{text}");
        assert_eq!(
            find(DOC, "  install ").map(|s| s.start),
            Some(install.start)
        );
        let source = find(DOC, "install>FROM SOURCE").expect("nested");
        assert_eq!(
            &DOC[source.start..source.end],
            "### From source\n\nBuild it.\n\n"
        );
        assert_eq!(find(DOC, "Use").map(|s| s.end), Some(DOC.len()));
        assert_eq!(find(DOC, "Missing"), None);
        assert_eq!(find(DOC, " > "), None);
    }

    #[test]
    fn every_section_in_order_with_the_text_before_the_first_heading() {
        let text = format!("Preface.\n\n{DOC}");
        let sections = all(&text);
        assert_eq!(sections[0].heading_path, "");
        assert_eq!(&text[sections[0].start..sections[0].end], "Preface.\n\n");
        assert_eq!(sections[1].end, text.len());
        assert_eq!(sections.len(), 5);
        assert_eq!(all(DOC).len(), 4);
    }

    #[test]
    fn the_outline_lists_every_heading_path() {
        assert_eq!(
            outline(DOC),
            [
                "Guide",
                "Guide > Install",
                "Guide > Install > From source",
                "Guide > Use"
            ]
        );
    }
}
