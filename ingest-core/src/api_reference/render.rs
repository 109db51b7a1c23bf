//! An API reference written as Markdown pages: a page per module, a
//! section per symbol under its qualified name (`## click.Option`), its
//! members one level down (`### click.Option.get_default`), each with its
//! declaration as code and its documentation. Search and the reader then
//! treat a symbol as they treat any section: its heading path names it,
//! and a code block is never split.

use std::collections::HashMap;

use super::docstring;
use super::symbol::{Kind, Symbol};

/// One page: a module's public symbols.
#[derive(Debug, Clone)]
pub(super) struct Page {
    /// The document's path (`api/click.md`).
    pub path: String,
    pub title: String,
    /// The module's own docstring.
    pub intro: Option<String>,
    pub entries: Vec<Entry>,
}

/// A symbol on a page.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The name users reach it by (`click.option`).
    pub qualified: String,
    pub symbol: Symbol,
    /// The module that defines it, when that is not the page's.
    pub defined_in: Option<String>,
    /// Its other public names.
    pub also: Vec<String>,
}

/// The language a page's declarations and docs are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Language {
    Python,
    TypeScript,
    JavaScript,
}

impl Language {
    fn fence(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::TypeScript => "ts",
            Self::JavaScript => "js",
        }
    }

    fn doc(self, raw: &str) -> String {
        match self {
            Self::Python => docstring::python(raw),
            Self::TypeScript | Self::JavaScript => docstring::jsdoc(raw),
        }
    }
}

/// Where each documented name is: simple name -> (document path,
/// qualified name), for names only one symbol has (a link must not guess).
pub(super) struct Links(HashMap<String, Option<(String, String)>>);

impl Links {
    fn of(documents: &[(String, &Page, &Entry)]) -> Self {
        let mut map: HashMap<String, Option<(String, String)>> = HashMap::new();
        for (path, _, entry) in documents {
            let target = Some((path.clone(), entry.qualified.clone()));
            map.entry(entry.symbol.name.clone())
                .and_modify(|t| *t = None)
                .or_insert(target);
        }
        Self(map)
    }

    /// A base class as written (`core.Parameter`, `t.Generic[T]`) as a
    /// link to its document when it is documented here, else as code.
    fn link(&self, from: &str, written: &str) -> String {
        let bare = written.split('[').next().unwrap_or(written);
        let simple = bare.rsplit('.').next().unwrap_or(bare);
        match self.0.get(simple) {
            Some(Some((path, qualified))) => {
                format!("[`{qualified}`]({})", relative(from, path))
            }
            _ => format!("`{written}`"),
        }
    }
}

/// `to` as a relative link from the document `from`.
fn relative(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> =
        from.split('/').collect::<Vec<_>>()[..from.matches('/').count()].to_vec();
    let to_parts: Vec<&str> = to.split('/').collect();
    let shared = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let up = "../".repeat(from_dir.len() - shared);
    format!("{up}{}", to_parts[shared..].join("/"))
}

/// A symbol's name as one part of a document's path. Names come from the
/// package's code, and a TypeScript `declare module "../x"` or a quoted
/// member is named by any string: anything but letters, digits, `.`, `_`,
/// `-` and `$` becomes `_`, so a name never adds a folder (the part always
/// ends in `.md`, so dots cannot climb out of one).
fn file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' | '$' => c,
            _ => '_',
        })
        .collect();
    if stem.is_empty() {
        "_".to_owned()
    } else {
        stem
    }
}

/// The reference as documents (path, Markdown): each module's page lists
/// its symbols, and each symbol has a document of its own beside it
/// (`api/click.md` and `api/click/option.md`). One document a symbol,
/// because a search answers with one passage a document: a module's
/// single page would let only one of its symbols reach the first results.
pub(super) fn documents(pages: &[Page], language: Language, about: &str) -> Vec<(String, String)> {
    let mut taken: std::collections::HashSet<String> =
        pages.iter().map(|p| p.path.clone()).collect();
    let mut placed: Vec<(String, &Page, &Entry)> = Vec::new();
    for page in pages {
        let folder = page.path.trim_end_matches(".md");
        for entry in &page.entries {
            let stem = file_stem(&entry.symbol.name);
            let mut path = format!("{folder}/{stem}.md");
            let mut n = 2;
            while !taken.insert(path.clone()) {
                path = format!("{folder}/{stem}-{n}.md");
                n += 1;
            }
            placed.push((path, page, entry));
        }
    }
    let links = Links::of(&placed);
    let mut out: Vec<(String, String)> = pages
        .iter()
        .map(|page| {
            let listed: Vec<&(String, &Page, &Entry)> = placed
                .iter()
                .filter(|(_, p, _)| std::ptr::eq(*p, page))
                .collect();
            (page.path.clone(), index(page, &listed, language, about))
        })
        .collect();
    for (path, _, entry) in &placed {
        out.push((
            path.clone(),
            symbol_document(path, entry, language, &links, about),
        ));
    }
    out
}

