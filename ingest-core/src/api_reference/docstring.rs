//! Docstrings and doc comments as Markdown, their structure kept: a
//! parameter list reads as a list of parameters whichever of the three
//! Python conventions wrote it (reST fields, Google sections, NumPy
//! sections), and JSDoc's tags as the same list.
//!
//! Python docstrings are reStructuredText by convention (Sphinx's autodoc
//! renders them so), so the sections are first rewritten as reST bullets
//! and the whole is converted by the reST reader every `.rst` page goes
//! through. A docstring never adds headings of its own: the symbol's
//! heading is the section a search finds, and a heading inside it would
//! split the symbol in two.

use crate::extract::rst;

/// Google-style section names (`Args:`), and what each is shown as.
const GOOGLE_SECTIONS: [(&str, &str); 20] = [
    ("args", "Parameters"),
    ("arguments", "Parameters"),
    ("parameters", "Parameters"),
    ("params", "Parameters"),
    ("keyword args", "Keyword arguments"),
    ("keyword arguments", "Keyword arguments"),
    ("other parameters", "Other parameters"),
    ("attributes", "Attributes"),
    ("returns", "Returns"),
    ("return", "Returns"),
    ("yields", "Yields"),
    ("yield", "Yields"),
    ("raises", "Raises"),
    ("warns", "Warns"),
    ("example", "Example"),
    ("examples", "Examples"),
    ("note", "Note"),
    ("notes", "Notes"),
    ("see also", "See also"),
    ("warning", "Warning"),
];

/// Sections whose lines are entries (`name (type): text`), not prose.
const LISTS: [&str; 8] = [
    "Parameters",
    "Keyword arguments",
    "Other parameters",
    "Attributes",
    "Raises",
    "Warns",
    "Returns",
    "Yields",
];

/// A Python docstring (the string's value, quotes removed) as Markdown.
/// Most are reStructuredText; one with a fenced code block (httpx's,
/// mkdocstrings projects') is Markdown already and is kept as written.
pub(super) fn python(raw: &str) -> String {
    let lines = clean(raw);
    let markdown = lines.iter().any(|l| l.trim_start().starts_with("```"));
    let code = if markdown { "`" } else { "``" };
    let rest = sections(&lines, code);
    let text = rest.join("\n");
    let converted = if markdown {
        text
    } else {
        rst::to_markdown(&text)
    };
    flatten_headings(&converted)
}

/// The lines of a docstring with the indentation its quotes gave it
/// removed, as Python's `inspect.cleandoc` does: the first line as it is,
/// the rest by their common indentation; blank lines around dropped.
fn clean(raw: &str) -> Vec<String> {
    let raw = raw.replace("\r\n", "\n").replace('\t', "    ");
    let mut lines: Vec<&str> = raw.lines().collect();
    let common = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    if let Some(first) = lines.first_mut() {
        out.push(first.trim().to_owned());
    }
    for line in lines.iter().skip(1) {
        out.push(line.get(common..).unwrap_or("").trim_end().to_owned());
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The docstring's sections rewritten as reST: a labelled, bold line for
/// each section and a bullet for each entry of a list section; reST field
/// lists (`:param x:`) become the same bullets; doctest and prose pass.
fn sections(lines: &[String], code: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let trimmed = line.trim();
        let at = indent(line);
        // NumPy: a title over a dash underline.
        let numpy = lines
            .get(i + 1)
            .filter(|next| is_dashes(next.trim()) && indent(next) == at)
            .and_then(|_| section_name(trimmed));
        // Google: `Args:` alone on its line, its body indented below.
        let google = trimmed
            .strip_suffix(':')
            .and_then(section_name)
            .filter(|_| lines.get(i + 1).is_some_and(|n| indent(n) > at));
        if let Some(name) = numpy.or(google) {
            let body_from = if numpy.is_some() { i + 2 } else { i + 1 };
            let body_end = section_end(lines, body_from, at, numpy.is_some());
            push_blank(&mut out);
            out.push(format!("**{name}**"));
            out.push(String::new());
            let body = &lines[body_from..body_end];
            if LISTS.contains(&name) {
                out.extend(entries(body, numpy.is_some(), code));
            } else {
                let common = body
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| indent(l))
                    .min()
                    .unwrap_or(0);
                out.extend(
                    body.iter()
                        .map(|l| l.get(common..).unwrap_or("").to_owned()),
                );
            }
            push_blank(&mut out);
            i = body_end;
            continue;
        }
        if let Some(bullet) = field_bullet(trimmed, code) {
            // Its continuation lines are joined to it.
            let mut text = bullet;
            let mut j = i + 1;
            while j < lines.len() && indent(&lines[j]) > at && !lines[j].trim().is_empty() {
                text.push(' ');
                text.push_str(lines[j].trim());
                j += 1;
            }
            if !out.last().is_some_and(|l: &String| l.starts_with("- ")) {
                push_blank(&mut out);
            }
            out.push(text);
            i = j;
            continue;
        }
        out.push(line.clone());
        i += 1;
    }
    out
}

