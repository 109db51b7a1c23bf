//! A Python module read for its API from its syntax tree (tree-sitter's
//! Python grammar): its classes, functions, methods and documented
//! attributes with their signatures as written (defaults and type hints
//! kept) and their docstrings; `__all__`; and what it imports from where,
//! so that a name a package re-exports (`click.option`, defined in
//! `click.decorators`) is documented under the name users call it by.
//! Nothing is imported or run.

use tree_sitter::{Node, Parser};

use super::symbol::{Kind, ParamDoc, Symbol, MAX_SYMBOLS};

/// How deep definitions are looked for inside `if`/`try`/`with` blocks at
/// a module's top level (`if TYPE_CHECKING:` imports, version branches).
const MAX_BLOCK_DEPTH: usize = 4;
/// How deep classes nest and are still read (a class in a class in a
/// module: pydantic's `Config`).
const MAX_CLASS_DEPTH: usize = 2;
/// The longest default or value shown in a signature before it is cut.
const MAX_VALUE_CHARS: usize = 120;
/// A one-line signature longer than this is laid out one parameter a line.
const MAX_LINE: usize = 88;

/// A module as read.
#[derive(Debug, Default)]
pub(super) struct Module {
    /// Its dotted name (`click.core`; a package's `__init__` is the package).
    pub name: String,
    /// Whether it is a package's `__init__`, whose imports are its API.
    pub package: bool,
    pub doc: Option<String>,
    pub symbols: Vec<Symbol>,
    /// `__all__`'s literal names, when the module sets it.
    pub all: Option<Vec<String>>,
    pub imports: Vec<Import>,
    /// Modules whose every public name this one imports (`from .x import *`).
    pub star_imports: Vec<String>,
}

/// `from MODULE import NAME as ALIAS`, its module made absolute.
#[derive(Debug, Clone)]
pub(super) struct Import {
    pub module: String,
    pub name: String,
    pub alias: String,
    /// `import x as x`, the typing convention for an explicit re-export.
    pub explicit: bool,
}

/// Reads the module `name` from `source`; `None` when it does not parse
/// at all.
pub(super) fn read(name: &str, package: bool, source: &str) -> Option<Module> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(source, None)?;
    let root = tree.root_node();
    let mut reader = Reader {
        src: source.as_bytes(),
        module: Module {
            name: name.to_owned(),
            package,
            ..Module::default()
        },
    };
    reader.module.doc = docstring(root, reader.src);
    reader.statements(root, 0);
    Some(reader.module)
}

struct Reader<'s> {
    src: &'s [u8],
    module: Module,
}

