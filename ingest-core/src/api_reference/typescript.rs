//! An npm package's API from the TypeScript declarations it ships
//! (`.d.ts`), read from their syntax trees (tree-sitter's TypeScript
//! grammar): exported functions, classes, interfaces, type aliases, enums,
//! constants and namespaces, with their JSDoc comments; class and interface
//! members one level down.

use std::collections::HashSet;

use tree_sitter::{Node, Parser};

use super::python_package::SourceFile;
use super::render::{Entry, Page};
use super::symbol::{Kind, Symbol, MAX_SYMBOLS};

/// Folders whose declarations are no part of the package's API.
const NOT_THE_API: [&str; 6] = [
    "node_modules",
    "test",
    "tests",
    "__tests__",
    "benchmarks",
    "examples",
];
/// The most lines of a declaration shown whole (a type alias can be a
/// page of unions); longer ones are cut with a mark.
const MAX_LINES: usize = 40;
/// How deep namespaces nest and are still read.
const MAX_NAMESPACE_DEPTH: usize = 3;

/// The declaration files to read, with the module each is shown as:
/// those under the folder of the file `package.json`'s `types` (or
/// `typings`) names, else every one outside tests and dependencies.
/// `read` gives a file's text (package.json's).
pub(super) fn declaration_files(
    paths: &[&str],
    mut read: impl FnMut(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let top = paths
        .iter()
        .find_map(|p| {
            p.strip_suffix("package.json")
                .filter(|t| !t.contains('/') || t.matches('/').count() == 1)
        })
        .unwrap_or("")
        .to_owned();
    let types_dir = read(&format!("{top}package.json"))
        .and_then(|json| serde_json::from_str::<serde_json::Value>(&json).ok())
        .and_then(|manifest| {
            ["types", "typings"].iter().find_map(|field| {
                manifest.get(*field).and_then(|v| v.as_str()).map(|s| {
                    let s = s.trim_start_matches("./");
                    s.rsplit_once('/')
                        .map_or(String::new(), |(dir, _)| format!("{dir}/"))
                })
            })
        })
        .map(|dir| format!("{top}{dir}"));
    let under = types_dir.unwrap_or_else(|| top.clone());
    let declarations = |suffix: &str| -> Vec<(String, String)> {
        paths
            .iter()
            .filter(|p| p.starts_with(&under) && p.ends_with(suffix))
            .filter(|p| {
                let rel = &p[top.len()..];
                !rel.split('/').any(|part| NOT_THE_API.contains(&part))
            })
            .map(|p| {
                let rel = p[top.len()..].trim_end_matches(suffix).to_owned();
                ((*p).to_owned(), rel)
            })
            .collect()
    };
    let mut found = declarations(".d.ts");
    if found.is_empty() {
        found = declarations(".d.mts");
    }
    if found.is_empty() {
        found = declarations(".d.cts");
    }
    found
}

/// The pages of `package`'s declarations: one per file that exports
/// anything, each symbol documented once (the first file that declares
/// it, shallowest first: builds often ship the same declarations twice).
pub(super) fn pages(package: &str, files: Vec<(String, bool, SourceFile)>) -> Vec<Page> {
    let mut files = files;
    files.sort_by_key(|(module, _, _)| (module.matches('/').count(), module.clone()));
    let mut seen: HashSet<String> = HashSet::new();
    let mut pages = Vec::new();
    for (module, _, file) in files {
        let Some(symbols) = read(&file.text) else {
            continue;
        };
        let entries: Vec<Entry> = symbols
            .into_iter()
            .filter(|s| seen.insert(s.name.clone()))
            .map(|symbol| Entry {
                qualified: format!("{package}.{}", symbol.name),
                symbol,
                defined_in: None,
                also: Vec::new(),
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let shown = if module == "index" {
            package.to_owned()
        } else {
            format!("{package}/{}", module.trim_end_matches("/index"))
        };
        pages.push(Page {
            path: format!("api/{package}/{module}.md"),
            title: format!("{shown} API reference"),
            intro: None,
            entries,
        });
    }
    pages
}

/// A declaration file's exported symbols; `None` when it does not parse.
fn read(source: &str) -> Option<Vec<Symbol>> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into())
        .ok()?;
    let tree = parser.parse(source, None)?;
    let reader = Reader {
        src: source.as_bytes(),
    };
    let mut symbols = Vec::new();
    reader.statements(tree.root_node(), 0, &mut symbols);
    Some(symbols)
}

struct Reader<'s> {
    src: &'s [u8],
}

