//! Deriving what the npm packages do not ship: a release's stable schema
//! from its unstable one ([`stable_from_unstable`]), `meta.json` from a
//! schema ([`meta_from_schema`]), and the checksums and canonical JSON form
//! the pins are written in.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256, Sha512};
use std::collections::{BTreeMap, BTreeSet};

use super::Unmarked;

/// The marker the official schemas put in the description of every
/// unstable definition, property and union alternative.
pub const UNSTABLE_MARKER: &str = "**UNSTABLE**";

fn is_marked(schema: &Value) -> bool {
    schema
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| d.contains(UNSTABLE_MARKER))
}

fn ref_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

/// The definition a property schema stands for: its `$ref`, or the `$ref` of
/// its `allOf`.
fn target_def(schema: &Value) -> Option<&str> {
    ref_name(schema).or_else(|| schema.get("allOf")?.as_array()?.iter().find_map(ref_name))
}

/// The stable schema of a release, from its unstable schema: what the
/// release built without its `unstable_*` features. Removed are the
/// definitions marked `**UNSTABLE**` or listed in `unmarked`, every
/// definition of a method one of them belongs to, every property and union
/// alternative that is marked or stands for a removed definition (and a
/// union left without alternatives), the keys of removed properties in
/// `default` values, and then every definition nothing refers to any more.
pub fn stable_from_unstable(unstable: &Value, unmarked: &Unmarked) -> Value {
    let mut root = unstable.clone();
    let Some(Value::Object(mut defs)) = root.as_object_mut().and_then(|r| r.remove("$defs")) else {
        return root;
    };
    let mut removed: BTreeSet<String> = defs
        .iter()
        .filter(|(name, def)| {
            let method = def.get("x-method").and_then(Value::as_str).unwrap_or("");
            is_marked(def)
                || unmarked.defs.contains(&name.as_str())
                || (!method.is_empty()
                    && unmarked
                        .method_prefixes
                        .iter()
                        .any(|p| method.starts_with(p)))
        })
        .map(|(name, _)| name.clone())
        .collect();
    let methods: BTreeSet<String> = removed
        .iter()
        .filter_map(|n| defs[n].get("x-method").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    for (name, def) in &defs {
        if def
            .get("x-method")
            .and_then(Value::as_str)
            .is_some_and(|m| methods.contains(m))
        {
            removed.insert(name.clone());
        }
    }
    defs.retain(|name, _| !removed.contains(name));

    let gone = |schema: &Value| -> bool {
        if is_marked(schema) || ref_name(schema).is_some_and(|r| removed.contains(r)) {
            return true;
        }
        let refs_removed = schema
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| {
                all.iter()
                    .any(|s| ref_name(s).is_some_and(|r| removed.contains(r)))
            });
        let empty_union = ["anyOf", "oneOf"].iter().any(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
        });
        refs_removed || empty_union
    };
    let mut removed_props: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, def) in defs.iter_mut() {
        let props = prune(def, &gone);
        if !props.is_empty() {
            removed_props.insert(name.clone(), props);
        }
    }
    prune(&mut root, &gone);

    let snapshot = defs.clone();
    for def in defs.values_mut() {
        clean_defaults(def, &snapshot, &removed_props);
    }

    // Keep only what the root still reaches.
    let mut reached = BTreeSet::new();
    let mut todo = Vec::new();
    collect_refs(&root, &mut todo);
    while let Some(name) = todo.pop() {
        if let Some(def) = defs.get(&name) {
            if reached.insert(name) {
                collect_refs(def, &mut todo);
            }
        }
    }
    defs.retain(|name, _| reached.contains(name));
    if let Some(r) = root.as_object_mut() {
        r.insert("$defs".into(), Value::Object(defs));
    }
    root
}

/// Removes what `gone` says from `schema` and below it (children first, so
/// a union emptied below counts as gone above); returns the names of the
/// properties removed from `schema`'s own `properties`.
fn prune(schema: &mut Value, gone: &dyn Fn(&Value) -> bool) -> BTreeSet<String> {
    let mut removed = BTreeSet::new();
    match schema {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key != "$defs" && key != "default" {
                    prune(child, gone);
                }
            }
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                props.retain(|name, prop| {
                    let keep = !gone(prop);
                    if !keep {
                        removed.insert(name.clone());
                    }
                    keep
                });
            }
            if let Some(Value::Array(required)) = map.get_mut("required") {
                required.retain(|r| r.as_str().is_none_or(|r| !removed.contains(r)));
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alternatives)) = map.get_mut(key) {
                    alternatives.retain(|alt| !gone(alt));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                prune(item, gone);
            }
        }
        _ => {}
    }
    removed
}

