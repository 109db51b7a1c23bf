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

/// Where each documented name is: simple name -> (page path, qualified
/// name), for names only one symbol has (a link must not guess).
pub(super) struct Links(HashMap<String, Option<(String, String)>>);

impl Links {
    pub(super) fn of(pages: &[Page]) -> Self {
        let mut map: HashMap<String, Option<(String, String)>> = HashMap::new();
        for page in pages {
            for entry in &page.entries {
                let target = Some((page.path.clone(), entry.qualified.clone()));
                map.entry(entry.symbol.name.clone())
                    .and_modify(|t| *t = None)
                    .or_insert(target);
            }
        }
        Self(map)
    }

    /// A base class as written (`core.Parameter`, `t.Generic[T]`) as a
    /// link to its section when it is documented here, else as code.
    fn link(&self, from: &str, written: &str) -> String {
        let bare = written.split('[').next().unwrap_or(written);
        let simple = bare.rsplit('.').next().unwrap_or(bare);
        match self.0.get(simple) {
            Some(Some((path, qualified))) => {
                format!("[`{qualified}`]({}#{qualified})", relative(from, path))
            }
            _ => format!("`{written}`"),
        }
    }
}

/// `to` as a link from the page `from` (both under `api/`).
fn relative(from: &str, to: &str) -> String {
    let depth = from.matches('/').count().saturating_sub(1);
    let to = to.strip_prefix("api/").unwrap_or(to);
    format!("{}{to}", "../".repeat(depth))
}

/// The page as Markdown.
pub(super) fn markdown(page: &Page, language: Language, links: &Links, about: &str) -> String {
    let mut out = format!("# {}\n\n{about}\n\n", page.title);
    if let Some(intro) = &page.intro {
        out.push_str(&language.doc(intro));
        out.push_str("\n\n");
    }
    for entry in &page.entries {
        symbol(
            &mut out,
            2,
            &entry.qualified,
            &entry.symbol,
            language,
            links,
            &page.path,
        );
        let mut names = Vec::new();
        if let Some(module) = &entry.defined_in {
            names.push(format!("Defined in `{module}`."));
        }
        if !entry.also.is_empty() {
            let also: Vec<String> = entry.also.iter().map(|n| format!("`{n}`")).collect();
            names.push(format!("Also available as {}.", also.join(", ")));
        }
        if !names.is_empty() {
            // After the symbol's own text: its section starts with what
            // it is.
            let at = out.trim_end().len();
            out.truncate(at);
            out.push_str("\n\n");
            out.push_str(&names.join(" "));
            out.push_str("\n\n");
        }
        for member in &entry.symbol.members {
            let name = format!("{}.{}", entry.qualified, member.name);
            symbol(&mut out, 3, &name, member, language, links, &page.path);
        }
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
}
