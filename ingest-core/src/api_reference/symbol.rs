//! One documented name of an API, whatever language declared it.

/// Most symbols kept in one module or one class. Far more than real code
/// defines, it bounds what a hostile file costs: each new name is compared
/// with those kept (an overload adds its signature to the first).
pub(super) const MAX_SYMBOLS: usize = 4_096;

/// What a symbol is, which says how it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Class,
    Function,
    /// A method read as an attribute (`@property`, a getter).
    Property,
    /// A module attribute, class field or constant.
    Attribute,
    /// A TypeScript interface, type alias or enum: a shape, not a value.
    Type,
    /// A TypeScript namespace, whose members are its API.
    Namespace,
}

/// A class, function, attribute or type, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Symbol {
    /// Its name where it is declared.
    pub name: String,
    pub kind: Kind,
    /// Its declarations as code (more than one for overloads).
    pub signatures: Vec<String>,
    /// Its docstring or doc comment, as written.
    pub doc: Option<String>,
    /// The classes it extends, as written.
    pub bases: Vec<String>,
    /// Methods, fields and nested classes.
    pub members: Vec<Symbol>,
    /// Whether an attribute carries a type annotation (a field of a
    /// dataclass or model, rather than a plain class constant).
    pub annotated: bool,
    /// Parameters documented in their annotations (PEP 727).
    pub params: Vec<ParamDoc>,
}

/// A parameter's documentation written beside it rather than in the
/// docstring: `debug: Annotated[bool, Doc("…")] = False`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ParamDoc {
    pub name: String,
    /// Its type, as written inside `Annotated[…]`.
    pub kind: String,
    /// The text, Markdown as such projects write it.
    pub doc: String,
    /// Whether `deprecated(…)` is in its annotation too.
    pub deprecated: bool,
}

impl Symbol {
    /// Where it comes on its page: classes and types first, then
    /// functions, then attributes (autodoc's grouping).
    pub(super) fn order(&self) -> u8 {
        match self.kind {
            Kind::Namespace => 0,
            Kind::Class | Kind::Type => 1,
            Kind::Function => 2,
            Kind::Property | Kind::Attribute => 3,
        }
    }
}