/// Drops, from every `default` under `schema`, the keys of properties that
/// were removed from the definition the default is for.
fn clean_defaults(
    schema: &mut Value,
    defs: &Map<String, Value>,
    removed: &BTreeMap<String, BTreeSet<String>>,
) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("default") {
                let shape = Value::Object(map.clone());
                if let Some(default) = map.get_mut("default") {
                    clean_default(default, &shape, defs, removed);
                }
            }
            for (key, child) in map.iter_mut() {
                if key != "default" {
                    clean_defaults(child, defs, removed);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                clean_defaults(item, defs, removed);
            }
        }
        _ => {}
    }
}

fn clean_default(
    value: &mut Value,
    schema: &Value,
    defs: &Map<String, Value>,
    removed: &BTreeMap<String, BTreeSet<String>>,
) {
    let (Value::Object(object), Some(def)) = (value, target_def(schema)) else {
        return;
    };
    let Some(def_schema) = defs.get(def) else {
        return;
    };
    if let Some(gone) = removed.get(def) {
        object.retain(|k, _| !gone.contains(k));
    }
    for (key, inner) in object.iter_mut() {
        if let Some(prop) = def_schema.get("properties").and_then(|p| p.get(key)) {
            clean_default(inner, prop, defs, removed);
        }
    }
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "$defs" {
                    continue;
                }
                match child.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                    Some(name) if key == "$ref" => out.push(name.to_owned()),
                    _ => collect_refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

/// A `meta.json` from a schema's `x-method`/`x-side`: the methods handled by
/// each side under Rust-style keys (`session/set_mode` is `session_set_mode`,
/// `document/didOpen` is `document_did_open`, `$/cancel_request` is
/// `cancel_request`; a method of both sides is listed for each), and the
/// protocol version.
pub fn meta_from_schema(schema: &Value, version: u64) -> Value {
    let mut groups: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    for def in schema["$defs"]
        .as_object()
        .into_iter()
        .flat_map(Map::values)
    {
        let Some(method) = def.get("x-method").and_then(Value::as_str) else {
            continue;
        };
        let sides: &[&str] = match def.get("x-side").and_then(Value::as_str) {
            Some("agent") => &["agentMethods"],
            Some("client") => &["clientMethods"],
            Some("protocol") => &["protocolMethods"],
            Some("both") => &["agentMethods", "clientMethods"],
            _ => &[],
        };
        for side in sides {
            groups
                .entry(side)
                .or_default()
                .insert(method_key(method), method.to_owned());
        }
    }
    let mut meta = Map::new();
    for (group, methods) in groups {
        let methods = methods.into_iter().map(|(k, v)| (k, Value::String(v)));
        meta.insert(group.to_owned(), Value::Object(methods.collect()));
    }
    meta.insert("version".into(), Value::from(version));
    Value::Object(meta)
}

fn method_key(method: &str) -> String {
    let mut key = String::new();
    let mut previous = None::<char>;
    for c in method.strip_prefix("$/").unwrap_or(method).chars() {
        match c {
            '/' => key.push('_'),
            c if c.is_ascii_uppercase() => {
                if previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
                    key.push('_');
                }
                key.push(c.to_ascii_lowercase());
            }
            c => key.push(c),
        }
        previous = Some(c);
    }
    key
}

/// The `N` of `export const PROTOCOL_VERSION = N;` in a script.
pub fn protocol_version(script: &str) -> Option<u64> {
    script.lines().find_map(|line| {
        let rest = line
            .trim()
            .strip_prefix("export const PROTOCOL_VERSION = ")?;
        rest.strip_suffix(';')?.trim().parse().ok()
    })
}

// ---------------------------------------------------------------------------
// Checksums and the canonical form

/// A JSON value with object keys sorted and no whitespace (serde_json's
/// escaping), which is what the canonical pins are the sha256 of.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The sha256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `bytes`' integrity as npm writes it: `sha512-` and the base64 digest.
pub fn sri_sha512(bytes: &[u8]) -> String {
    format!("sha512-{}", base64(&Sha512::digest(bytes)))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