fn push_blank(out: &mut Vec<String>) {
    if out.last().is_some_and(|l| !l.is_empty()) {
        out.push(String::new());
    }
}

fn is_dashes(s: &str) -> bool {
    s.len() >= 3 && s.bytes().all(|b| b == b'-')
}

/// What a section called `title` is shown as, if it is one.
fn section_name(title: &str) -> Option<&'static str> {
    let lower = title.trim().to_ascii_lowercase();
    GOOGLE_SECTIONS
        .iter()
        .find(|(name, _)| *name == lower)
        .map(|(_, shown)| *shown)
}

/// Where the section whose body starts at `from` ends: at the first line
/// back at the title's indentation (Google), or at the next NumPy title.
fn section_end(lines: &[String], from: usize, at: usize, numpy: bool) -> usize {
    let mut end = from;
    while end < lines.len() {
        let line = &lines[end];
        if numpy {
            let next_is_title = lines
                .get(end + 1)
                .is_some_and(|n| is_dashes(n.trim()) && indent(n) == indent(line));
            if next_is_title && section_name(line.trim()).is_some() {
                break;
            }
        } else if !line.trim().is_empty() && indent(line) <= at {
            break;
        }
        end += 1;
    }
    end
}

/// A list section's entries as reST bullets: `name (type): text` (Google)
/// or `name : type` over its indented text (NumPy).
fn entries(body: &[String], numpy: bool, code: &str) -> Vec<String> {
    let base = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::new();
    for line in body {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let continuation = indent(line) > base && !out.is_empty();
        if continuation {
            if let Some(last) = out.last_mut() {
                last.push(' ');
                last.push_str(trimmed);
            }
            continue;
        }
        out.push(entry(trimmed, numpy, code));
    }
    out
}

/// One entry's head as a bullet.
fn entry(head: &str, numpy: bool, code: &str) -> String {
    if numpy {
        return match head.split_once(" : ") {
            Some((name, kind)) => format!("- {code}{}{code} ({}):", name.trim(), kind.trim()),
            None => format!("- {code}{}{code}", head.trim_end_matches(':')),
        };
    }
    let Some((name, text)) = head.split_once(':') else {
        return format!("- {head}");
    };
    let (name, kind) = match name.split_once(" (") {
        Some((name, kind)) => (name.trim(), Some(kind.trim_end_matches(')').trim())),
        None => (name.trim(), None),
    };
    if name.is_empty() || name.contains(' ') && kind.is_none() {
        // Prose after a colon, not a name: `Returns:` bodies often are.
        return format!("- {head}");
    }
    match kind {
        Some(kind) => format!("- {code}{name}{code} ({kind}): {}", text.trim()),
        None => format!("- {code}{name}{code}: {}", text.trim()),
    }
}

