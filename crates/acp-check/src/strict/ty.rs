//! The types of the table: what a method is and what a type may be.

use serde_json::Value;
use std::collections::HashMap;

/// Which side handles a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    /// The agent handles it (the client sends it).
    Agent,
    /// The client handles it (the agent sends it).
    Client,
    /// Either side (`$/cancel_request`).
    Protocol,
}

/// One method of the table.
#[derive(Debug, Clone)]
pub struct Method {
    /// Who handles it.
    pub handler: Handler,
    /// The type of its params.
    pub params: String,
    /// The type of its result; `None` for a notification.
    pub result: Option<String>,
}

/// A type of the table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    Any,
    Null,
    Bool,
    Str,
    /// An integer within these bounds.
    Int(i128, i128),
    Num,
    /// Any JSON object.
    Obj,
    Const(Value),
    Ref(String),
    List(Box<Ty>),
    Map(Box<Ty>),
    Object(Vec<Field>),
    Nullable(Box<Ty>),
    Either(Vec<Ty>),
    Both(Vec<Ty>),
    Tagged {
        tag: String,
        variants: Vec<(Option<String>, Ty)>,
    },
}

/// A field of an object type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub name: String,
    pub required: bool,
    pub ty: Ty,
}

/// Why [`Table::parse`](super::Table::parse) rejected a table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// A line is neither a type (`Name = type`) nor a method (`@method`) in
    /// the notation, or its type does not parse.
    #[error("line {line}: {message}")]
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A method names a type the table does not define.
    #[error("method {method} names the unknown type {ty}")]
    UnknownType {
        /// The method.
        method: String,
        /// The type it names.
        ty: String,
    },
}

/// The table's types, by name.
pub(crate) type Defs = HashMap<String, Ty>;
