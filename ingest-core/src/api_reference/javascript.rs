//! An npm package's API from its JSDoc-commented JavaScript, for packages
//! that ship no TypeScript declarations (express): every function, method
//! and assigned function (`app.listen = function listen() {}`,
//! `exports.json = …`) that a doc comment introduces, unless the comment
//! marks it private. Undocumented code is left out: without declarations,
//! the doc comments are what the authors published as API.

use tree_sitter::{Node, Parser};

use super::docstring::jsdoc_hidden;
use super::python_package::SourceFile;
use super::render::{Entry, Page};
use super::symbol::{Kind, Symbol, MAX_SYMBOLS};

/// Folders whose code is no part of the package's API, or a copy of it.
const NOT_THE_API: [&str; 10] = [
    "node_modules",
    "test",
    "tests",
    "__tests__",
    "benchmarks",
    "benchmark",
    "examples",
    "dist",
    "umd",
    "coverage",
];

/// The package's JavaScript files to read, with the module each is shown
/// as (`lib/application`).
pub(super) fn source_files(paths: &[&str]) -> Vec<(String, String)> {
    let top = paths
        .iter()
        .find_map(|p| {
            p.strip_suffix("package.json")
                .filter(|t| t.matches('/').count() <= 1)
        })
        .unwrap_or("")
        .to_owned();
    paths
        .iter()
        .filter(|p| p.starts_with(&top))
        .filter(|p| {
            [".js", ".cjs", ".mjs"].iter().any(|s| p.ends_with(s)) && !p.ends_with(".min.js")
        })
        .filter(|p| {
            let rel = &p[top.len()..];
            !rel.split('/').any(|part| NOT_THE_API.contains(&part))
        })
        .map(|p| {
            let rel = &p[top.len()..];
            let module = rel
                .rsplit_once('.')
                .map_or(rel, |(stem, _)| stem)
                .to_owned();
            ((*p).to_owned(), module)
        })
        .collect()
}

/// The pages of the package's documented functions, one per file.
pub(super) fn pages(package: &str, files: Vec<(String, bool, SourceFile)>) -> Vec<Page> {
    let mut files = files;
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
        .into_iter()
        .filter_map(|(module, _, file)| {
            let symbols = read(&file.text)?;
            if symbols.is_empty() {
                return None;
            }
            let shown = if module == "index" {
                package.to_owned()
            } else {
                format!("{package}/{}", module.trim_end_matches("/index"))
            };
            let entries = symbols
                .into_iter()
                .map(|symbol| Entry {
                    qualified: format!("{package}.{}", symbol.name),
                    symbol,
                    defined_in: None,
                    also: Vec::new(),
                })
                .collect();
            Some(Page {
                path: format!("{}{package}/{module}.md", super::PREFIX),
                title: format!("{shown} API reference"),
                intro: None,
                entries,
            })
        })
        .collect()
}

/// A file's documented functions; `None` when it does not parse.
fn read(source: &str) -> Option<Vec<Symbol>> {
    let mut parser = Parser::new();
    // TypeScript's grammar reads JavaScript too (one grammar fewer).
    parser
        .set_language(&tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into())
        .ok()?;
    let tree = parser.parse(source, None)?;
    let src = source.as_bytes();
    let mut symbols: Vec<Symbol> = Vec::new();
    let root = tree.root_node();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        let Some(doc) = doc_comment(node, src) else {
            continue;
        };
        if jsdoc_hidden(&doc) {
            continue;
        }
        let Some((names, function)) = documented_function(node, src) else {
            continue;
        };
        let names: Vec<String> = names
            .iter()
            .map(|n| {
                n.trim_start_matches("module.exports.")
                    .trim_start_matches("exports.")
                    .to_owned()
            })
            .collect();
        let name = names[0].clone();
        if name.is_empty()
            || name.starts_with('_')
            || symbols.len() >= MAX_SYMBOLS
            || symbols.iter().any(|s| s.name == name)
        {
            continue;
        }
        let params = function
            .child_by_field_name("parameters")
            .and_then(|p| p.utf8_text(src).ok())
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| "()".into());
        symbols.push(Symbol {
            // `res.set = res.header = function header(…)`: one function,
            // each name a signature.
            signatures: names.iter().map(|n| format!("{n}{params}")).collect(),
            name,
            kind: Kind::Function,
            doc: Some(doc),
            bases: Vec::new(),
            members: Vec::new(),
            annotated: false,
            params: Vec::new(),
        });
    }
    Some(symbols)
}

/// The names and function of a statement that defines one: `function
/// f()`, `a.b = function () {}`, `a.b = a.c = function () {}`, `exports.f
/// = (x) => …`, `module.exports = function name() {}`.
fn documented_function<'t>(node: Node<'t>, src: &[u8]) -> Option<(Vec<String>, Node<'t>)> {
    let text = |n: Node<'_>| n.utf8_text(src).ok().map(str::to_owned);
    match node.kind() {
        "function_declaration" | "generator_function_declaration" => {
            Some((vec![text(node.child_by_field_name("name")?)?], node))
        }
        "expression_statement" => {
            let mut assignment = node
                .named_child(0)
                .filter(|n| n.kind() == "assignment_expression")?;
            let mut names = Vec::new();
            loop {
                names.push(text(assignment.child_by_field_name("left")?)?);
                let right = assignment.child_by_field_name("right")?;
                match right.kind() {
                    "assignment_expression" => assignment = right,
                    "function_expression"
                    | "function"
                    | "arrow_function"
                    | "generator_function" => {
                        names.retain(|n| n != "module.exports");
                        if names.is_empty() {
                            names.push(right.child_by_field_name("name").and_then(text)?);
                        }
                        return Some((names, right));
                    }
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

/// The JSDoc comment right before `node` (a blank line between allowed).
fn doc_comment(node: Node<'_>, src: &[u8]) -> Option<String> {
    let comment = node.prev_sibling().filter(|c| c.kind() == "comment")?;
    let text = comment.utf8_text(src).ok()?;
    let close = comment.end_position().row + 2 >= node.start_position().row;
    (text.starts_with("/**") && close).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_functions_are_the_api() {
        let source = r#"
/**
 * Listen for connections.
 * @return {http.Server}
 * @public
 */

app.listen = function listen() {};

/**
 * Set header `field` to `val`.
 * @param {String} field
 * @api public
 */
res.set = res.header = function header(field, val) {};

/**
 * Initialize the server.
 * @private
 */
app.init = function init() {};

app.undocumented = function () {};

/** Create an application. */
function createApplication(options) {}

/** A JSON body parser. */
exports.json = (options) => {};
"#;
        let names: Vec<String> = read(source)
            .unwrap()
            .into_iter()
            .flat_map(|s| s.signatures)
            .collect();
        assert_eq!(
            names,
            [
                "app.listen()",
                "res.set(field, val)",
                "res.header(field, val)",
                "createApplication(options)",
                "json(options)"
            ]
        );
    }

    #[test]
    fn files_exclude_tests_and_bundles() {
        let files = source_files(&[
            "package/package.json",
            "package/index.js",
            "package/lib/application.js",
            "package/test/app.js",
            "package/dist/express.min.js",
        ]);
        let modules: Vec<&str> = files.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(modules, ["index", "lib/application"]);
    }
}
