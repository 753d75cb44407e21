//! Strict judgement of every message against the wire types.
//!
//! The runtime decodes tolerantly, as the schema allows (a malformed optional
//! field falls back to its default, an unknown enum value is kept as
//! `Other`). A conformance check must not: here a wrong type, a missing
//! required field or a value outside an enum is an [error](Findings::errors),
//! and a field the type does not declare is a [note](Findings::notes).
//!
//! The types come from a table, `v1.types`, holding the facts of the official
//! stable schema in a compact notation of this crate (its header explains
//! it). A test renders the table from the official schema and fails when the
//! file is stale.

mod parse;
mod ty;
mod validate;

use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

pub use ty::{Handler, Method, TableError};
pub use validate::Findings;

use ty::Defs;

/// The strict types and the methods of one protocol version.
#[derive(Debug)]
pub struct Table {
    defs: Defs,
    methods: HashMap<String, Method>,
}

const V1: &str = include_str!("v1.types");

impl Table {
    /// The table of ACP v1 (parsed once).
    pub fn v1() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| Table::parse(V1).expect("the built-in v1 table parses"))
    }

    /// Parses a table in the notation of `v1.types`.
    pub fn parse(text: &str) -> Result<Table, TableError> {
        let (defs, methods) = parse::table(text)?;
        Ok(Table { defs, methods })
    }

    /// The method named `name`, if the table has it.
    pub fn method(&self, name: &str) -> Option<&Method> {
        self.methods.get(name)
    }

    /// Whether the table defines a type of this name.
    pub fn has_type(&self, name: &str) -> bool {
        self.defs.contains_key(name)
    }

    /// Judges `value` as the type `name`; `at` prefixes every path reported.
    pub fn check(&self, name: &str, value: &Value, at: &str) -> Findings {
        let mut out = Findings::default();
        match self.defs.get(name) {
            Some(ty) => validate::check(&self.defs, ty, value, at, &[], &mut out),
            None => out.error(at, format!("no type {name} in the table")),
        }
        out
    }
}

/// A JSON-RPC message, classified by its envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// A request: `id` and `method`.
    Request {
        /// The id, as sent.
        id: Value,
        /// The method.
        method: String,
    },
    /// A notification: `method` and no `id`.
    Notification {
        /// The method.
        method: String,
    },
    /// A response: `id` and `result` or `error`.
    Response {
        /// The id, as sent.
        id: Value,
        /// Whether it carries an `error`.
        is_error: bool,
    },
}

