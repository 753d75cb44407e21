//! Property tests driven by the npm schema: a small JSON-Schema-to-proptest
//! generator produces random values of a definition (following `$ref`, `allOf`,
//! `oneOf`/`anyOf`, `const`, `enum`, the JSON types, required plus a random subset
//! of optional properties, and `_meta` objects with random nested JSON; depth is
//! bounded). Each value is decoded with the Rust counterpart:
//! - a value the schema accepts must decode, its re-encoding must validate
//!   against the schema, and decoding the re-encoding gives the same value;
//! - any value, valid or not, decodes or fails cleanly, never panics, and a value
//!   that decodes is stable under re-encoding.
//!
//! The generator ignores `not` (the catch-all `other` alternatives) and string
//! formats, so some values it makes are invalid; those only get the second check.
//! The request/notification/response envelopes are left out: the schema does not
//! tie `method` to `params`, so random pairs are not meaningful (the corpus covers
//! every method instead).

use crate::common;

use common::*;
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value};

/// Beyond this nesting depth only required properties are generated and lists are empty.
const MAX_DEPTH: u32 = 5;

/// Envelopes whose `method`/`params` coupling the schema does not express.
const SKIPPED: &[&str] = &[
    "AgentRequest",
    "ClientRequest",
    "AgentNotification",
    "ClientNotification",
    "AgentResponse",
    "ClientResponse",
];

fn npm_def(reference: &str) -> &'static Value {
    let name = reference
        .strip_prefix("#/$defs/")
        .unwrap_or_else(|| panic!("unsupported $ref {reference}"));
    def(SchemaFile::Npm, name).unwrap_or_else(|| panic!("no def {name}"))
}

/// `schema` without the given keywords.
fn without(schema: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    schema
        .iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Whether a schema object says anything about the value (beyond docs).
fn constrains(schema: &Map<String, Value>) -> bool {
    schema.keys().any(|k| {
        !matches!(
            k.as_str(),
            "description" | "title" | "default" | "examples" | "discriminator"
        )
    })
}

/// Merges generated objects (later keys win); non-objects: the last one.
fn merge(values: Vec<Value>) -> Value {
    let mut out: Option<Value> = None;
    for v in values {
        out = Some(match (out, v) {
            (Some(Value::Object(mut a)), Value::Object(b)) => {
                for (k, v) in b {
                    a.insert(k, v);
                }
                Value::Object(a)
            }
            (_, v) => v,
        });
    }
    out.unwrap_or(Value::Object(Map::new()))
}

/// Arbitrary JSON, nested at most `depth` levels.
fn any_json(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-zA-Z0-9 _./-]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(depth, 12, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::vec(("[a-z_]{1,6}", inner), 0..3)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
    .boxed()
}

/// A `_meta` object with random nested content.
fn meta() -> BoxedStrategy<Value> {
    proptest::collection::vec(("[a-z]{1,6}\\.dev/[a-z]{1,6}", any_json(3)), 0..3)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect()))
        .boxed()
}

fn integer(schema: &Map<String, Value>) -> BoxedStrategy<Value> {
    let (mut lo, mut hi): (i128, i128) = match schema.get("format").and_then(Value::as_str) {
        Some("uint16") => (0, u16::MAX.into()),
        Some("uint32") => (0, u32::MAX.into()),
        Some("uint64") => (0, u64::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN.into(), i64::MAX.into()),
    };
    if let Some(min) = schema.get("minimum").and_then(Value::as_i64) {
        lo = lo.max(min.into());
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_i64) {
        hi = hi.min(max.into());
    }
    let small = (lo.max(-5), hi.min(100));
    let to_value = |n: i128| -> Value {
        match i64::try_from(n) {
            Ok(n) => Value::from(n),
            Err(_) => Value::from(u64::try_from(n).unwrap_or(u64::MAX)),
        }
    };
    prop_oneof![
        3 => (small.0..=small.1).prop_map(to_value),
        1 => (lo..=hi).prop_map(to_value),
    ]
    .boxed()
}

fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        (-1e6f64..1e6).prop_map(Value::from),
        (-100i32..100).prop_map(|n| Value::from(f64::from(n))),
        Just(Value::from(0.5)),
    ]
    .boxed()
}

fn object(schema: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (key, prop_schema) in props {
            let value = if key == "_meta" {
                prop_oneof![4 => meta(), 1 => Just(Value::Null)].boxed()
            } else {
                strategy(prop_schema, depth + 1)
            };
            let key = key.clone();
            let field = if required.contains(&key.as_str()) {
                value.prop_map(move |v| Some((key.clone(), v))).boxed()
            } else if depth >= MAX_DEPTH {
                Just(None).boxed()
            } else {
                proptest::option::weighted(0.5, value)
                    .prop_map(move |v| v.map(|v| (key.clone(), v)))
                    .boxed()
            };
            fields.push(field);
        }
    }
    if let Some(extra) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        let max = if depth >= MAX_DEPTH { 0 } else { 3 };
        let entries = proptest::collection::vec(
            ("[a-z][a-zA-Z0-9_]{0,7}", strategy(extra, depth + 1)),
            0..=max,
        );
        return (fields, entries)
            .prop_map(|(fields, entries)| {
                let mut map: Map<String, Value> = fields.into_iter().flatten().collect();
                for (k, v) in entries {
                    map.insert(k, v);
                }
                Value::Object(map)
            })
            .boxed();
    }
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
        .boxed()
}