/// A reST field (`:param int x: text`, `:returns: text`) as a bullet.
fn field_bullet(line: &str, code: &str) -> Option<String> {
    let rest = line.strip_prefix(':')?;
    let (field, text) = rest
        .split_once(": ")
        .or_else(|| rest.strip_suffix(':').map(|f| (f, "")))?;
    let mut words = field.split_whitespace();
    let kind = words.next()?;
    let rest: Vec<&str> = words.collect();
    let text = text.trim();
    let bullet = match (kind, rest.as_slice()) {
        ("param" | "parameter" | "arg" | "argument" | "key" | "keyword", [name]) => {
            format!("- {code}{name}{code}: {text}")
        }
        ("param" | "parameter" | "arg" | "argument" | "key" | "keyword", [kind @ .., name]) => {
            format!("- {code}{name}{code} ({}): {text}", kind.join(" "))
        }
        ("type", [name]) => format!("- {code}{name}{code} is of type {text}"),
        ("returns" | "return", []) => format!("- Returns: {text}"),
        ("rtype", []) => format!("- Return type: {text}"),
        ("raises" | "raise" | "except" | "exception", [name]) => {
            format!("- Raises {code}{name}{code}: {text}")
        }
        ("var" | "ivar" | "cvar", [name]) => format!("- {code}{name}{code}: {text}"),
        _ => return None,
    };
    Some(bullet)
}

