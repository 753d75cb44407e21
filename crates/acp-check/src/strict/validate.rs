//! Judging a JSON value against a type of the table.

use super::ty::{Defs, Ty};
use serde_json::Value;

/// What strict judgement found in one value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Violations of the types: `path: what` (wrong type, missing required
    /// field, value outside an enum, unknown union tag).
    pub errors: Vec<String>,
    /// Fields the types do not declare: `path: unknown field`.
    pub notes: Vec<String>,
}

impl Findings {
    pub(crate) fn error(&mut self, path: &str, what: String) {
        self.errors.push(if path.is_empty() {
            what
        } else {
            format!("{path}: {what}")
        });
    }

    pub(crate) fn note(&mut self, path: &str, what: String) {
        self.notes.push(format!("{path}: {what}"));
    }

    pub(crate) fn merge(&mut self, other: Findings) {
        self.errors.extend(other.errors);
        self.notes.extend(other.notes);
    }

    /// Whether nothing was wrong (notes allowed).
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 40 {
        let cut: String = text.chars().take(37).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// The fields `ty` declares for `v` (the chosen variant's, for a union).
fn keys(defs: &Defs, ty: &Ty, v: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    match ty {
        Ty::Object(fields) => out.extend(fields.iter().map(|f| f.name.clone())),
        Ty::Ref(name) => {
            if let Some(t) = defs.get(name) {
                keys(defs, t, v, out, depth + 1)
            }
        }
        Ty::Nullable(t) => keys(defs, t, v, out, depth + 1),
        Ty::Both(parts) | Ty::Either(parts) => {
            for p in parts {
                keys(defs, p, v, out, depth + 1)
            }
        }
        Ty::Tagged { tag, variants } => {
            out.push(tag.clone());
            if let Some((_, t)) = variant(variants, tag, v) {
                keys(defs, t, v, out, depth + 1)
            }
        }
        _ => {}
    }
}

fn variant<'a>(
    variants: &'a [(Option<String>, Ty)],
    tag: &str,
    v: &Value,
) -> Option<&'a (Option<String>, Ty)> {
    let value = v.get(tag);
    match value.and_then(Value::as_str) {
        Some(s) => variants.iter().find(|(lit, _)| lit.as_deref() == Some(s)),
        None => variants.iter().find(|(lit, _)| lit.is_none()),
    }
}

/// Judges `v` as `ty` at `path`; `extra` are fields an enclosing type
/// declares (the tag of a union, the other half of an `&`).
pub(super) fn check(
    defs: &Defs,
    ty: &Ty,
    v: &Value,
    path: &str,
    extra: &[String],
    out: &mut Findings,
) {
    match ty {
        Ty::Any => {}
        Ty::Null => {
            if !v.is_null() {
                out.error(path, format!("expected null, got {}", kind(v)));
            }
        }
        Ty::Bool => {
            if !v.is_boolean() {
                out.error(path, format!("expected a boolean, got {}", short(v)));
            }
        }
        Ty::Str => {
            if !v.is_string() {
                out.error(path, format!("expected a string, got {}", short(v)));
            }
        }
        Ty::Num => {
            if !v.is_number() {
                out.error(path, format!("expected a number, got {}", short(v)));
            }
        }
        Ty::Int(lo, hi) => {
            let n = v
                .as_i64()
                .map(i128::from)
                .or_else(|| v.as_u64().map(i128::from));
            match n {
                Some(n) if n < *lo || n > *hi => {
                    out.error(path, format!("{n} is outside {lo}..={hi}"))
                }
                Some(_) => {}
                None => out.error(path, format!("expected an integer, got {}", short(v))),
            }
        }
        Ty::Obj => {
            if !v.is_object() {
                out.error(path, format!("expected an object, got {}", short(v)));
            }
        }
        Ty::Const(c) => {
            if v != c {
                out.error(path, format!("expected {c}, got {}", short(v)));
            }
        }
        Ty::Ref(name) => match defs.get(name) {
            Some(t) => check(defs, t, v, path, extra, out),
            None => out.error(path, format!("no type {name} in the table")),
        },
        Ty::List(item) => match v.as_array() {
            Some(items) => {
                for (i, x) in items.iter().enumerate() {
                    check(defs, item, x, &format!("{path}[{i}]"), &[], out);
                }
            }
            None => out.error(path, format!("expected a list, got {}", short(v))),
        },
        Ty::Map(item) => match v.as_object() {
            Some(map) => {
                for (k, x) in map {
                    check(defs, item, x, &join(path, k), &[], out);
                }
            }
            None => out.error(path, format!("expected an object, got {}", short(v))),
        },
        Ty::Object(fields) => {
            let Some(map) = v.as_object() else {
                out.error(path, format!("expected an object, got {}", short(v)));
                return;
            };
            for f in fields {
                match map.get(&f.name) {
                    Some(x) => check(defs, &f.ty, x, &join(path, &f.name), &[], out),
                    None if f.required => {
                        out.error(&join(path, &f.name), "missing (required)".into())
                    }
                    None => {}
                }
            }
            for k in map.keys() {
                if !fields.iter().any(|f| &f.name == k) && !extra.contains(k) {
                    out.note(&join(path, k), "unknown field".into());
                }
            }
        }
        Ty::Nullable(t) => {
            if !v.is_null() {
                check(defs, t, v, path, extra, out)
            }
        }
        Ty::Both(parts) => {
            for (i, part) in parts.iter().enumerate() {
                let mut more: Vec<String> = extra.to_vec();
                for (j, other) in parts.iter().enumerate() {
                    if i != j {
                        keys(defs, other, v, &mut more, 0);
                    }
                }
                check(defs, part, v, path, &more, out);
            }
        }
        Ty::Tagged { tag, variants } => {
            if !v.is_object() {
                out.error(path, format!("expected an object, got {}", short(v)));
                return;
            }
            let mut more = extra.to_vec();
            more.push(tag.clone());
            match variant(variants, tag, v) {
                Some((_, t)) => check(defs, t, v, path, &more, out),
                None => {
                    let known: Vec<String> = variants
                        .iter()
                        .filter_map(|(l, _)| l.as_ref().map(|l| format!("{l:?}")))
                        .collect();
                    match v.get(tag) {
                        Some(got) => out.error(
                            &join(path, tag),
                            format!("unknown value {} (known: {})", short(got), known.join(", ")),
                        ),
                        None => out.error(&join(path, tag), "missing (required)".into()),
                    }
                }
            }
        }
        Ty::Either(alts) => {
            let consts: Vec<&Value> = alts
                .iter()
                .filter_map(|a| match a {
                    Ty::Const(c) => Some(c),
                    _ => None,
                })
                .collect();
            let mut best: Option<Findings> = None;
            for alt in alts {
                let mut f = Findings::default();
                check(defs, alt, v, path, extra, &mut f);
                if f.errors.is_empty() {
                    out.notes.extend(f.notes);
                    return;
                }
                if best
                    .as_ref()
                    .is_none_or(|b| f.errors.len() < b.errors.len())
                {
                    best = Some(f);
                }
            }
            if consts.len() == alts.len() {
                let known: Vec<String> = consts.iter().map(|c| c.to_string()).collect();
                out.error(
                    path,
                    format!("{} is not one of {}", short(v), known.join(", ")),
                );
            } else if let Some(best) = best {
                out.merge(best);
            }
        }
    }
}
