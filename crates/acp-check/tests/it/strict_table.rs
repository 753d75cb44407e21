//! The strict type table (`src/strict/v1.types`) is written from the official
//! stable schema (1.21.0): this test renders the table from the schema and
//! compares it with the file. `BLESS=1` rewrites the file.
//!
//! The schema is obtained the way `acp-schema`'s tests obtain it (pinned npm
//! tarballs, or `$ACP_SCHEMA_DIR`); their loader is shared, not copied.

use crate::common::official;

use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::Path;

const TABLE: &str = "src/strict/v1.types";

#[test]
fn the_table_is_rendered_from_the_official_schema() {
    let dir = official::resolve().expect("the official schemas");
    let text = std::fs::read_to_string(dir.join("latest/schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let rendered = render(&schema);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TABLE);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == rendered,
        "{TABLE} is stale: run `BLESS=1 cargo test -p acp-check --test strict_table`"
    );
}

#[test]
fn the_table_parses_and_knows_every_method_of_the_schema() {
    let table = acp_check::strict::Table::v1();
    for method in [
        "initialize",
        "session/prompt",
        "session/update",
        "fs/read_text_file",
        "terminal/create",
        "session/cancel",
        "$/cancel_request",
    ] {
        assert!(table.method(method).is_some(), "{method}");
    }
}

/// The table: a header, the methods, then every definition, one a line.
fn render(schema: &Value) -> String {
    let defs = schema["$defs"].as_object().expect("$defs");
    let mut out = String::new();
    out.push_str(
        "# The strict types of ACP v1: the facts of the official stable schema 1.21.0,\n\
         # rendered by tests/it/strict_table.rs (BLESS=1 rewrites this file).\n\
         #\n\
         # `Name = type`. Types: str int i32 i64 u16 u32 u64 num bool null any obj;\n\
         # \"lit\" and -1 are constants; [T] a list; map<T> an object of T;\n\
         # {a!: T, b: T} an object (! = required); T? = T or null; A | B either;\n\
         # A & B both (one object); tag K {\"v\": T, _: T} a union told apart by\n\
         # field K (`_`: the alternative without K).\n\
         #\n\
         # `@method SIDE NAME PARAMS [RESULT]`: SIDE handles NAME.\n\n",
    );
    let mut methods: Vec<(String, String, String, Option<String>)> = Vec::new();
    for (name, def) in defs {
        let (Some(method), Some(side)) = (def.get("x-method"), def.get("x-side")) else {
            continue;
        };
        let method = method.as_str().unwrap().to_string();
        let side = side.as_str().unwrap().to_string();
        if let Some(base) = name.strip_suffix("Request") {
            let response = format!("{base}Response");
            let response = defs.contains_key(&response).then_some(response);
            methods.push((method, side, name.clone(), response));
        } else if name.ends_with("Notification") {
            methods.push((method, side, name.clone(), None));
        }
    }
    methods.sort();
    for (method, side, params, result) in &methods {
        let _ = write!(out, "@method {side} {method} {params}");
        if let Some(result) = result {
            let _ = write!(out, " {result}");
        }
        out.push('\n');
    }
    out.push('\n');
    let mut names: Vec<&String> = defs.keys().collect();
    names.sort();
    for name in names {
        let _ = writeln!(out, "{name} = {}", ty(&defs[name.as_str()]));
    }
    out
}

fn ref_name(s: &Value) -> Option<&str> {
    s.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

fn is_null(s: &Value) -> bool {
    s.get("type").and_then(Value::as_str) == Some("null") && s.as_object().unwrap().len() <= 2
}

/// The alternative of a union told apart by `tag`: `{"tag": const}` plus a
/// reference, or a bare reference (the one without the tag).
fn tagged_alternative(alt: &Value) -> Option<(Option<String>, String)> {
    let obj = alt.as_object()?;
    let target = match obj.get("allOf").and_then(Value::as_array) {
        Some(all) if all.len() == 1 => ty(&all[0]),
        Some(_) => return None,
        None => "{}".to_string(),
    };
    match obj.get("properties").and_then(Value::as_object) {
        None => obj.contains_key("allOf").then_some((None, target)),
        Some(props) if props.len() == 1 => {
            let (key, value) = props.iter().next().unwrap();
            let lit = value.get("const")?.as_str()?;
            Some((Some(format!("{key}\t{lit}")), target))
        }
        _ => None,
    }
}

fn union(alts: &[Value], discriminator: Option<&str>) -> String {
    // `X | null` is `X?`.
    if alts.len() == 2 && is_null(&alts[1]) {
        return nullable(ty(&alts[0]));
    }
    if alts.len() == 2 && is_null(&alts[0]) {
        return nullable(ty(&alts[1]));
    }
    let tagged: Option<Vec<_>> = alts.iter().map(tagged_alternative).collect();
    if let Some(tagged) = tagged {
        let keys: Vec<&str> = tagged
            .iter()
            .filter_map(|(k, _)| k.as_deref())
            .map(|k| k.split('\t').next().unwrap())
            .collect();
        let tag = discriminator.or(keys.first().copied());
        if let Some(tag) = tag
            && !keys.is_empty()
            && keys.iter().all(|k| *k == tag)
        {
            let variants: Vec<String> = tagged
                .iter()
                .map(|(k, t)| match k {
                    Some(k) => format!("{:?}: {t}", k.split('\t').nth(1).unwrap()),
                    None => format!("_: {t}"),
                })
                .collect();
            return format!("tag {tag} {{{}}}", variants.join(", "));
        }
    }
    let parts: Vec<String> = alts.iter().map(|a| group(ty(a))).collect();
    parts.join(" | ")
}

fn group(t: String) -> String {
    if t.contains(" | ") || t.contains(" & ") {
        format!("({t})")
    } else {
        t
    }
}

fn nullable(t: String) -> String {
    format!("{}?", group(t))
}

fn scalar(kind: &str, s: &Value) -> String {
    match kind {
        "string" => "str".into(),
        "boolean" => "bool".into(),
        "null" => "null".into(),
        "number" => "num".into(),
        "integer" => match s.get("format").and_then(Value::as_str) {
            Some("int32") => "i32".into(),
            Some("int64") => "i64".into(),
            Some("uint16") => "u16".into(),
            Some("uint32") => "u32".into(),
            Some("uint64") => "u64".into(),
            None => "int".into(),
            Some(other) => panic!("integer format {other}"),
        },
        "array" => match s.get("items") {
            Some(items) => format!("[{}]", ty(items)),
            None => "[any]".into(),
        },
        "object" => object(s),
        other => panic!("type {other}"),
    }
}

fn object(s: &Value) -> String {
    let props = s.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match props {
        Some(props) => fields(props, &required),
        None => match s.get("additionalProperties") {
            Some(Value::Object(inner)) if !inner.is_empty() => {
                format!("map<{}>", ty(&Value::Object(inner.clone())))
            }
            _ => "obj".into(),
        },
    }
}

fn fields(props: &Map<String, Value>, required: &[&str]) -> String {
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort();
    let parts: Vec<String> = keys
        .iter()
        .map(|k| {
            let bang = if required.contains(&k.as_str()) {
                "!"
            } else {
                ""
            };
            format!("{k}{bang}: {}", ty(&props[k.as_str()]))
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The table's type for a schema.
fn ty(s: &Value) -> String {
    if let Some(name) = ref_name(s) {
        return name.to_string();
    }
    let obj = s.as_object().expect("a schema object");
    if let Some(c) = obj.get("const") {
        return c.to_string();
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        let lits: Vec<String> = values.iter().map(Value::to_string).collect();
        return lits.join(" | ");
    }
    let discriminator = obj
        .get("discriminator")
        .and_then(|d| d.get("propertyName"))
        .and_then(Value::as_str);
    let alternatives = obj
        .get("oneOf")
        .or_else(|| obj.get("anyOf"))
        .and_then(Value::as_array);
    let base = match obj.get("type") {
        Some(Value::String(kind)) => Some(scalar(kind, s)),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            let non_null: Vec<&str> = kinds.iter().copied().filter(|k| *k != "null").collect();
            assert_eq!(non_null.len(), 1, "type list {kinds:?}");
            let t = scalar(non_null[0], s);
            Some(if kinds.contains(&"null") {
                nullable(t)
            } else {
                t
            })
        }
        _ => None,
    };
    let all_of = obj.get("allOf").and_then(Value::as_array);
    let mut parts: Vec<String> = Vec::new();
    // An object whose properties only restate its alternatives' tag adds nothing.
    if let Some(base) = base {
        let only_tag = alternatives.is_some() && (base == "obj" || base == "{}");
        if !only_tag {
            parts.push(base);
        }
    }
    if let Some(all) = all_of {
        parts.extend(all.iter().map(ty));
    }
    if let Some(alts) = alternatives {
        parts.push(group(union(alts, discriminator)));
    }
    // `not` marks an open alternative ("custom or future" values): the table
    // keeps the open shape and does not forbid the known ones.
    match parts.len() {
        0 => "any".into(),
        1 => parts.pop().unwrap(),
        _ => parts.into_iter().map(group).collect::<Vec<_>>().join(" & "),
    }
}