impl Reader<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.src).unwrap_or("")
    }

    /// The exported declarations of a program or namespace body, and the
    /// local ones an export list names (`export { stringType as string }`,
    /// as zod exports `z.string`).
    fn statements(&self, body: Node<'_>, depth: usize, out: &mut Vec<Symbol>) {
        let mut cursor = body.walk();
        let children: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
        let mut local: Vec<Symbol> = Vec::new();
        for node in &children {
            if matches!(
                node.kind(),
                "ambient_declaration"
                    | "lexical_declaration"
                    | "function_signature"
                    | "class_declaration"
                    | "interface_declaration"
                    | "type_alias_declaration"
            ) {
                if let Some(symbol) = self.declaration(*node, self.doc_comment(*node), depth) {
                    merge(&mut local, symbol);
                }
            }
        }
        for node in children {
            if node.kind() != "export_statement" {
                continue;
            }
            let Some(declaration) = node.child_by_field_name("declaration") else {
                if node.child_by_field_name("source").is_none() {
                    self.export_list(node, &local, out);
                }
                continue;
            };
            let doc = self.doc_comment(node);
            if doc.as_deref().is_some_and(super::docstring::jsdoc_hidden) {
                continue;
            }
            if let Some(symbol) = self.declaration(declaration, doc, depth) {
                merge(out, symbol);
            }
        }
    }

    /// The local declarations `export { a as b }` names, under their
    /// exported names.
    fn export_list(&self, node: Node<'_>, local: &[Symbol], out: &mut Vec<Symbol>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let Some(clause) = children.iter().find(|c| c.kind() == "export_clause") else {
            // `export = leftPad` and `export default leftPad`: the local
            // declaration is the module's API under its own name.
            let named = node
                .child_by_field_name("value")
                .or_else(|| children.iter().copied().find(|c| c.kind() == "identifier"));
            if let Some(name) = named.filter(|n| n.kind() == "identifier") {
                let name = self.text(name);
                for symbol in local.iter().filter(|s| s.name == name) {
                    merge(out, symbol.clone());
                }
            }
            return;
        };
        let mut cursor = clause.walk();
        for specifier in clause.named_children(&mut cursor) {
            let Some(name) = specifier.child_by_field_name("name").map(|n| self.text(n)) else {
                continue;
            };
            let alias = specifier
                .child_by_field_name("alias")
                .map_or(name, |a| self.text(a));
            if let Some(symbol) = local.iter().find(|s| s.name == name) {
                let mut symbol = symbol.clone();
                symbol.name = alias.to_owned();
                merge(out, symbol);
            }
        }
    }

    /// The JSDoc comment right before `node`, if any.
    fn doc_comment(&self, node: Node<'_>) -> Option<String> {
        let comment = node.prev_sibling().filter(|c| c.kind() == "comment")?;
        let text = self.text(comment);
        let adjacent = comment.end_position().row + 1 >= node.start_position().row;
        (text.starts_with("/**") && adjacent).then(|| text.to_owned())
    }

    fn declaration(&self, node: Node<'_>, doc: Option<String>, depth: usize) -> Option<Symbol> {
        let node = if node.kind() == "ambient_declaration" {
            node.named_child(0)?
        } else {
            node
        };
        let name = |n: Node<'_>| {
            n.child_by_field_name("name")
                .map(|n| self.text(n).to_owned())
        };
        let symbol = |name: String, kind: Kind, signature: String, members: Vec<Symbol>| Symbol {
            name,
            kind,
            signatures: vec![signature],
            doc: doc.clone(),
            bases: Vec::new(),
            members,
            annotated: false,
            params: Vec::new(),
        };
        match node.kind() {
            "function_signature" | "function_declaration" => Some(symbol(
                name(node)?,
                Kind::Function,
                self.head(node, "body"),
                Vec::new(),
            )),
            "class_declaration" | "abstract_class_declaration" => {
                let members = node
                    .child_by_field_name("body")
                    .map(|b| self.members(b))
                    .unwrap_or_default();
                Some(symbol(
                    name(node)?,
                    Kind::Class,
                    self.head(node, "body"),
                    members,
                ))
            }
            "interface_declaration" => {
                let members = node
                    .child_by_field_name("body")
                    .map(|b| self.members(b))
                    .unwrap_or_default();
                Some(symbol(
                    name(node)?,
                    Kind::Type,
                    self.head(node, "body"),
                    members,
                ))
            }
            "type_alias_declaration" | "enum_declaration" => Some(symbol(
                name(node)?,
                Kind::Type,
                cut_lines(self.text(node)),
                Vec::new(),
            )),
            "lexical_declaration" | "variable_declaration" => {
                let declarator = {
                    let mut cursor = node.walk();
                    let found = node
                        .named_children(&mut cursor)
                        .find(|c| c.kind() == "variable_declarator");
                    found?
                };
                let keyword = self.text(node).split_whitespace().next().unwrap_or("const");
                let signature = format!("{keyword} {}", cut_lines(self.text(declarator)));
                Some(symbol(
                    name(declarator)?,
                    Kind::Attribute,
                    signature,
                    Vec::new(),
                ))
            }
            "internal_module" | "module" if depth < MAX_NAMESPACE_DEPTH => {
                let mut members = Vec::new();
                if let Some(body) = node.child_by_field_name("body") {
                    self.statements(body, depth + 1, &mut members);
                }
                let name = name(node)?;
                let signature = format!("namespace {name}");
                Some(symbol(name, Kind::Namespace, signature, members))
            }
            _ => None,
        }
    }

    /// A class's or interface's public members.
    fn members(&self, body: Node<'_>) -> Vec<Symbol> {
        let mut cursor = body.walk();
        let mut members = Vec::new();
        for member in body.named_children(&mut cursor) {
            let kind = match member.kind() {
                "method_signature" | "method_definition" | "abstract_method_signature" => {
                    Kind::Function
                }
                "property_signature" | "public_field_definition" => Kind::Attribute,
                _ => continue,
            };
            let Some(name) = member
                .child_by_field_name("name")
                .map(|n| self.text(n).to_owned())
            else {
                continue;
            };
            let private = {
                let mut c = member.walk();
                let found = member
                    .named_children(&mut c)
                    .any(|m| m.kind() == "accessibility_modifier" && self.text(m) != "public");
                found
            };
            if private || name.starts_with('#') || name.starts_with('_') {
                continue;
            }
            let doc = self.doc_comment(member);
            if doc.as_deref().is_some_and(super::docstring::jsdoc_hidden) {
                continue;
            }
            let signature = cut_lines(self.text(member).trim_end_matches([';', ',']));
            merge(
                &mut members,
                Symbol {
                    name,
                    kind,
                    signatures: vec![signature],
                    doc,
                    bases: Vec::new(),
                    members: Vec::new(),
                    annotated: false,
                    params: Vec::new(),
                },
            );
        }
        members
    }

    /// A declaration's text before its `body` field (a class's or
    /// interface's heading, a function's signature), without `export`.
    fn head(&self, node: Node<'_>, body: &str) -> String {
        let end = node
            .child_by_field_name(body)
            .map_or(node.end_byte(), |b| b.start_byte());
        let text = std::str::from_utf8(&self.src[node.start_byte()..end]).unwrap_or("");
        cut_lines(text.trim().trim_end_matches(';'))
    }
}

