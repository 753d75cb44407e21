//! The example corpus (`tests/corpus/*.json`) against the Rust types and the
//! official schemas.
//!
//! Every example names a schema definition (`def`). For each one the test decodes
//! the JSON into the Rust counterpart (see the registry in `common/mod.rs`),
//! re-encodes it and requires the output to equal the input byte for byte after
//! both are serialised compactly (same keys, same order, same numbers). An example
//! whose input the types normalise carries the expected output in `expect` (a
//! documented default filled in, `null` dropped, an invalid list item skipped).
//!
//! Both the input and the output are validated against the definition in every
//! schema file that has it: seed (v0.10.7, with its three older type names),
//! latest (1.21.0) and npm-sdk-2.4.0. Markers:
//! - `since: "latest" | "npm"`: the example uses something newer than the older
//!   files (a new union variant, enum value or required shape). The older files are
//!   skipped for it, and the test asserts that they indeed reject the input (or the
//!   output), so the marker is never stale. A new *optional field* alone does not
//!   need the marker: the schemas allow unknown properties, so old files accept it.
//! - `lenient: true`: the input breaks the schema in a way the types tolerate
//!   (`x-deserialize-default-on-error`, `x-deserialize-skip-invalid-items`,
//!   `x-deserialize-default-on-null`, non-object `_meta`); the input must be rejected
//!   by the newest schema and the output must be valid.
//! - `lenient: "verbatim"`: an unknown union tag or enum value that the types keep
//!   unchanged (`Other`); input and output are equal and outside the schema.
//!
//! Coverage: every stable definition (latest and npm) has an example with a Rust
//! counterpart; every alternative of every `oneOf`/`anyOf` (top level, and
//! property-level unions with two or more non-null alternatives) is matched by an
//! example of that definition; every `const`/`enum` value occurs in an example;
//! every property occurs (non-null) in an example; `_meta` occurs with nested
//! content on every definition that has it. Finally, for plain object definitions,
//! each nullable optional property present in an example is replaced by `null`,
//! which must decode and re-encode as if the property were absent (except where
//! the schema gives `null` its own meaning: `SessionInfoUpdate.title`/`updatedAt`,
//! the patch fields of `CompactionUpdate`, and `Diff.oldText`, written as `null`
//! for a new file).

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Collects failures and fails once, listing them all.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn push(&mut self, msg: impl Into<String>) {
        self.0.push(msg.into());
    }

    fn finish(self, what: &str) {
        if !self.0.is_empty() {
            panic!("{} {what}:\n  - {}", self.0.len(), self.0.join("\n  - "));
        }
    }
}

#[test]
fn corpus_is_well_formed() {
    let mut failures = Failures::default();
    let mut seen = BTreeSet::new();
    for ex in corpus() {
        if !seen.insert((ex.def.clone(), ex.name.clone())) {
            failures.push(format!("{}: duplicate name", ex.id()));
        }
        if def(SchemaFile::Npm, &ex.def).is_none() && def(SchemaFile::Latest, &ex.def).is_none() {
            failures.push(format!("{}: no such definition in latest or npm", ex.id()));
        }
        if ex.ordered_expect.as_ref().map(ordered_text) == Some(ex.input_text()) {
            failures.push(format!("{}: `expect` equals `value`; drop it", ex.id()));
        }
        if ex.lenient == Lenient::Verbatim && ex.expect.is_some() {
            failures.push(format!("{}: a verbatim example has no `expect`", ex.id()));
        }
        let is_response = ex.def == "AgentResponse" || ex.def == "ClientResponse";
        if is_response != ex.method.is_some() {
            failures.push(format!(
                "{}: `method` is for response envelopes only, and they need it",
                ex.id()
            ));
        }
    }
    assert!(corpus().len() > 300, "the corpus looks truncated");
    failures.finish("malformed corpus entries");
}