impl Reader<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.src).unwrap_or("")
    }

    /// A module-level block's statements: definitions, imports, `__all__`.
    fn statements(&mut self, block: Node<'_>, depth: usize) {
        let mut cursor = block.walk();
        let children: Vec<Node<'_>> = block.named_children(&mut cursor).collect();
        for (i, node) in children.iter().enumerate() {
            match node.kind() {
                "function_definition" | "class_definition" | "decorated_definition" => {
                    if let Some(symbol) = self.definition(*node, 0) {
                        push_new(&mut self.module.symbols, symbol);
                    }
                }
                "import_from_statement" => self.import(*node),
                "expression_statement" => {
                    let doc = children
                        .get(i + 1)
                        .and_then(|next| string_statement(*next, self.src));
                    self.module_assignment(*node, doc);
                }
                "if_statement" | "try_statement" | "with_statement" if depth < MAX_BLOCK_DEPTH => {
                    self.blocks(*node, depth + 1);
                }
                _ => {}
            }
        }
    }

    /// The blocks of a compound statement (every branch: a name defined
    /// in either is the module's).
    fn blocks(&mut self, node: Node<'_>, depth: usize) {
        let mut cursor = node.walk();
        let parts: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for part in parts {
            match part.kind() {
                "block" => self.statements(part, depth),
                "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
                    self.blocks(part, depth)
                }
                _ => {}
            }
        }
    }

    /// `from X import a, b as c` and `from X import *`.
    fn import(&mut self, node: Node<'_>) {
        let Some(from) = node.child_by_field_name("module_name") else {
            return;
        };
        let Some(module) = absolute(&self.module.name, self.module.package, self.text(from)) else {
            return;
        };
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.id() == from.id() {
                continue;
            }
            match child.kind() {
                "wildcard_import" => self.module.star_imports.push(module.clone()),
                "dotted_name" => {
                    let name = self.text(child).to_owned();
                    self.module.imports.push(Import {
                        module: module.clone(),
                        alias: name.clone(),
                        name,
                        explicit: false,
                    });
                }
                "aliased_import" => {
                    let (Some(name), Some(alias)) = (
                        child.child_by_field_name("name"),
                        child.child_by_field_name("alias"),
                    ) else {
                        continue;
                    };
                    let (name, alias) = (self.text(name).to_owned(), self.text(alias).to_owned());
                    self.module.imports.push(Import {
                        module: module.clone(),
                        explicit: name == alias,
                        name,
                        alias,
                    });
                }
                _ => {}
            }
        }
    }

    /// `__all__` (set, extended, added to) and documented or annotated
    /// module attributes.
    fn module_assignment(&mut self, statement: Node<'_>, doc: Option<String>) {
        let Some(expr) = statement.named_child(0) else {
            return;
        };
        match expr.kind() {
            "assignment" => {
                let Some(left) = expr.child_by_field_name("left") else {
                    return;
                };
                let name = self.text(left).to_owned();
                if name == "__all__" {
                    if let Some(right) = expr.child_by_field_name("right") {
                        let names = string_literals(right, self.src);
                        self.module.all = Some(names);
                    }
                    return;
                }
                if left.kind() != "identifier" {
                    return;
                }
                if let Some(symbol) = self.attribute(expr, name, doc) {
                    push_new(&mut self.module.symbols, symbol);
                }
            }
            "augmented_assignment" => {
                let left = expr.child_by_field_name("left");
                if left.is_some_and(|l| self.text(l) == "__all__") {
                    if let Some(right) = expr.child_by_field_name("right") {
                        let names = string_literals(right, self.src);
                        self.module.all.get_or_insert_with(Vec::new).extend(names);
                    }
                }
            }
            "call" => {
                // `__all__.extend([...])` / `__all__.append("x")`.
                let function = expr.child_by_field_name("function");
                let called = function.map(|f| self.text(f)).unwrap_or("");
                if matches!(called, "__all__.extend" | "__all__.append") {
                    if let Some(args) = expr.child_by_field_name("arguments") {
                        let names = string_literals(args, self.src);
                        self.module.all.get_or_insert_with(Vec::new).extend(names);
                    }
                }
            }
            _ => {}
        }
    }

    /// An attribute (`name: type = value` or `name = value`) as a symbol.
    fn attribute(&self, assignment: Node<'_>, name: String, doc: Option<String>) -> Option<Symbol> {
        let kind = assignment.child_by_field_name("type");
        let value = assignment.child_by_field_name("right");
        let mut signature = name.clone();
        if let Some(kind) = kind {
            signature.push_str(": ");
            signature.push_str(&squash(self.text(kind)));
        }
        if let Some(value) = value {
            signature.push_str(" = ");
            signature.push_str(&cut_value(&squash(self.text(value))));
        }
        Some(Symbol {
            name,
            kind: Kind::Attribute,
            signatures: vec![signature],
            doc,
            bases: Vec::new(),
            members: Vec::new(),
            annotated: kind.is_some(),
            params: Vec::new(),
        })
    }

    /// A class or function (decorated or not), read to `depth` classes deep.
    fn definition(&self, node: Node<'_>, depth: usize) -> Option<Symbol> {
        let (decorators, definition) = if node.kind() == "decorated_definition" {
            let mut cursor = node.walk();
            let decorators: Vec<String> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "decorator")
                .map(|d| squash(self.text(d)))
                .collect();
            (decorators, node.child_by_field_name("definition")?)
        } else {
            (Vec::new(), node)
        };
        let name = self
            .text(definition.child_by_field_name("name")?)
            .to_owned();
        match definition.kind() {
            "function_definition" => Some(self.function(definition, name, decorators)),
            "class_definition" if depth < MAX_CLASS_DEPTH => {
                Some(self.class(definition, name, decorators, depth))
            }
            _ => None,
        }
    }

    fn function(&self, node: Node<'_>, name: String, decorators: Vec<String>) -> Symbol {
        let is_async = self.text(node).starts_with("async");
        let (params, documented) = node
            .child_by_field_name("parameters")
            .map(|p| self.parameters(p))
            .unwrap_or_default();
        let returns = node
            .child_by_field_name("return_type")
            .map(|r| format!(" -> {}", squash(self.text(r))))
            .unwrap_or_default();
        let head = format!("{}def {name}", if is_async { "async " } else { "" });
        let mut signature = String::new();
        for decorator in &decorators {
            signature.push_str(decorator);
            signature.push('\n');
        }
        signature.push_str(&lay_out(&head, &params, &returns));
        let property = decorators
            .iter()
            .any(|d| d.ends_with("property") || d.ends_with(".setter"));
        Symbol {
            name,
            kind: if property {
                Kind::Property
            } else {
                Kind::Function
            },
            signatures: vec![signature],
            doc: node
                .child_by_field_name("body")
                .and_then(|b| docstring(b, self.src)),
            bases: Vec::new(),
            members: Vec::new(),
            annotated: false,
            params: documented,
        }
    }

    fn class(&self, node: Node<'_>, name: String, decorators: Vec<String>, depth: usize) -> Symbol {
        let bases: Vec<String> = node
            .child_by_field_name("superclasses")
            .map(|list| {
                let mut cursor = list.walk();
                list.named_children(&mut cursor)
                    .filter(|b| b.kind() != "keyword_argument" && b.kind() != "comment")
                    .map(|b| squash(self.text(b)))
                    .collect()
            })
            .unwrap_or_default();
        let mut head = String::new();
        for decorator in &decorators {
            head.push_str(decorator);
            head.push('\n');
        }
        head.push_str("class ");
        head.push_str(&name);
        if let Some(list) = node.child_by_field_name("superclasses") {
            head.push_str(&squash(self.text(list)));
        }
        let body = node.child_by_field_name("body");
        let mut members = Vec::new();
        let mut constructor = None;
        if let Some(body) = body {
            let mut cursor = body.walk();
            let children: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
            for (i, child) in children.iter().enumerate() {
                match child.kind() {
                    "function_definition" | "class_definition" | "decorated_definition" => {
                        let Some(member) = self.definition(*child, depth + 1) else {
                            continue;
                        };
                        if member.name == "__init__" {
                            constructor.get_or_insert(member);
                        } else if !member.name.starts_with('_') {
                            push_new(&mut members, member);
                        }
                    }
                    "expression_statement" => {
                        let Some(expr) = child.named_child(0).filter(|e| e.kind() == "assignment")
                        else {
                            continue;
                        };
                        let Some(left) = expr
                            .child_by_field_name("left")
                            .filter(|l| l.kind() == "identifier")
                        else {
                            continue;
                        };
                        let name = self.text(left).to_owned();
                        if name.starts_with('_') {
                            continue;
                        }
                        let doc = children
                            .get(i + 1)
                            .and_then(|next| string_statement(*next, self.src));
                        if let Some(attribute) = self.attribute(expr, name, doc) {
                            push_new(&mut members, attribute);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut signature = head;
        let mut doc = body.and_then(|b| docstring(b, self.src));
        let mut params = Vec::new();
        if let Some(init) = constructor {
            // The constructor's parameters are the class's: shown as
            // `__init__`'s signature under the class line, its docstring
            // after the class's (autodoc's `class` content, both).
            if let Some(init_signature) = init.signatures.first() {
                signature.push_str(":\n");
                for line in init_signature.lines() {
                    signature.push_str("    ");
                    signature.push_str(line);
                    signature.push('\n');
                }
                signature.truncate(signature.trim_end().len());
            }
            doc = match (doc, init.doc) {
                (Some(class), Some(init)) => Some(format!("{class}\n\n{init}")),
                (class, init) => class.or(init),
            };
            params = init.params;
        }
        Symbol {
            name,
            kind: Kind::Class,
            signatures: vec![signature],
            doc,
            bases,
            members,
            annotated: false,
            params,
        }
    }

    /// A parameter list's parameters, each as written (whitespace
    /// squashed, long defaults cut), and the documentation of those that
    /// carry it in their annotation (PEP 727's `Annotated[T, Doc("…")]`,
    /// FastAPI's and Typer's convention): such a parameter is shown as
    /// `name: T = default`, its text in the symbol's parameter list, so the
    /// signature stays a signature.
    fn parameters(&self, list: Node<'_>) -> (Vec<String>, Vec<ParamDoc>) {
        let mut cursor = list.walk();
        let mut documented = Vec::new();
        let params = list
            .named_children(&mut cursor)
            .filter(|p| p.kind() != "comment")
            .map(|p| {
                if let Some((shown, doc)) = self.annotated_doc(p) {
                    documented.push(doc);
                    return shown;
                }
                let text = squash(self.text(p));
                match text.split_once('=') {
                    Some((head, value)) if value.len() > MAX_VALUE_CHARS => {
                        format!("{head}={}", cut_value(value))
                    }
                    _ => text,
                }
            })
            .collect();
        (params, documented)
    }

    /// A parameter annotated `Annotated[T, Doc("…")]`: how it is shown,
    /// and its documentation.
    fn annotated_doc(&self, param: Node<'_>) -> Option<(String, ParamDoc)> {
        let kind = param.child_by_field_name("type")?;
        let written = self.text(kind);
        let inner = written
            .trim_start()
            .strip_prefix("Annotated[")
            .or_else(|| {
                written
                    .split_once(".Annotated[")
                    .filter(|(module, _)| is_dotted_name(module.trim()))
                    .map(|(_, rest)| rest)
            })?;
        let mut doc = None;
        let mut deprecated = false;
        let mut stack = vec![kind];
        while let Some(node) = stack.pop() {
            if node.kind() == "call" {
                let function = node.child_by_field_name("function").map(|f| self.text(f));
                let last = function.map(|f| f.rsplit('.').next().unwrap_or(f));
                match last {
                    Some("Doc") if doc.is_none() => {
                        doc = node
                            .child_by_field_name("arguments")
                            .and_then(|args| args.named_child(0))
                            .and_then(|arg| string_value(arg, self.src));
                    }
                    Some("deprecated") => deprecated = true,
                    _ => {}
                }
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        let doc = doc?;
        let base = squash(top_level_first(inner));
        let before_type =
            std::str::from_utf8(&self.src[param.start_byte()..kind.start_byte()]).unwrap_or("");
        let default = param
            .child_by_field_name("value")
            .map(|v| format!(" = {}", cut_value(&squash(self.text(v)))))
            .unwrap_or_default();
        let name = before_type
            .trim_end()
            .trim_end_matches(':')
            .trim()
            .to_owned();
        let shown = format!("{}: {base}{default}", squash(&name));
        Some((
            shown,
            ParamDoc {
                name: name.trim_start_matches('*').to_owned(),
                kind: base,
                doc: clean_block(&doc),
                deprecated,
            },
        ))
    }
}

/// The first element of a bracketed list's text (`bool, Doc(…)]` gives
/// `bool`): up to the first comma or closing bracket at depth zero.
fn top_level_first(inner: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' if depth == 0 => return inner[..i].trim(),
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => return inner[..i].trim(),
            _ => {}
        }
    }
    inner.trim()
}

fn is_dotted_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// A documentation string's lines without the indentation its quotes
/// gave them (as `inspect.cleandoc`), blank lines around dropped.
fn clean_block(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let common = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let line = if i == 0 {
            line.trim()
        } else {
            line.get(common..).unwrap_or("").trim_end()
        };
        out.push(line.to_owned());
    }
    out.join("\n").trim().to_owned()
}

/// A definition, unless one of that name came first (an `@overload`
/// stub's siblings, or the two branches of a version check): overloads
/// add their signatures to the first; the one with a docstring gives it.
fn push_new(symbols: &mut Vec<Symbol>, symbol: Symbol) {
    let kept = symbols.len();
    match symbols.iter_mut().find(|s| s.name == symbol.name) {
        Some(first) => {
            // Overloads are the signatures callers see; the implementation
            // after them (`def f(*args)`) only gives the docstring.
            let overload = |s: &Symbol| s.signatures.iter().any(|s| s.contains("overload"));
            if overload(first) && overload(&symbol) && symbol.kind == first.kind {
                for signature in symbol.signatures {
                    if !first.signatures.contains(&signature) {
                        first.signatures.push(signature);
                    }
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

/// `head(params)returns` on one line, or one parameter a line when long.
fn lay_out(head: &str, params: &[String], returns: &str) -> String {
    let one_line = format!("{head}({}){returns}", params.join(", "));
    if one_line.len() <= MAX_LINE || params.is_empty() {
        return one_line;
    }
    let mut out = format!("{head}(\n");
    for param in params {
        out.push_str("    ");
        out.push_str(param);
        out.push_str(",\n");
    }
    out.push(')');
    out.push_str(returns);
    out
}

/// The docstring of a module or a definition's body: its first statement,
/// if a string.
fn docstring(body: Node<'_>, src: &[u8]) -> Option<String> {
    let mut cursor = body.walk();
    let first = body
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")?;
    string_statement(first, src)
}

/// The value of a statement that is a lone string (a docstring).
fn string_statement(node: Node<'_>, src: &[u8]) -> Option<String> {
    if node.kind() != "expression_statement" || node.named_child_count() != 1 {
        return None;
    }
    let string = node.named_child(0)?;
    let value = string_value(string, src)?;
    (!value.trim().is_empty()).then_some(value)
}

/// A string literal's value: its content parts, without prefix and quotes
/// (escapes as written: a docstring shows them so).
fn string_value(node: Node<'_>, src: &[u8]) -> Option<String> {
    match node.kind() {
        "string" => {
            let mut cursor = node.walk();
            let mut value = String::new();
            for part in node.named_children(&mut cursor) {
                if matches!(part.kind(), "string_content" | "escape_sequence") {
                    value.push_str(part.utf8_text(src).ok()?);
                }
            }
            Some(value)
        }
        "concatenated_string" => {
            let mut cursor = node.walk();
            let parts: Option<Vec<String>> = node
                .named_children(&mut cursor)
                .map(|s| string_value(s, src))
                .collect();
            Some(parts?.concat())
        }
        _ => None,
    }
}

/// The string literals in an expression (`["a", "b"]`, `("a",) + x`).
fn string_literals(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "string" {
            if let Some(value) = string_value(n, src) {
                found.push(value);
            }
            continue;
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    found
}

/// An import's module made absolute: `.x` from `pkg.mod` is `pkg.x`, from
/// the package `pkg` itself `pkg.x`; `None` past the top.
fn absolute(module: &str, package: bool, from: &str) -> Option<String> {
    let dots = from.len() - from.trim_start_matches('.').len();
    let rest = &from[dots..];
    if dots == 0 {
        return Some(rest.to_owned());
    }
    let mut parts: Vec<&str> = module.split('.').collect();
    // `.` is the package the module is in (itself, for an `__init__`).
    let up = if package { dots - 1 } else { dots };
    if up >= parts.len() {
        return None;
    }
    parts.truncate(parts.len() - up);
    if !rest.is_empty() {
        parts.push(rest);
    }
    Some(parts.join("."))
}

/// Whitespace runs as one space, outside strings as well as inside: a
/// signature reads on one line.
fn squash(text: &str) -> String {
    let squashed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    squashed
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(", )", ")")
}

fn cut_value(value: &str) -> String {
    if value.chars().count() <= MAX_VALUE_CHARS {
        return value.to_owned();
    }
    let cut: String = value.chars().take(MAX_VALUE_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#""""Decorators for commands."""
import typing as t
from .core import Option as Option, Argument
from . import types
from ._compat import *

__all__ = ["option", "Group"]
__all__ += ["VERSION"]

VERSION: str = "8.1"
"""The version."""

if t.TYPE_CHECKING:
    from .testing import CliRunner

def option(*param_decls: str, cls: t.Optional[t.Type[Option]] = None, **attrs: t.Any) -> t.Callable[[FC], FC]:
    """Attaches an option to the command.

    :param cls: the option class to instantiate.
    """

@t.overload
def group(name: t.Callable) -> Group: ...
@t.overload
def group(name: str) -> t.Callable: ...
def group(name=None, **attrs):
    """Creates a group."""

class Group(MultiCommand, metaclass=Meta):
    """A group of commands."""

    allow_extra_args = True
    #: not a docstring
    chain: bool = False
    """Whether commands chain."""

    def __init__(self, name: str | None = None, commands: dict | None = None) -> None:
        """Build a group."""

    @property
    def size(self) -> int:
        return 1

    def _private(self): ...

    def command(self, *args, **kwargs):
        """A shortcut decorator."""
"#;

    #[test]
    fn reads_a_modules_api_as_written() {
        let module = read("click.decorators", false, SOURCE).unwrap();
        assert_eq!(module.doc.as_deref(), Some("Decorators for commands."));
        assert_eq!(
            module.all.as_deref(),
            Some(
                &[
                    "option".to_owned(),
                    "Group".to_owned(),
                    "VERSION".to_owned()
                ][..]
            )
        );
        let names: Vec<&str> = module.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["VERSION", "option", "group", "Group"]);
        let option = &module.symbols[1];
        assert_eq!(
            option.signatures,
            ["def option(*param_decls: str, cls: t.Optional[t.Type[Option]] = None, **attrs: t.Any) -> t.Callable[[FC], FC]".to_owned().replace("def option(", "def option(\n    ").replace(", cls", ",\n    cls").replace(", **attrs: t.Any)", ",\n    **attrs: t.Any,\n)")]
        );
        assert!(option.doc.as_deref().unwrap().contains(":param cls:"));
        let group = &module.symbols[2];
        assert_eq!(group.signatures.len(), 2, "{:?}", group.signatures);
        assert_eq!(group.doc.as_deref(), Some("Creates a group."));
        let class = &module.symbols[3];
        assert_eq!(class.bases, ["MultiCommand"]);
        assert!(class.signatures[0].starts_with("class Group(MultiCommand, metaclass=Meta):\n    def __init__(self, name: str | None = None, commands: dict | None = None) -> None"), "{}", class.signatures[0]);
        assert_eq!(
            class.doc.as_deref(),
            Some("A group of commands.\n\nBuild a group.")
        );
        let members: Vec<(&str, Kind)> = class
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.kind))
            .collect();
        assert_eq!(
            members,
            [
                ("allow_extra_args", Kind::Attribute),
                ("chain", Kind::Attribute),
                ("size", Kind::Property),
                ("command", Kind::Function)
            ]
        );
        assert_eq!(
            class.members[1].doc.as_deref(),
            Some("Whether commands chain.")
        );
        let imports: Vec<(&str, &str, &str)> = module
            .imports
            .iter()
            .map(|i| (i.module.as_str(), i.name.as_str(), i.alias.as_str()))
            .collect();
        assert_eq!(
            imports,
            [
                ("click.core", "Option", "Option"),
                ("click.core", "Argument", "Argument"),
                ("click", "types", "types"),
                ("click.testing", "CliRunner", "CliRunner"),
            ]
        );
        assert!(module.imports[0].explicit);
        assert_eq!(module.star_imports, ["click._compat"]);
    }

    #[test]
    fn parameters_documented_in_their_annotations_leave_the_signature() {
        let source = "class App:\n    def get(\n        self,\n        path: Annotated[\n            str,\n            Doc(\n                \"\"\"\n                The URL path.\n\n                ```python\n                app.get(\"/items\")\n                ```\n                \"\"\"\n            ),\n        ],\n        *,\n        old: te.Annotated[Optional[bool], Doc(\"Old.\"), deprecated(\"no\")] = None,\n    ) -> None:\n        \"\"\"Adds a route.\"\"\"\n";
        let module = read("fastapi.applications", false, source).unwrap();
        let get = &module.symbols[0].members[0];
        assert_eq!(
            get.signatures,
            ["def get(self, path: str, *, old: Optional[bool] = None) -> None"]
        );
        assert_eq!(get.params.len(), 2);
        assert_eq!(get.params[0].name, "path");
        assert_eq!(
            get.params[0].doc,
            "The URL path.\n\n```python\napp.get(\"/items\")\n```"
        );
        assert!(get.params[1].deprecated && get.params[1].kind == "Optional[bool]");
    }

    #[test]
    fn relative_imports_resolve_from_a_package_and_a_module() {
        assert_eq!(
            absolute("httpx", true, "._client").as_deref(),
            Some("httpx._client")
        );
        assert_eq!(
            absolute("httpx._api", false, "._client").as_deref(),
            Some("httpx._client")
        );
        assert_eq!(absolute("a.b.c", false, "..x").as_deref(), Some("a.x"));
        assert_eq!(absolute("a", true, "...x"), None);
        assert_eq!(absolute("a.b", false, "typing").as_deref(), Some("typing"));
    }

    #[test]
    fn broken_code_still_reads_what_parses() {
        let module = read(
            "m",
            false,
            "def ok(a):\n    \"\"\"Fine.\"\"\"\n\ndef broken(:\n",
        )
        .unwrap();
        assert!(module.symbols.iter().any(|s| s.name == "ok"));
    }
}