fn typed(schema: &Map<String, Value>, ty: &str, depth: u32) -> BoxedStrategy<Value> {
    match ty {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::from).boxed(),
        "integer" => integer(schema),
        "number" => number(),
        "string" => "[a-zA-Z0-9 _./:-]{0,12}".prop_map(Value::from).boxed(),
        "array" => {
            let items = schema
                .get("items")
                .map(|i| strategy(i, depth + 1))
                .unwrap_or_else(|| any_json(2));
            let max = if depth >= MAX_DEPTH { 0 } else { 3 };
            proptest::collection::vec(items, 0..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => object(schema, depth),
        other => panic!("unsupported type {other}"),
    }
}

/// A strategy for values of `schema` (a subschema of the npm file).
fn strategy(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let Some(obj) = schema.as_object() else {
        return any_json(2);
    };
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        let target = npm_def(reference);
        let rest = without(obj, &["$ref"]);
        if !constrains(&rest) {
            return strategy(target, depth);
        }
        let parts = vec![
            strategy(target, depth),
            strategy(&Value::Object(rest), depth),
        ];
        return parts.prop_map(merge).boxed();
    }
    if let Some(c) = obj.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        return proptest::sample::select(values.clone()).boxed();
    }
    let alts = alternatives(schema);
    if !alts.is_empty() {
        // Each alternative, together with what the schema says beside the union.
        let base = without(obj, &["oneOf", "anyOf", "discriminator", "not"]);
        let options: Vec<BoxedStrategy<Value>> = alts
            .into_iter()
            .map(|alt| {
                if constrains(&base) {
                    vec![
                        strategy(&Value::Object(base.clone()), depth),
                        strategy(alt, depth),
                    ]
                    .prop_map(merge)
                    .boxed()
                } else {
                    strategy(alt, depth)
                }
            })
            .collect();
        return Union::new(options).boxed();
    }
    if let Some(Value::Array(parts)) = obj.get("allOf") {
        let base = without(obj, &["allOf"]);
        let mut strategies: Vec<BoxedStrategy<Value>> = Vec::new();
        if constrains(&base) {
            strategies.push(strategy(&Value::Object(base), depth));
        }
        strategies.extend(parts.iter().map(|p| strategy(p, depth)));
        return strategies.prop_map(merge).boxed();
    }
    match obj.get("type") {
        Some(Value::String(ty)) => typed(obj, ty, depth),
        Some(Value::Array(types)) => {
            let options: Vec<BoxedStrategy<Value>> = types
                .iter()
                .filter_map(Value::as_str)
                .map(|ty| typed(obj, ty, depth))
                .collect();
            Union::new(options).boxed()
        }
        _ if obj.contains_key("properties") => object(obj, depth),
        _ => any_json(2),
    }
}

fn generated_defs() -> Vec<&'static str> {
    defs(SchemaFile::Npm)
        .keys()
        .map(String::as_str)
        .filter(|name| !SKIPPED.contains(name))
        .collect()
}

/// Runs the checks on one generated value; `Ok(true)` if the schema accepts it.
fn check(name: &str, value: &Value) -> Result<bool, String> {
    let validators = Validators::get();
    let validator = validators
        .def(SchemaFile::Npm, name)
        .ok_or_else(|| format!("no validator for {name}"))?;
    let valid = validator.is_valid(value);
    let input = text(value);
    match roundtrip(name, None, &input) {
        None => Err(format!("{name} has no Rust counterpart")),
        Some(Ok(out)) => {
            if valid {
                let output: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
                if !validator.is_valid(&output) {
                    return Err(format!(
                        "{name}: the re-encoding of a valid value is invalid: {:?}\n  input:  {input}\n  output: {out}",
                        validators.errors(SchemaFile::Npm, name, &output)
                    ));
                }
            }
            Ok(valid)
        }
        Some(Err(Failure::Decode(e))) if valid => Err(format!(
            "{name}: a valid value does not decode: {e}\n  input: {input}"
        )),
        Some(Err(Failure::Decode(_))) => Ok(false),
        Some(Err(Failure::Unstable(m))) => Err(format!("{name}: unstable: {m}\n  input: {input}")),
    }
}

/// Every definition, a few values each, from a fixed seed: all of them are
/// exercised on every run, and each must yield at least one schema-valid value
/// (otherwise the generator would not be testing it).
#[test]
fn every_definition_generates_and_round_trips() {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let mut failures = Vec::new();
    let mut never_valid = Vec::new();
    let mut total = 0;
    let mut total_valid = 0;
    for name in generated_defs() {
        let strategy = strategy(def(SchemaFile::Npm, name).expect("listed"), 0);
        let mut valid = 0;
        for _ in 0..8 {
            let value = strategy
                .new_tree(&mut runner)
                .expect("the strategy generates")
                .current();
            total += 1;
            match check(name, &value) {
                Ok(true) => valid += 1,
                Ok(false) => {}
                Err(e) => failures.push(e),
            }
        }
        if valid == 0 {
            never_valid.push(name);
        }
        total_valid += valid;
    }
    eprintln!("{total} generated values, {total_valid} valid against the schema");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        never_valid.is_empty(),
        "the generator never made a valid value for: {never_valid:?}"
    );
    assert!(total > 1000);
}

fn any_def_value() -> impl Strategy<Value = (&'static str, Value)> {
    let options: Vec<BoxedStrategy<(&'static str, Value)>> = generated_defs()
        .into_iter()
        .map(|name| {
            strategy(def(SchemaFile::Npm, name).expect("listed"), 0)
                .prop_map(move |v| (name, v))
                .boxed()
        })
        .collect();
    Union::new(options)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random definitions, random values.
    #[test]
    fn random_values_round_trip((name, value) in any_def_value()) {
        if let Err(e) = check(name, &value) {
            prop_assert!(false, "{}", e);
        }
    }
}