#[test]
fn examples_round_trip_exactly_and_validate() {
    let validators = Validators::get();
    let mut failures = Failures::default();
    for ex in corpus() {
        let input = ex.input_text();
        let Some(result) = roundtrip(&ex.def, ex.method.as_deref(), &input) else {
            failures.push(format!("{}: no Rust counterpart for {}", ex.id(), ex.def));
            continue;
        };
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                failures.push(format!(
                    "{}: decode failed: {e}\n      input: {input}",
                    ex.id()
                ));
                continue;
            }
        };
        let expected = ex.expected_text();
        if out != expected {
            failures.push(format!(
                "{}: output differs\n      input:    {input}\n      expected: {expected}\n      output:   {out}",
                ex.id()
            ));
        }
        let output: Value = serde_json::from_str(&out).expect("the output is JSON");

        for file in SchemaFile::ALL {
            let Some(v) = validators.def(file, &ex.def) else {
                continue;
            };
            let (input_ok, output_ok) = (v.is_valid(&ex.value), v.is_valid(&output));
            let label = file.label();
            if !ex.applies_to(file) {
                // The marker must be needed: this older file rejects the example.
                let rejected = match ex.lenient {
                    Lenient::No => !input_ok || !output_ok,
                    Lenient::Fallback => !output_ok,
                    Lenient::Verbatim => true,
                };
                if !rejected {
                    failures.push(format!(
                        "{}: marked since {:?} but {label} accepts it; drop the marker",
                        ex.id(),
                        ex.since.map(SchemaFile::label)
                    ));
                }
                continue;
            }
            match ex.lenient {
                Lenient::No if !input_ok => failures.push(format!(
                    "{}: input invalid against {label}: {:?}",
                    ex.id(),
                    validators.errors(file, &ex.def, &ex.value)
                )),
                Lenient::Fallback | Lenient::Verbatim if file == SchemaFile::Npm && input_ok => {
                    failures.push(format!(
                        "{}: marked lenient but the input is valid against {label}",
                        ex.id()
                    ))
                }
                _ => {}
            }
            if ex.lenient != Lenient::Verbatim && !output_ok {
                failures.push(format!(
                    "{}: output invalid against {label}: {:?}\n      output: {out}",
                    ex.id(),
                    validators.errors(file, &ex.def, &output)
                ));
            }
        }
    }
    failures.finish("corpus examples failed");
}

fn examples_of(def_name: &str) -> impl Iterator<Item = &'static Example> + '_ {
    corpus().iter().filter(move |ex| ex.def == def_name)
}

#[test]
fn every_stable_def_has_an_example_with_a_rust_counterpart() {
    let mut missing = Vec::new();
    for name in stable_def_names() {
        if !has_counterpart(&name) {
            missing.push(format!("{name} (no Rust counterpart in the registry)"));
        } else if examples_of(&name).next().is_none() {
            missing.push(format!("{name} (no example)"));
        }
    }
    assert!(
        missing.is_empty(),
        "definitions not covered:\n  {}",
        missing.join("\n  ")
    );
}