/// Judges one line received from the peer: JSON, the JSON-RPC envelope, and
/// the params or result against the table. `sender_handles` is the side that
/// sent it (a request it sends must be handled by the other side);
/// `response_to` names the method of the request a response answers, when
/// known.
pub fn check_line(
    table: &Table,
    line: &str,
    sent_by: Handler,
    response_to: &dyn Fn(&Value) -> Option<String>,
) -> (Option<Envelope>, Findings) {
    let mut out = Findings::default();
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            out.error("", format!("not JSON ({e})"));
            return (None, out);
        }
    };
    let Some(obj) = value.as_object() else {
        out.error("", "not a JSON object".to_string());
        return (None, out);
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => out.error("jsonrpc", format!("must be \"2.0\", got {other}")),
        None => out.error("jsonrpc", "missing".to_string()),
    }
    for key in obj.keys() {
        if !["jsonrpc", "id", "method", "params", "result", "error"].contains(&key.as_str()) {
            out.note(key, "unknown envelope field".to_string());
        }
    }
    let id = obj.get("id");
    if let Some(id) = id
        && !(id.is_string() || id.is_i64() || id.is_u64() || id.is_null())
    {
        out.error(
            "id",
            format!("must be a string, an integer or null, got {id}"),
        );
    }
    let envelope = if let Some(method) = obj.get("method") {
        let Some(method) = method.as_str() else {
            out.error("method", format!("must be a string, got {method}"));
            return (None, out);
        };
        for key in ["result", "error"] {
            if obj.contains_key(key) {
                out.error(
                    key,
                    "a request or notification has no result or error".into(),
                );
            }
        }
        let params = obj.get("params");
        if let Some(p) = params
            && !(p.is_object() || p.is_array())
        {
            out.error("params", format!("must be an object or an array, got {p}"));
        }
        let known = table.method(method);
        match known {
            Some(m) => {
                let wrong_way = matches!(
                    (m.handler, sent_by),
                    (Handler::Agent, Handler::Agent) | (Handler::Client, Handler::Client)
                );
                if wrong_way {
                    out.error("method", format!("{method} is not sent by this side"));
                }
                if id.is_some() && m.result.is_none() {
                    out.error(
                        "id",
                        format!("{method} is a notification; it carries no id"),
                    );
                }
                if id.is_none() && m.result.is_some() {
                    out.error("id", format!("{method} is a request; it needs an id"));
                }
                if id.is_some_and(Value::is_null) {
                    out.note(
                        "id",
                        "a request id of null is discouraged by JSON-RPC".into(),
                    );
                }
                let empty = Value::Object(Default::default());
                let params = params.unwrap_or(&empty);
                out.merge(table.check(&m.params, params, "params"));
            }
            None if method.starts_with('_') => {}
            None => out.note("method", format!("{method} is not a method of ACP v1")),
        }
        match id {
            Some(id) => Envelope::Request {
                id: id.clone(),
                method: method.to_string(),
            },
            None => Envelope::Notification {
                method: method.to_string(),
            },
        }
    } else {
        let Some(id) = id else {
            out.error("", "neither a request (method), nor a response (id)".into());
            return (None, out);
        };
        match (obj.get("result"), obj.get("error")) {
            (Some(_), Some(_)) => {
                out.error("", "a response has a result or an error, not both".into())
            }
            (None, None) => out.error("", "a response needs a result or an error".into()),
            (Some(result), None) => {
                if let Some(method) = response_to(id)
                    && let Some(ty) = table.method(&method).and_then(|m| m.result.clone())
                {
                    out.merge(table.check(&ty, result, "result"));
                }
            }
            (None, Some(error)) => out.merge(table.check("Error", error, "error")),
        }
        Envelope::Response {
            id: id.clone(),
            is_error: obj.contains_key("error"),
        }
    };
    (Some(envelope), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(ty: &str, v: Value) -> Vec<String> {
        Table::v1().check(ty, &v, "x").errors
    }

    #[test]
    fn a_wrong_type_a_missing_field_and_a_bad_enum_value_are_errors() {
        let ok = json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read", "status": "pending"}});
        assert_eq!(errors("SessionNotification", ok), Vec::<String>::new());
        let bad = json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": 3, "status": "done"}});
        let e = errors("SessionNotification", bad);
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].starts_with("x.update.status: "), "{e:?}");
        assert!(e[0].contains("\"done\""), "{e:?}");
        assert!(e[1].starts_with("x.update.title: "), "{e:?}");
        let missing = json!({"update": {"sessionUpdate": "plan", "entries": []}});
        assert_eq!(
            errors("SessionNotification", missing),
            vec!["x.sessionId: missing (required)"]
        );
        let unknown_kind = json!({"sessionId": "s", "update": {"sessionUpdate": "weather"}});
        let e = errors("SessionNotification", unknown_kind);
        assert!(
            e[0].starts_with("x.update.sessionUpdate: unknown value \"weather\""),
            "{e:?}"
        );
    }

    #[test]
    fn unknown_fields_are_notes_not_errors() {
        let f = Table::v1().check(
            "PromptResponse",
            &json!({"stopReason": "end_turn", "mood": "fine", "_meta": {"a": 1}}),
            "result",
        );
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        assert_eq!(f.notes, vec!["result.mood: unknown field"]);
    }

    #[test]
    fn lines_are_judged_with_their_envelope() {
        let table = Table::v1();
        let none = |_: &Value| None;
        let (env, f) = check_line(
            table,
            "{\"jsonrpc\":\"2.0\",\"id\":1}",
            Handler::Agent,
            &none,
        );
        assert!(matches!(env, Some(Envelope::Response { .. })), "{env:?}");
        assert_eq!(f.errors, vec!["a response needs a result or an error"]);
        let prompt = |_: &Value| Some("session/prompt".to_string());
        let (_, f) = check_line(
            table,
            r#"{"jsonrpc":"2.0","id":"a","result":{"stopReason":"finished"}}"#,
            Handler::Agent,
            &prompt,
        );
        assert_eq!(f.errors.len(), 1, "{:?}", f.errors);
        assert!(f.errors[0].starts_with("result.stopReason: "));
        let (_, f) = check_line(table, "not json", Handler::Agent, &none);
        assert!(f.errors[0].starts_with("not JSON"));
        let (_, f) = check_line(
            table,
            r#"{"jsonrpc":"2.0","method":"session/prompt","id":1,"params":{"sessionId":"s","prompt":[]}}"#,
            Handler::Agent,
            &none,
        );
        assert_eq!(
            f.errors,
            vec!["method: session/prompt is not sent by this side"]
        );
    }
}