/// A heading the reST reader made (an underlined line in a docstring) as a
/// bold line: the symbol's own heading stays its section.
fn flatten_headings(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let heading = line
            .strip_prefix('#')
            .map(|rest| rest.trim_start_matches('#'))
            .filter(|rest| rest.starts_with(' '));
        match heading {
            Some(title) if !fenced => {
                out.push_str("**");
                out.push_str(title.trim());
                out.push_str("**");
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// A JSDoc comment (`/** … */`) as Markdown: its text, then its tags:
/// `@param` as the parameter list, `@returns`, `@throws`, `@example` as
/// code, `@deprecated` and the rest as labelled lines.
pub(super) fn jsdoc(comment: &str) -> String {
    let body = comment
        .trim()
        .trim_start_matches("/**")
        .trim_end_matches("*/");
    let lines: Vec<&str> = body
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix('*').unwrap_or(t);
            t.strip_prefix(' ').unwrap_or(t).trim_end()
        })
        .collect();
    let mut text: Vec<String> = Vec::new();
    let mut tags: Vec<(String, Vec<String>)> = Vec::new();
    for line in lines {
        if let Some(tag) = line.strip_prefix('@') {
            let (name, rest) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
            tags.push((name.to_owned(), vec![rest.trim().to_owned()]));
        } else if let Some((_, body)) = tags.last_mut() {
            body.push(line.to_owned());
        } else {
            text.push(line.to_owned());
        }
    }
    let mut out = text.join("\n").trim().to_owned();
    let mut params = Vec::new();
    let mut rest = Vec::new();
    for (name, body) in tags {
        let first = body.first().cloned().unwrap_or_default();
        let more = body[1..].join("\n");
        match name.as_str() {
            "param" | "arg" | "argument" => {
                let (kind, first) = match first.strip_prefix('{') {
                    Some(typed) => match typed.split_once('}') {
                        Some((kind, after)) => (Some(kind.to_owned()), after.trim().to_owned()),
                        None => (None, first.clone()),
                    },
                    None => (None, first.clone()),
                };
                let (name, desc) = first
                    .split_once(char::is_whitespace)
                    .unwrap_or((&first, ""));
                let desc = desc.trim().trim_start_matches("- ").trim();
                let kind = kind.map(|k| format!(" ({k})")).unwrap_or_default();
                let more = more.split_whitespace().collect::<Vec<_>>().join(" ");
                params.push(
                    format!("- `{name}`{kind}: {desc} {more}")
                        .trim_end()
                        .to_owned(),
                );
            }
            "example" => rest.push(format!(
                "**Example**\n\n```ts\n{}\n```",
                body.join("\n").trim()
            )),
            "returns" | "return" => rest.push(format!("**Returns**: {}", body.join(" ").trim())),
            "throws" | "throw" | "exception" => {
                rest.push(format!("**Throws**: {}", body.join(" ").trim()))
            }
            "deprecated" => rest.push(format!("**Deprecated**: {}", body.join(" ").trim())),
            // Visibility, said by which symbols are shown at all.
            "internal" | "private" | "hidden" | "ignore" | "public" | "api" | "access" => {}
            other => {
                let body = body.join(" ");
                let body = body.trim();
                rest.push(if body.is_empty() {
                    format!("**{other}**")
                } else {
                    format!("**{other}**: {body}")
                });
            }
        }
    }
    if !params.is_empty() {
        out.push_str("\n\n**Parameters**\n\n");
        out.push_str(&params.join("\n"));
    }
    for part in rest {
        out.push_str("\n\n");
        out.push_str(&part);
    }
    out.trim().to_owned()
}

/// Whether a JSDoc comment marks its declaration as not part of the API.
pub(super) fn jsdoc_hidden(comment: &str) -> bool {
    [
        "@internal",
        "@private",
        "@hidden",
        "@ignore",
        "@api private",
    ]
    .iter()
    .any(|tag| comment.contains(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_fields_become_a_parameter_list() {
        let md = python(
            "Send a request.\n\n    :param url: URL for the new request.\n    :param params: (optional) Dictionary\n        to send.\n    :return: the response\n    :rtype: requests.Response\n    ",
        );
        assert!(md.starts_with("Send a request."), "{md}");
        assert!(md.contains("- `url`: URL for the new request."), "{md}");
        assert!(
            md.contains("- `params`: (optional) Dictionary to send."),
            "{md}"
        );
        assert!(md.contains("- Returns: the response"), "{md}");
        assert!(md.contains("- Return type: requests.Response"), "{md}");
    }

    #[test]
    fn google_and_numpy_sections_become_labelled_lists() {
        let google = python(
            "Fetch rows.\n\n    Args:\n        table (str): The table.\n        keys: Keys to\n            fetch.\n\n    Returns:\n        dict: the rows.\n    ",
        );
        assert!(google.contains("**Parameters**"), "{google}");
        assert!(google.contains("- `table` (str): The table."), "{google}");
        assert!(google.contains("- `keys`: Keys to fetch."), "{google}");
        assert!(google.contains("**Returns**"), "{google}");
        let numpy = python(
            "Mean.\n\n    Parameters\n    ----------\n    a : array_like\n        Input.\n    axis : int, optional\n        Axis.\n\n    Returns\n    -------\n    m : ndarray\n    ",
        );
        assert!(!numpy.contains('#'), "no heading inside a symbol: {numpy}");
        assert!(numpy.contains("- `a` (array_like): Input."), "{numpy}");
        assert!(numpy.contains("- `axis` (int, optional): Axis."), "{numpy}");
        assert!(numpy.contains("**Returns**"), "{numpy}");
    }

    #[test]
    fn a_markdown_docstring_keeps_its_fences() {
        let md = python("Usage:\n\n    ```python\n    >>> client = httpx.AsyncClient()\n    ```\n\n    Args:\n        auth: An authentication class.\n    ");
        assert!(
            md.contains("```python\n>>> client = httpx.AsyncClient()\n```"),
            "{md}"
        );
        assert!(md.contains("- `auth`: An authentication class."), "{md}");
    }

    #[test]
    fn doctests_and_roles_read_as_code() {
        let md = python("Use :class:`Option` here.\n\n    >>> add(1, 2)\n    3\n");
        assert!(md.contains("`Option`"), "{md}");
        assert!(md.contains("```pycon\n>>> add(1, 2)"), "{md}");
    }

    #[test]
    fn jsdoc_tags_become_structure() {
        let md = jsdoc(
            "/**\n * Parses a string.\n *\n * @param input - The text.\n * @param {number} [max] the bound\n * @returns the value\n * @example\n * parse(\"1\")\n */",
        );
        assert!(md.starts_with("Parses a string."), "{md}");
        assert!(md.contains("- `input`: The text."), "{md}");
        assert!(md.contains("- `[max]` (number): the bound"), "{md}");
        assert!(md.contains("**Returns**: the value"), "{md}");
        assert!(md.contains("```ts\nparse(\"1\")\n```"), "{md}");
    }
}