/// A union of a definition: its label, its alternatives (JSON pointer within the
/// schema file, subschema) and how to pick the value an example offers to it.
struct Union {
    label: String,
    alternatives: Vec<(String, &'static Value)>,
    property: Option<String>,
}

fn unions_of(name: &str, schema: &'static Value) -> Vec<Union> {
    let base = format!("/$defs/{name}");
    let mut out = Vec::new();
    let top = alternatives_at(schema, &base);
    if !top.is_empty() {
        out.push(Union {
            label: name.to_string(),
            alternatives: top.clone(),
            property: None,
        });
    }
    // Property-level unions, on the definition itself or inside one of its alternatives.
    let mut prop_maps = vec![(base.clone(), schema)];
    prop_maps.extend(top.iter().map(|(p, a)| (p.clone(), *a)));
    let mut seen = BTreeSet::new();
    for (at, s) in prop_maps {
        let Some(props) = s.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (prop, ps) in props {
            let alts: Vec<(String, &Value)> =
                alternatives_at(ps, &format!("{at}/properties/{prop}"))
                    .into_iter()
                    .filter(|(_, a)| !is_null_schema(a))
                    .collect();
            if alts.len() >= 2 && seen.insert(prop.clone()) {
                out.push(Union {
                    label: format!("{name}.{prop}"),
                    alternatives: alts,
                    property: Some(prop.clone()),
                });
            }
        }
    }
    out
}

#[test]
fn every_union_alternative_is_covered() {
    let validators = Validators::get();
    let mut failures = Failures::default();
    let mut total = 0;
    for file in [SchemaFile::Latest, SchemaFile::Npm] {
        for (name, schema) in defs(file) {
            let inputs: Vec<&Value> = examples_of(name)
                .filter(|ex| ex.lenient == Lenient::No && ex.applies_to(file))
                .map(|ex| &ex.value)
                .collect();
            for union in unions_of(name, schema) {
                let offered: Vec<&Value> = match &union.property {
                    None => inputs.clone(),
                    Some(p) => inputs.iter().filter_map(|v| v.get(p)).collect(),
                };
                for (pointer, alt) in &union.alternatives {
                    total += 1;
                    let validator = validators
                        .pointer(file, pointer)
                        .unwrap_or_else(|| panic!("no validator at {pointer}"));
                    if !offered.iter().any(|v| validator.is_valid(v)) {
                        failures.push(format!(
                            "{} {}: alternative `{}` ({pointer})",
                            file.label(),
                            union.label,
                            alt_label(alt)
                        ));
                    }
                }
            }
        }
    }
    assert!(total > 150, "suspiciously few alternatives ({total})");
    eprintln!("{total} union alternatives checked (latest + npm)");
    failures.finish("union alternatives without an example");
}

/// Every `const` and `enum` value written inline in a schema (not behind `$ref`).
fn inline_consts(schema: &Value, out: &mut Vec<Value>) {
    match schema {
        Value::Object(map) => {
            if let Some(c) = map.get("const") {
                out.push(c.clone());
            }
            if let Some(Value::Array(values)) = map.get("enum") {
                out.extend(values.iter().cloned());
            }
            for (k, v) in map {
                match k.as_str() {
                    "properties" | "$defs" => {
                        for sub in v.as_object().into_iter().flat_map(|m| m.values()) {
                            inline_consts(sub, out);
                        }
                    }
                    "const" | "enum" | "default" | "examples" => {}
                    _ => inline_consts(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| inline_consts(i, out)),
        _ => {}
    }
}

fn contains_value(haystack: &Value, needle: &Value) -> bool {
    if haystack == needle {
        return true;
    }
    match haystack {
        Value::Object(m) => m.values().any(|v| contains_value(v, needle)),
        Value::Array(a) => a.iter().any(|v| contains_value(v, needle)),
        _ => false,
    }
}

#[test]
fn every_enum_value_is_covered() {
    let mut failures = Failures::default();
    for file in [SchemaFile::Latest, SchemaFile::Npm] {
        for (name, schema) in defs(file) {
            let mut consts = Vec::new();
            inline_consts(schema, &mut consts);
            for c in consts {
                if !examples_of(name).any(|ex| contains_value(&ex.value, &c)) {
                    failures.push(format!("{} {name}: value {c}", file.label()));
                }
            }
        }
    }
    failures.finish("enum/const values without an example");
}

/// The properties a definition may have: its own, its alternatives' and those of
/// the definitions its alternatives pull in with `allOf: [{$ref}]`.
fn all_properties(schema: &Value) -> BTreeMap<String, Value> {
    all_properties_in(SchemaFile::Npm, schema)
}

/// [`all_properties`] for a definition of `file`.
fn all_properties_in(file: SchemaFile, schema: &Value) -> BTreeMap<String, Value> {
    let defs = defs(file);
    let mut out = BTreeMap::new();
    let mut add = |s: &Value| {
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    };
    add(schema);
    for alt in alternatives(schema) {
        add(alt);
        for sub in alt
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(target) = sub.get("$ref").and_then(Value::as_str) {
                if let Some(d) = target.strip_prefix("#/$defs/").and_then(|n| defs.get(n)) {
                    add(d);
                }
            }
        }
    }
    out
}

#[test]
fn every_property_and_meta_is_exercised() {
    let mut failures = Failures::default();
    for (name, schema) in defs(SchemaFile::Npm) {
        for prop in all_properties(schema).keys() {
            let present =
                examples_of(name).any(|ex| ex.value.get(prop).is_some_and(|v| !v.is_null()));
            if !present {
                failures.push(format!("{name}.{prop} never appears"));
            }
            if prop == "_meta" {
                let nested = examples_of(name).any(|ex| {
                    ex.value
                        .get("_meta")
                        .and_then(Value::as_object)
                        .is_some_and(|m| m.values().any(|v| v.is_object() || v.is_array()))
                });
                if !nested {
                    failures.push(format!("{name}._meta never appears with nested content"));
                }
            }
        }
    }
    failures.finish("properties not exercised");
}

/// Properties where `null` has its own meaning and must survive the round trip.
const NULL_IS_MEANINGFUL: &[(&str, &str)] = &[
    // "Set to null to clear."
    ("SessionInfoUpdate", "title"),
    ("SessionInfoUpdate", "updatedAt"),
    // Patch semantics: omission leaves the value unchanged, null clears it.
    ("CompactionUpdate", "summary"),
    ("CompactionUpdate", "error"),
    ("CompactionUpdate", "_meta"),
    // "None for new files": written as null, since some clients show a diff
    // only when the key is there.
    ("Diff", "oldText"),
];

fn allows_null(prop_schema: &Value) -> bool {
    let typed = match prop_schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(t) => t == "null",
        None => false,
    };
    typed || alternatives(prop_schema).into_iter().any(is_null_schema)
}

#[test]
fn explicit_null_equals_omitted() {
    let mut failures = Failures::default();
    let mut checked = 0;
    for (name, schema) in defs(SchemaFile::Npm) {
        // Envelopes always write `params`; unions are covered by the corpus itself.
        let envelope = [
            "AgentRequest",
            "ClientRequest",
            "AgentNotification",
            "ClientNotification",
        ];
        if !alternatives(schema).is_empty() || envelope.contains(&name.as_str()) {
            continue;
        }
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for ex in examples_of(name).filter(|ex| ex.lenient == Lenient::No && ex.expect.is_none()) {
            let Json::Object(obj) = &ex.ordered else {
                continue;
            };
            for (key, _) in obj {
                let Some(ps) = props.get(key) else { continue };
                if required.contains(key.as_str()) || !allows_null(ps) {
                    continue;
                }
                let with_null = |members: &[(String, Json)]| -> Vec<(String, Json)> {
                    members
                        .iter()
                        .map(|(k, v)| (k.clone(), if k == key { Json::Null } else { v.clone() }))
                        .collect()
                };
                let input = with_null(obj);
                let expected = if NULL_IS_MEANINGFUL.contains(&(name.as_str(), key.as_str())) {
                    with_null(obj)
                } else {
                    obj.iter().filter(|(k, _)| k != key).cloned().collect()
                };
                let input = ordered_text(&Json::Object(input));
                let expected = ordered_text(&Json::Object(expected));
                checked += 1;
                match roundtrip(name, ex.method.as_deref(), &input) {
                    Some(Ok(out)) if out == expected => {}
                    Some(Ok(out)) => failures.push(format!(
                        "{}: `{key}: null`\n      input:    {input}\n      expected: {expected}\n      output:   {out}",
                        ex.id()
                    )),
                    Some(Err(e)) => failures.push(format!("{}: `{key}: null` fails to decode: {e}", ex.id())),
                    None => {}
                }
            }
        }
    }
    assert!(checked > 50, "suspiciously few null checks ({checked})");
    failures.finish("nullable properties mishandled");
}

#[test]
fn envelopes_name_the_params_path() {
    use acp_schema::{ClientRequest, RequestMessage, decode};
    let err = decode::<RequestMessage<ClientRequest>>(
        r#"{"id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":7}]}}"#,
    )
    .unwrap_err();
    assert_eq!(err.path, "params.prompt[1].type", "{err}");
    let err = decode::<RequestMessage<ClientRequest>>(r#"{"id":1,"method":"nope","params":{}}"#)
        .unwrap_err();
    assert_eq!(err.path, "method", "{err}");
    assert!(err.message.contains("unknown method `nope`"), "{err}");
    let err = decode::<RequestMessage<ClientRequest>>(r#"{"method":"logout"}"#).unwrap_err();
    assert!(err.to_string().contains("id"), "{err}");
    let err = acp_schema::ResponseMessage::<acp_schema::AgentResponse>::decode(
        "session/prompt",
        r#"{"id":1,"result":{"stopReason":5}}"#,
    )
    .unwrap_err();
    assert_eq!(err.path, "result.stopReason", "{err}");
    let ok = json!({"id": 1, "result": {"stopReason": "end_turn"}});
    let resp = acp_schema::ResponseMessage::<acp_schema::AgentResponse>::decode(
        "session/prompt",
        &ok.to_string(),
    )
    .unwrap();
    assert_eq!(serde_json::to_value(&resp).unwrap(), ok);
}

#[test]
fn validators_are_wired_to_the_right_definitions() {
    let v = Validators::get();
    for file in SchemaFile::ALL {
        assert_eq!(
            v.is_valid(file, "ContentBlock", &json!({"type": "text", "text": "x"})),
            Some(true)
        );
        assert_eq!(
            v.is_valid(file, "ContentBlock", &json!({"type": "text"})),
            Some(false)
        );
        assert_eq!(
            v.is_valid(file, "PromptRequest", &json!({"sessionId": "s"})),
            Some(false)
        );
        assert_eq!(
            v.is_valid(file, "FileSystemCapabilities", &json!({"readTextFile": 1})),
            Some(false)
        );
    }
    assert_eq!(
        v.is_valid(SchemaFile::Seed, "UsageUpdate", &json!({})),
        None
    );
    assert_eq!(
        v.is_valid(
            SchemaFile::Latest,
            "SessionUpdate",
            &json!({"sessionUpdate": "notice", "severity": "info", "title": "t"})
        ),
        Some(false)
    );
    assert_eq!(
        v.is_valid(
            SchemaFile::Npm,
            "SessionUpdate",
            &json!({"sessionUpdate": "notice", "severity": "info", "title": "t"})
        ),
        Some(true)
    );
}

// ---------------------------------------------------------------------------
// The unstable surface (tests/corpus/unstable/), checked against the unstable
// schema each example names. With the example's feature on, the round trip is
// exact and both sides validate like the stable corpus; with it off, the
// members the types do not know are kept, so the output is the same JSON
// (member order aside), and only a method this build does not know fails, as
// an unknown method.

#[test]
fn unstable_examples_round_trip_with_their_feature_on_or_off() {
    let validators = Validators::get();
    let mut failures = Failures::default();
    let mut typed = 0;
    for ex in unstable_corpus() {
        let feature = ex
            .feature
            .as_deref()
            .expect("unstable examples name a feature");
        let file = ex.schema.expect("unstable examples name a schema");
        let input = ex.input_text();
        let Some(v) = validators.def(file, &ex.def) else {
            failures.push(format!(
                "{}: {} has no def {}",
                ex.id(),
                file.label(),
                ex.def
            ));
            continue;
        };
        let input_ok = v.is_valid(&ex.value);
        match ex.lenient {
            Lenient::No if !input_ok => failures.push(format!(
                "{}: input invalid against {}: {:?}",
                ex.id(),
                file.label(),
                validators.errors(file, &ex.def, &ex.value)
            )),
            Lenient::Fallback | Lenient::Verbatim if input_ok => failures.push(format!(
                "{}: marked lenient but the input is valid against {}",
                ex.id(),
                file.label()
            )),
            _ => {}
        }
        let result = roundtrip(&ex.def, ex.method.as_deref(), &input);
        if feature_enabled(feature) {
            typed += 1;
            let out = match result {
                Some(Ok(out)) => out,
                Some(Err(e)) => {
                    failures.push(format!(
                        "{}: decode failed: {e}\n      input: {input}",
                        ex.id()
                    ));
                    continue;
                }
                None => {
                    failures.push(format!("{}: no Rust counterpart for {}", ex.id(), ex.def));
                    continue;
                }
            };
            if out != ex.expected_text() {
                failures.push(format!(
                    "{}: output differs\n      input:    {input}\n      expected: {}\n      output:   {out}",
                    ex.id(),
                    ex.expected_text()
                ));
            }
            let output: Value = serde_json::from_str(&out).expect("the output is JSON");
            if ex.lenient != Lenient::Verbatim && !v.is_valid(&output) {
                failures.push(format!(
                    "{}: output invalid against {}: {:?}\n      output: {out}",
                    ex.id(),
                    file.label(),
                    validators.errors(file, &ex.def, &output)
                ));
            }
        } else {
            match result {
                // An unstable-only type: not in this build.
                None => {}
                Some(Ok(out)) => {
                    let output: Value = serde_json::from_str(&out).expect("the output is JSON");
                    if output != ex.value {
                        failures.push(format!(
                            "{}: without `{feature}` the JSON changed\n      input:  {input}\n      output: {out}",
                            ex.id()
                        ));
                    }
                }
                Some(Err(Failure::Decode(e))) if e.message.contains("unknown method") => {}
                Some(Err(e)) => failures.push(format!(
                    "{}: without `{feature}`: {e}\n      input: {input}",
                    ex.id()
                )),
            }
        }
    }
    eprintln!(
        "{typed} of {} unstable examples typed in this build",
        unstable_corpus().len()
    );
    failures.finish("unstable corpus examples failed");
}

#[test]
fn unstable_corpus_is_well_formed() {
    let mut failures = Failures::default();
    let mut seen = BTreeSet::new();
    for ex in unstable_corpus() {
        if !seen.insert((ex.def.clone(), ex.name.clone())) {
            failures.push(format!("{}: duplicate name", ex.id()));
        }
        if ex.ordered_expect.as_ref().map(ordered_text) == Some(ex.input_text()) {
            failures.push(format!("{}: `expect` equals `value`; drop it", ex.id()));
        }
        let is_response = ex.def == "AgentResponse" || ex.def == "ClientResponse";
        if is_response != ex.method.is_some() {
            failures.push(format!(
                "{}: `method` is for response envelopes only, and they need it",
                ex.id()
            ));
        }
        // An unstable-only def belongs to one feature, the (first) one named.
        if let Some((_, feature)) = UNSTABLE_DEFS.iter().find(|(d, _)| *d == ex.def) {
            if Some(*feature) != ex.feature.as_deref().and_then(|f| f.split('+').next()) {
                failures.push(format!("{}: {} is typed by `{feature}`", ex.id(), ex.def));
            }
        }
    }
    failures.finish("malformed unstable corpus entries");
}

/// The unstable schema that defines an unstable-only type: the newest, but
/// session models exist only in v0.10's.
fn unstable_home(def_name: &str) -> SchemaFile {
    let feature = UNSTABLE_DEFS
        .iter()
        .find(|(d, _)| *d == def_name)
        .map(|(_, f)| *f);
    if feature == Some("unstable-session-model") {
        SchemaFile::SeedUnstable
    } else {
        SchemaFile::NpmUnstable
    }
}

fn unstable_examples_of(def_name: &str) -> impl Iterator<Item = &'static Example> + '_ {
    unstable_corpus()
        .iter()
        .filter(move |ex| ex.def == def_name)
}

#[test]
fn every_unstable_def_is_typed_or_listed_as_not() {
    let mut failures = Failures::default();
    // Every unstable-only type of the newest schema (and v0.10's session
    // models) is typed behind a feature or listed as not typed.
    let stable: BTreeSet<&String> = defs(SchemaFile::Npm).keys().collect();
    let untyped: BTreeSet<&str> = UNTYPED_UNSTABLE_DEFS
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .collect();
    for name in defs(SchemaFile::NpmUnstable).keys() {
        if stable.contains(name) {
            continue;
        }
        let typed = UNSTABLE_DEFS.iter().any(|(d, _)| d == name);
        if typed == untyped.contains(name.as_str()) {
            failures.push(format!(
                "{name}: {}",
                if typed {
                    "both typed and listed as untyped"
                } else {
                    "neither typed nor listed as untyped"
                }
            ));
        }
    }
    for (name, _) in UNSTABLE_DEFS {
        let home = unstable_home(name);
        if def(home, name).is_none() {
            failures.push(format!("{name}: not a def of {}", home.label()));
        }
        if unstable_examples_of(name).next().is_none() {
            failures.push(format!("{name}: no example"));
        }
        if unstable_examples_of(name).any(|ex| ex.schema != Some(home)) {
            failures.push(format!(
                "{name}: examples are checked against {}",
                home.label()
            ));
        }
    }
    failures.finish("unstable definitions not covered");
}

/// With every feature on, the unstable types are covered like the stable ones:
/// every union alternative, enum value and property of each appears in an
/// example, and `_meta` with nested content.
#[cfg(feature = "unstable")]
#[test]
fn every_unstable_alternative_value_and_property_is_covered() {
    let validators = Validators::get();
    let mut failures = Failures::default();
    let mut alternatives_checked = 0;
    for (name, _) in UNSTABLE_DEFS {
        let file = unstable_home(name);
        let schema =
            def(file, name).expect("checked by every_unstable_def_is_typed_or_listed_as_not");
        let inputs: Vec<&Value> = unstable_examples_of(name)
            .filter(|ex| ex.lenient == Lenient::No)
            .map(|ex| &ex.value)
            .collect();
        for union in unions_of(name, schema) {
            let offered: Vec<&Value> = match &union.property {
                None => inputs.clone(),
                Some(p) => inputs.iter().filter_map(|v| v.get(p)).collect(),
            };
            for (pointer, alt) in &union.alternatives {
                alternatives_checked += 1;
                let validator = validators
                    .pointer(file, pointer)
                    .unwrap_or_else(|| panic!("no validator at {pointer}"));
                if !offered.iter().any(|v| validator.is_valid(v)) {
                    failures.push(format!(
                        "{} {}: alternative `{}` ({pointer})",
                        file.label(),
                        union.label,
                        alt_label(alt)
                    ));
                }
            }
        }
        let mut consts = Vec::new();
        inline_consts(schema, &mut consts);
        for c in consts {
            if !unstable_examples_of(name).any(|ex| contains_value(&ex.value, &c)) {
                failures.push(format!("{} {name}: value {c}", file.label()));
            }
        }
        for prop in all_properties_in(file, schema).keys() {
            let present = unstable_examples_of(name)
                .any(|ex| ex.value.get(prop).is_some_and(|v| !v.is_null()));
            if !present {
                failures.push(format!("{name}.{prop} never appears"));
            }
            if prop == "_meta" {
                let nested = unstable_examples_of(name).any(|ex| {
                    ex.value
                        .get("_meta")
                        .and_then(Value::as_object)
                        .is_some_and(|m| m.values().any(|v| v.is_object() || v.is_array()))
                });
                if !nested {
                    failures.push(format!("{name}._meta never appears with nested content"));
                }
            }
        }
    }
    assert!(
        alternatives_checked > 10,
        "suspiciously few alternatives ({alternatives_checked})"
    );
    failures.finish("unstable coverage gaps");
}
