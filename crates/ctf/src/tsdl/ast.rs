//! The TSDL syntax tree: what the text says, before names and paths are resolved.

/// A type specifier.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeSpec {
    /// `integer { ... }`
    Integer(Vec<Attr>),
    /// `floating_point { ... }`
    Float(Vec<Attr>),
    /// `string` or `string { ... }`
    String(Vec<Attr>),
    /// `struct [name] [{ ... }] [align(N)]`
    Struct {
        /// Tag name.
        name: Option<String>,
        /// Members, when defined here.
        body: Option<Vec<Decl>>,
        /// `align(N)` value.
        align: Option<u64>,
    },
    /// `variant [name] [<tag>] [{ ... }]`
    Variant {
        /// Tag name.
        name: Option<String>,
        /// Selector path, dotted.
        tag: Option<Vec<String>>,
        /// Options, when defined here.
        body: Option<Vec<Decl>>,
    },
    /// `enum [name] [: container] [{ ... }]`
    Enum {
        /// Tag name.
        name: Option<String>,
        /// Container type.
        container: Option<Box<TypeSpec>>,
        /// Enumerators, when defined here.
        body: Option<Vec<Enumerator>>,
    },
    /// A type name introduced by `typealias`/`typedef` (words joined by spaces).
    Named(String),
}

/// An array dimension: a constant or a field path.
#[derive(Debug, Clone, PartialEq)]
pub enum Dim {
    /// Static length.
    Len(u64),
    /// Length read from a field.
    Path(Vec<String>),
}

/// A declared name with array/sequence dimensions.
#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    /// Name (may be empty for abstract declarators).
    pub name: String,
    /// Dimensions, outermost first.
    pub dims: Vec<Dim>,
}

/// A declaration inside a struct, variant, block or the top level.
#[derive(Debug, Clone, PartialEq)]
pub enum Decl {
    /// Fields of a type.
    Field {
        /// The type.
        ty: TypeSpec,
        /// Declared names.
        decls: Vec<Declarator>,
        /// Line.
        line: u32,
    },
    /// `typealias TYPE [dims] := NAME [dims];`
    Typealias {
        /// The aliased type.
        ty: TypeSpec,
        /// Dimensions on the aliased side.
        dims: Vec<Dim>,
        /// New type name.
        alias: String,
        /// Line.
        line: u32,
    },
    /// `typedef TYPE NAME[dims], ...;`
    Typedef {
        /// The type.
        ty: TypeSpec,
        /// New names.
        decls: Vec<Declarator>,
        /// Line.
        line: u32,
    },
    /// A type specifier alone, e.g. `struct foo { ... };`.
    TypeOnly(TypeSpec, u32),
}

/// An enumerator: `label [= v | = lo ... hi]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumerator {
    /// Label.
    pub label: String,
    /// Explicit range.
    pub range: Option<(i128, i128)>,
    /// Line.
    pub line: u32,
}

/// The right-hand side of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Integer (signed, wide enough for u64 and i64).
    Int(i128),
    /// String literal.
    Str(String),
    /// Identifier or dotted path (`le`, `clock.monotonic.value`).
    Path(Vec<String>),
    /// A type (`:=` assignments).
    Type(Box<TypeSpec>),
}

/// An attribute `lhs = value;` or `lhs := type;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    /// Dotted name (`packet.header`), its parts joined by `.` (one string: attributes
    /// are most of a kernel trace's metadata, and are matched by their whole name).
    pub name: String,
    /// Value.
    pub value: Value,
    /// Line.
    pub line: u32,
}

/// A block item: an attribute or a declaration.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Attribute.
    Attr(Attr),
    /// Declaration (typealias, typedef, type).
    Decl(Decl),
}

/// A top-level statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Top {
    /// `trace|env|clock|stream|event|callsite { ... };`
    Block {
        /// The block keyword.
        kind: String,
        /// Items.
        items: Vec<Item>,
        /// Line of the keyword.
        line: u32,
    },
    /// A declaration.
    Decl(Decl),
}