/// Overloads (a name declared again) add their signature to the first;
/// a namespace merged with a function or class (declaration merging) adds
/// its members.
fn merge(symbols: &mut Vec<Symbol>, symbol: Symbol) {
    let kept = symbols.len();
    match symbols.iter_mut().find(|s| s.name == symbol.name) {
        Some(first) => {
            if first.kind == symbol.kind {
                for signature in symbol.signatures {
                    if !first.signatures.contains(&signature) {
                        first.signatures.push(signature);
                    }
                }
            }
            for member in symbol.members {
                if !first.members.iter().any(|m| m.name == member.name) {
                    first.members.push(member);
                }
            }
            if first.doc.is_none() {
                first.doc = symbol.doc;
            }
        }
        None if kept < MAX_SYMBOLS => symbols.push(symbol),
        None => {}
    }
}

fn cut_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_LINES {
        return text.to_owned();
    }
    format!(
        "{}\n// … {} more lines",
        lines[..MAX_LINES].join("\n"),
        lines.len() - MAX_LINES
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARATIONS: &str = r#"import { Foo } from "./foo";
/**
 * Parses a schema.
 * @param input - the value
 */
export declare function parse(input: unknown): Result;
export declare function parse(input: unknown, strict: boolean): Result;
/** A string schema. */
export declare class ZodString extends ZodType<string> {
    /** Requires a minimum length. */
    min(minLength: number, message?: string): ZodString;
    private _cached;
    _parse(input: ParseInput): ParseReturnType<string>;
    readonly isEmail: boolean;
}
export interface Options {
    /** Whether to trim. */
    trim?: boolean;
}
export type Shape = { [k: string]: ZodTypeAny };
/** @internal */
export declare function hidden(): void;
declare function notExported(): void;
export declare const VERSION: string;
export declare namespace z {
    export function string(): ZodString;
}
declare const stringType: (params?: RawCreateParams) => ZodString;
export { stringType as string };
"#;

    #[test]
    fn a_commonjs_export_documents_its_local_declaration() {
        let symbols = read(
            "declare function leftPad(str: string|number, len: number): string;\ndeclare namespace leftPad { }\nexport = leftPad;\n",
        )
        .unwrap();
        assert_eq!(symbols.len(), 1, "{symbols:?}");
        assert_eq!(
            symbols[0].signatures[0],
            "function leftPad(str: string|number, len: number): string"
        );
    }

    #[test]
    fn reads_exported_declarations_with_their_doc_comments() {
        let symbols = read(DECLARATIONS).unwrap();
        let names: Vec<(&str, Kind)> = symbols.iter().map(|s| (s.name.as_str(), s.kind)).collect();
        assert_eq!(
            names,
            [
                ("parse", Kind::Function),
                ("ZodString", Kind::Class),
                ("Options", Kind::Type),
                ("Shape", Kind::Type),
                ("VERSION", Kind::Attribute),
                ("z", Kind::Namespace),
                ("string", Kind::Attribute),
            ]
        );
        let parse = &symbols[0];
        assert_eq!(parse.signatures.len(), 2, "{:?}", parse.signatures);
        assert_eq!(
            parse.signatures[0],
            "function parse(input: unknown): Result"
        );
        assert!(parse.doc.as_deref().unwrap().contains("Parses a schema."));
        let class = &symbols[1];
        assert_eq!(
            class.signatures[0],
            "class ZodString extends ZodType<string>"
        );
        let members: Vec<&str> = class.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(members, ["min", "isEmail"]);
        assert_eq!(
            class.members[0].doc.as_deref(),
            Some("/** Requires a minimum length. */")
        );
        assert_eq!(symbols[4].signatures[0], "const VERSION: string");
        assert_eq!(symbols[5].members[0].name, "string");
        assert_eq!(
            symbols[6].signatures[0],
            "const stringType: (params?: RawCreateParams) => ZodString"
        );
    }

    #[test]
    fn declaration_files_follow_the_manifests_types() {
        let paths = [
            "package/package.json",
            "package/index.d.ts",
            "package/lib/index.d.ts",
            "package/lib/types.d.ts",
            "package/lib/__tests__/a.d.ts",
            "package/node_modules/x/index.d.ts",
            "package/lib/index.js",
        ];
        let files = declaration_files(&paths, |_| Some(r#"{"types": "./lib/index.d.ts"}"#.into()));
        let mut found: Vec<&str> = files.iter().map(|(_, m)| m.as_str()).collect();
        found.sort();
        assert_eq!(found, ["lib/index", "lib/types"]);
        let untyped = declaration_files(&paths, |_| Some("{}".into()));
        assert_eq!(untyped.len(), 3, "{untyped:?}");
    }
}