/// A module's page: its docstring and its symbols, each with the first
/// sentence of its documentation.
fn index(
    page: &Page,
    listed: &[&(String, &Page, &Entry)],
    language: Language,
    about: &str,
) -> String {
    let mut out = format!("# {}\n\n{about}\n\n", page.title);
    if let Some(intro) = &page.intro {
        out.push_str(&language.doc(intro));
        out.push_str("\n\n");
    }
    if !listed.is_empty() {
        out.push_str("## Contents\n\n");
        for (path, _, entry) in listed {
            let summary = entry
                .symbol
                .doc
                .as_deref()
                .map(|d| first_sentence(&language.doc(d)))
                .unwrap_or_default();
            let link = relative(&page.path, path);
            if summary.is_empty() {
                out.push_str(&format!("- [`{}`]({link})\n", entry.qualified));
            } else {
                out.push_str(&format!("- [`{}`]({link}): {summary}\n", entry.qualified));
            }
        }
    }
    out.trim_end().to_owned() + "\n"
}

/// The first sentence of a text's first paragraph, on one line.
fn first_sentence(text: &str) -> String {
    let paragraph = text.split("\n\n").next().unwrap_or("");
    if paragraph.trim_start().starts_with("```") {
        return String::new();
    }
    let line = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.find(". ") {
        Some(end) => line[..=end].to_owned(),
        None => line,
    }
}

/// One symbol's document: its declaration, documentation and members.
fn symbol_document(
    path: &str,
    entry: &Entry,
    language: Language,
    links: &Links,
    about: &str,
) -> String {
    let mut out = String::new();
    symbol(
        &mut out,
        1,
        &entry.qualified,
        &entry.symbol,
        language,
        links,
        path,
    );
    let mut names = Vec::new();
    if let Some(module) = &entry.defined_in {
        names.push(format!("Defined in `{module}`."));
    }
    if !entry.also.is_empty() {
        let also: Vec<String> = entry.also.iter().map(|n| format!("`{n}`")).collect();
        names.push(format!("Also available as {}.", also.join(", ")));
    }
    // Where it was read, short: every symbol's document says it.
    let from = about.split(':').next().unwrap_or(about);
    names.push(format!("{from}."));
    out.push_str(&names.join(" "));
    out.push_str("\n\n");
    for member in &entry.symbol.members {
        let name = format!("{}.{}", entry.qualified, member.name);
        symbol(&mut out, 2, &name, member, language, links, path);
    }
    out.trim_end().to_owned() + "\n"
}

fn symbol(
    out: &mut String,
    level: usize,
    qualified: &str,
    symbol: &Symbol,
    language: Language,
    links: &Links,
    page: &str,
) {
    out.push_str(&"#".repeat(level));
    out.push(' ');
    out.push_str(qualified);
    out.push_str("\n\n");
    out.push_str(&format!("```{}\n", language.fence()));
    out.push_str(&symbol.signatures.join("\n\n"));
    out.push_str("\n```\n\n");
    if symbol.kind == Kind::Class && !symbol.bases.is_empty() {
        let bases: Vec<String> = symbol.bases.iter().map(|b| links.link(page, b)).collect();
        out.push_str(&format!("Bases: {}\n\n", bases.join(", ")));
    }
    if let Some(doc) = &symbol.doc {
        let text = language.doc(doc);
        if !text.is_empty() {
            out.push_str(&text);
            out.push_str("\n\n");
        }
    }
    if !symbol.params.is_empty() {
        out.push_str("**Parameters**\n\n");
        for param in &symbol.params {
            let deprecated = if param.deprecated {
                " (deprecated)"
            } else {
                ""
            };
            out.push_str(&format!(
                "- `{}` ({}){deprecated}: ",
                param.name, param.kind
            ));
            // The text goes on as the item's own paragraphs and code.
            for (i, line) in param.doc.lines().enumerate() {
                if i > 0 {
                    out.push('\n');
                    if !line.is_empty() {
                        out.push_str("  ");
                    }
                }
                out.push_str(line);
            }
            out.push('\n');
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::relative;

    #[test]
    fn links_are_relative_to_the_linking_document() {
        assert_eq!(
            relative("api/click.md", "api/click/option.md"),
            "click/option.md"
        );
        assert_eq!(
            relative("api/click/Option.md", "api/click/Parameter.md"),
            "Parameter.md"
        );
        assert_eq!(relative("api/a/b/C.md", "api/a/D.md"), "../D.md");
    }

    #[test]
    fn a_symbol_named_like_a_path_stays_in_its_folder() {
        assert_eq!(super::file_stem("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(super::file_stem("res.send"), "res.send");
        assert_eq!(super::file_stem("option"), "option");
        assert_eq!(super::file_stem("\"quoted name\""), "_quoted_name_");
        assert_eq!(super::file_stem(""), "_");
    }
}
