//! Shared test support: locating and loading the official schemas, compiling
//! validators for their `$defs`, reading the example corpus, and the registry
//! that maps each schema definition name to its Rust counterpart.
#![allow(dead_code)]

use acp_schema::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, DecodeError, MethodEnum, NotificationMessage, RequestMessage, ResponseMessage,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub mod official;

// ---------------------------------------------------------------------------
// Schema files

/// One of the official schema files the types are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchemaFile {
    /// `seed/schema.json` (v0.10.7).
    Seed,
    /// `latest/schema.json` (1.21.0).
    Latest,
    /// `latest/npm-sdk-2.4.0/schema.json` (newest).
    Npm,
    /// `seed/schema.unstable.json`: v0.10.7 with its unstable surface.
    SeedUnstable,
    /// `latest/schema.unstable.json`: 1.21.0 with its unstable surface.
    LatestUnstable,
    /// `latest/npm-sdk-2.4.0/schema.unstable.json`: the newest, unstable included.
    NpmUnstable,
}

impl SchemaFile {
    /// The stable files, oldest first.
    pub const ALL: [SchemaFile; 3] = [SchemaFile::Seed, SchemaFile::Latest, SchemaFile::Npm];

    /// The unstable files, oldest first.
    pub const UNSTABLE: [SchemaFile; 3] = [
        SchemaFile::SeedUnstable,
        SchemaFile::LatestUnstable,
        SchemaFile::NpmUnstable,
    ];

    /// The corpus spelling (`"since": "latest"`).
    pub fn label(self) -> &'static str {
        match self {
            SchemaFile::Seed => "seed",
            SchemaFile::Latest => "latest",
            SchemaFile::Npm => "npm",
            SchemaFile::SeedUnstable => "seed-unstable",
            SchemaFile::LatestUnstable => "latest-unstable",
            SchemaFile::NpmUnstable => "npm-unstable",
        }
    }

    /// The unstable file of the same release (`"schema": "npm"` in the unstable corpus).
    pub fn unstable_from_label(s: &str) -> Option<SchemaFile> {
        match s {
            "seed" => Some(SchemaFile::SeedUnstable),
            "latest" => Some(SchemaFile::LatestUnstable),
            "npm" => Some(SchemaFile::NpmUnstable),
            _ => None,
        }
    }

    /// Parses a corpus `since` value.
    pub fn from_label(s: &str) -> Option<SchemaFile> {
        SchemaFile::ALL.into_iter().find(|f| f.label() == s)
    }

    fn relative_path(self) -> &'static str {
        match self {
            SchemaFile::Seed => "seed/schema.json",
            SchemaFile::Latest => "latest/schema.json",
            SchemaFile::Npm => "latest/npm-sdk-2.4.0/schema.json",
            SchemaFile::SeedUnstable => "seed/schema.unstable.json",
            SchemaFile::LatestUnstable => "latest/schema.unstable.json",
            SchemaFile::NpmUnstable => "latest/npm-sdk-2.4.0/schema.unstable.json",
        }
    }

    /// The name this file gives to the definition the newer files call `name`
    /// (the seed used older Rust-style names for three types).
    pub fn def_name(self, name: &str) -> &str {
        if self != SchemaFile::Seed && self != SchemaFile::SeedUnstable {
            return name;
        }
        match name {
            "FileSystemCapabilities" => "FileSystemCapability",
            "KillTerminalRequest" => "KillTerminalCommandRequest",
            "KillTerminalResponse" => "KillTerminalCommandResponse",
            other => other,
        }
    }
}

/// The directory of the official schemas (`seed/`, `latest/`,
/// `latest/npm-sdk-2.4.0/`): `$ACP_SCHEMA_DIR` when set, else the cache under
/// `target/official-schemas/`, downloaded from the npm registry on first use
/// (see [`official`]).
pub fn schema_dir() -> PathBuf {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(official::resolve) {
        Ok(dir) => dir.clone(),
        Err(e) => panic!("the official ACP schemas are not available: {e}"),
    }
}

fn read_json(path: PathBuf) -> Value {
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The parsed schema file.
pub fn schema(file: SchemaFile) -> &'static Value {
    static CELLS: [OnceLock<Value>; 6] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    CELLS[file as usize].get_or_init(|| read_json(schema_dir().join(file.relative_path())))
}

/// `meta.json` of the seed or latest folder (the npm folder has none).
pub fn meta_json(file: SchemaFile) -> Value {
    let folder = match file {
        SchemaFile::Seed => "seed",
        SchemaFile::Latest => "latest",
        SchemaFile::SeedUnstable => return meta_unstable_json("seed"),
        SchemaFile::LatestUnstable => return meta_unstable_json("latest"),
        SchemaFile::Npm | SchemaFile::NpmUnstable => {
            panic!("the npm schema ships no meta.json")
        }
    };
    read_json(schema_dir().join(folder).join("meta.json"))
}

fn meta_unstable_json(folder: &str) -> Value {
    read_json(schema_dir().join(folder).join("meta.unstable.json"))
}

/// The `$defs` of a schema file.
pub fn defs(file: SchemaFile) -> &'static Map<String, Value> {
    schema(file)["$defs"]
        .as_object()
        .expect("a schema file has `$defs`")
}

/// The definition `name` (in the newest spelling) of `file`, if it has one.
pub fn def(file: SchemaFile, name: &str) -> Option<&'static Value> {
    defs(file).get(file.def_name(name))
}

/// A subschema of `file` made standalone: `schema` with the file's `$defs` attached,
/// so `$ref: "#/$defs/…"` inside it resolves.
pub fn standalone(file: SchemaFile, schema: &Value) -> Value {
    let mut root = Map::new();
    root.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("$defs".into(), Value::Object(defs(file).clone()));
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                if k != "$defs" {
                    root.insert(k.clone(), v.clone());
                }
            }
        }
        Value::Bool(b) => {
            if !b {
                root.insert("not".into(), json!({}));
            }
        }
        other => panic!("not a schema: {other}"),
    }
    Value::Object(root)
}

/// Compiles a validator for `schema` (a subschema of `file`).
pub fn compile(file: SchemaFile, schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(&standalone(file, schema))
        .unwrap_or_else(|e| panic!("cannot compile a {} subschema: {e}", file.label()))
}

/// The validators of every definition of every schema file, compiled once.
pub struct Validators {
    maps: BTreeMap<SchemaFile, jsonschema::ValidatorMap>,
}

impl Validators {
    /// All of them (compiled on first use, then shared).
    pub fn get() -> &'static Validators {
        static V: OnceLock<Validators> = OnceLock::new();
        V.get_or_init(|| {
            let mut maps = BTreeMap::new();
            for file in SchemaFile::ALL.into_iter().chain(SchemaFile::UNSTABLE) {
                let root = standalone(file, &json!({}));
                let map = jsonschema::validator_map_for(&root)
                    .unwrap_or_else(|e| panic!("cannot compile the {} schema: {e}", file.label()));
                for name in defs(file).keys() {
                    assert!(
                        map.contains_key(&format!("#/$defs/{name}")),
                        "no validator for {name} in {}",
                        file.label()
                    );
                }
                maps.insert(file, map);
            }
            Validators { maps }
        })
    }

    /// The validator of `name` (newest spelling) in `file`, if the file has it.
    pub fn def(&self, file: SchemaFile, name: &str) -> Option<&jsonschema::Validator> {
        self.pointer(file, &format!("/$defs/{}", file.def_name(name)))
    }

    /// The validator of the subschema at a JSON pointer of `file` (`/$defs/X/oneOf/2`).
    pub fn pointer(&self, file: SchemaFile, pointer: &str) -> Option<&jsonschema::Validator> {
        self.maps[&file].get(&format!("#{pointer}"))
    }

    /// Whether `value` is valid against `name` in `file` (`None`: no such def there).
    pub fn is_valid(&self, file: SchemaFile, name: &str, value: &Value) -> Option<bool> {
        self.def(file, name).map(|v| v.is_valid(value))
    }

    /// The validation errors of `value` against `name` in `file`, one line each.
    pub fn errors(&self, file: SchemaFile, name: &str, value: &Value) -> Vec<String> {
        match self.def(file, name) {
            None => vec![format!("{} has no def {name}", file.label())],
            Some(v) => v
                .iter_errors(value)
                .map(|e| format!("{} at `{}`", e, e.instance_path()))
                .take(5)
                .collect(),
        }
    }
}

/// Whether the definition `name` of the npm or latest schema is stable (both files
/// hold only the stable surface, so: whether either has it).
pub fn stable_def_names() -> Vec<String> {
    let mut names: Vec<String> = defs(SchemaFile::Npm).keys().cloned().collect();
    for name in defs(SchemaFile::Latest).keys() {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names.sort();
    names
}

// ---------------------------------------------------------------------------
// Corpus

/// How an example relates to the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lenient {
    /// The input is valid and so is the output.
    No,
    /// The input breaks the schema in a way the types tolerate (a malformed field
    /// falls back, an invalid list item is dropped, `null` for a list); the output is valid.
    Fallback,
    /// The input uses a variant the schema does not list (an unknown union tag or
    /// enum value); the types keep it verbatim, so neither side is valid.
    Verbatim,
}

/// A JSON value that keeps the order of object members (the corpus compares
/// outputs byte for byte, and `serde_json::Value` sorts keys).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Vec<(String, Json)>> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }
}

impl serde::Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("not a finite number"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry()? {
                    members.push((k, v));
                }
                Ok(Json::Object(members))
            }
        }
        d.deserialize_any(V)
    }
}

/// Compact JSON text of an ordered value.
pub fn ordered_text(value: &Json) -> String {
    serde_json::to_string(value).expect("JSON serialises")
}

/// One example of the corpus.
#[derive(Debug, Clone)]
pub struct Example {
    /// The corpus file it came from.
    pub file: String,
    /// The schema definition it is an example of.
    pub def: String,
    /// A short name, unique within the definition.
    pub name: String,
    /// For responses: the method of the request being answered.
    pub method: Option<String>,
    /// Oldest schema that accepts it (older ones are skipped and must reject it).
    pub since: Option<SchemaFile>,
    /// How it relates to the schema.
    pub lenient: Lenient,
    /// The input (keys sorted: for validation and lookups).
    pub value: Value,
    /// The output, when the types normalise the input.
    pub expect: Option<Value>,
    /// The input with its members in the order written.
    pub ordered: Json,
    /// The output with its members in the order written.
    pub ordered_expect: Option<Json>,
    /// Unstable examples: the cargo feature that types the example.
    pub feature: Option<String>,
    /// Unstable examples: the unstable schema file it is checked against.
    pub schema: Option<SchemaFile>,
}

impl Example {
    /// `def/name (file)`, for messages.
    pub fn id(&self) -> String {
        format!("{}/{} ({})", self.def, self.name, self.file)
    }

    /// What the types must write back.
    pub fn expected(&self) -> &Value {
        self.expect.as_ref().unwrap_or(&self.value)
    }

    /// The input as compact text, members in the order written.
    pub fn input_text(&self) -> String {
        ordered_text(&self.ordered)
    }

    /// What the types must write back, as compact text in the order written.
    pub fn expected_text(&self) -> String {
        ordered_text(self.ordered_expect.as_ref().unwrap_or(&self.ordered))
    }

    /// Whether this example is checked against `file`.
    pub fn applies_to(&self, file: SchemaFile) -> bool {
        self.since.is_none_or(|since| file >= since)
    }
}

/// The corpus directory.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every example of `tests/corpus/*.json` (the stable surface), in file order.
pub fn corpus() -> &'static [Example] {
    static C: OnceLock<Vec<Example>> = OnceLock::new();
    C.get_or_init(|| load_corpus(&corpus_dir(), false))
}

/// Every example of `tests/corpus/unstable/*.json`: each names the cargo
/// feature that types it and the unstable schema it is checked against.
pub fn unstable_corpus() -> &'static [Example] {
    static C: OnceLock<Vec<Example>> = OnceLock::new();
    C.get_or_init(|| load_corpus(&corpus_dir().join("unstable"), true))
}

/// Whether this build has the cargo feature `name` of `acp-schema` (or all of
/// `a+b`).
pub fn feature_enabled(name: &str) -> bool {
    if name.contains('+') {
        return name.split('+').all(feature_enabled);
    }
    match name {
        "unstable-session-model" => cfg!(feature = "unstable-session-model"),
        "unstable-session-usage" => cfg!(feature = "unstable-session-usage"),
        "unstable-session-fork" => cfg!(feature = "unstable-session-fork"),
        "unstable-session-title" => cfg!(feature = "unstable-session-title"),
        "unstable-system-prompt" => cfg!(feature = "unstable-system-prompt"),
        "unstable-providers" => cfg!(feature = "unstable-providers"),
        "unstable-mcp-over-acp" => cfg!(feature = "unstable-mcp-over-acp"),
        "unstable-subagents" => cfg!(feature = "unstable-subagents"),
        other => panic!("unknown feature {other:?}"),
    }
}

fn load_corpus(dir: &Path, unstable: bool) -> Vec<Example> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{} exists: {e}", dir.display()))
        .map(|e| e.expect("readable corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let raw_entries: Vec<BTreeMap<String, Box<RawValue>>> = serde_json::from_str(&source)
            .unwrap_or_else(|e| panic!("{file}: a corpus file is an array of objects: {e}"));
        for (i, raw_entry) in raw_entries.into_iter().enumerate() {
            let ordered = |key: &str| -> Option<Json> {
                raw_entry
                    .get(key)
                    .map(|raw| serde_json::from_str(raw.get()).expect("corpus values are JSON"))
            };
            let (ordered_value, ordered_expect) = (ordered("value"), ordered("expect"));
            let mut map: Map<String, Value> = raw_entry
                .iter()
                .map(|(k, raw)| {
                    let v: Value = serde_json::from_str(raw.get()).expect("corpus values are JSON");
                    (k.clone(), v)
                })
                .collect();
            let text = |map: &mut Map<String, Value>, key: &str| -> Option<String> {
                map.remove(key).map(|v| match v {
                    Value::String(s) => s,
                    other => panic!("{file}[{i}].{key}: expected a string, found {other}"),
                })
            };
            let def = text(&mut map, "def").unwrap_or_else(|| panic!("{file}[{i}]: no `def`"));
            let name = text(&mut map, "name").unwrap_or_else(|| panic!("{file}[{i}]: no `name`"));
            let method = text(&mut map, "method");
            let since = text(&mut map, "since").map(|s| {
                SchemaFile::from_label(&s)
                    .unwrap_or_else(|| panic!("{file}[{i}]: unknown `since` {s:?}"))
            });
            let lenient = match map.remove("lenient") {
                None | Some(Value::Bool(false)) => Lenient::No,
                Some(Value::Bool(true)) => Lenient::Fallback,
                Some(Value::String(s)) if s == "verbatim" => Lenient::Verbatim,
                Some(other) => panic!("{file}[{i}]: bad `lenient` {other}"),
            };
            let value = map
                .remove("value")
                .unwrap_or_else(|| panic!("{file}[{i}]: no `value`"));
            let expect = map.remove("expect");
            map.remove("note");
            let feature = text(&mut map, "feature");
            let schema = text(&mut map, "schema").map(|s| {
                SchemaFile::unstable_from_label(&s)
                    .unwrap_or_else(|| panic!("{file}[{i}]: unknown `schema` {s:?}"))
            });
            assert_eq!(
                (feature.is_some(), schema.is_some()),
                (unstable, unstable),
                "{file}[{i}]: unstable examples (and only they) name their `feature` and `schema`"
            );
            if let Some(f) = &feature {
                feature_enabled(f);
            }
            assert!(
                map.is_empty(),
                "{file}[{i}] ({def}/{name}): unknown keys {:?}",
                map.keys().collect::<Vec<_>>()
            );
            out.push(Example {
                file: file.clone(),
                def,
                name,
                method,
                since,
                lenient,
                value,
                expect,
                ordered: ordered_value.expect("checked above: `value` is present"),
                ordered_expect,
                feature,
                schema,
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Registry: schema definition name → Rust counterpart

/// Why a round trip failed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The input did not decode (an answer, not a bug, for malformed input).
    Decode(DecodeError),
    /// The value decoded but does not survive re-encoding (always a bug).
    Unstable(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Decode(e) => write!(f, "{e}"),
            Failure::Unstable(m) => write!(f, "UNSTABLE: {m}"),
        }
    }
}

impl From<DecodeError> for Failure {
    fn from(e: DecodeError) -> Self {
        Failure::Decode(e)
    }
}

/// Decodes `json` as `T`, re-encodes it, and checks that decoding the output
/// again gives the same value (`decode(encode(x)) == x`).
pub fn roundtrip_as<T>(json: &str) -> Result<String, Failure>
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let value: T = acp_schema::decode(json)?;
    let out = serde_json::to_string(&value)
        .map_err(|e| Failure::Unstable(format!("cannot encode {value:?}: {e}")))?;
    let again: T = acp_schema::decode(&out)
        .map_err(|e| Failure::Unstable(format!("re-encoded output {out} does not decode: {e}")))?;
    if again != value {
        return Err(Failure::Unstable(format!(
            "decode(encode(x)) != x: {value:?} vs {again:?}"
        )));
    }
    Ok(out)
}

/// The same for an `_` extension method of a routing enum: params kept raw.
fn roundtrip_ext<R: MethodEnum + PartialEq + Debug>(json: &str) -> Result<String, Failure> {
    let raw = RawValue::from_string(json.to_string()).map_err(|e| {
        Failure::Decode(DecodeError {
            path: String::new(),
            message: e.to_string(),
        })
    })?;
    let decoded = R::decode("_corpus/ext", Some(&raw)).map_err(|e| {
        Failure::Decode(DecodeError {
            path: String::new(),
            message: e.to_string(),
        })
    })?;
    let out = serde_json::to_string(&decoded).map_err(|e| Failure::Unstable(e.to_string()))?;
    if out != raw.get() {
        return Err(Failure::Unstable(format!(
            "extension params changed: {out}"
        )));
    }
    Ok(out)
}

fn roundtrip_response<R>(method: Option<&str>, json: &str) -> Result<String, Failure>
where
    R: acp_schema::ResultEnum + PartialEq + Debug,
{
    let Some(method) = method else {
        return Err(Failure::Unstable(
            "a response example needs `method`".into(),
        ));
    };
    let value = ResponseMessage::<R>::decode(method, json)?;
    let out = serde_json::to_string(&value).map_err(|e| Failure::Unstable(e.to_string()))?;
    let again = ResponseMessage::<R>::decode(method, &out)
        .map_err(|e| Failure::Unstable(format!("re-encoded output {out} does not decode: {e}")))?;
    if again != value {
        return Err(Failure::Unstable(format!(
            "decode(encode(x)) != x: {value:?} vs {again:?}"
        )));
    }
    Ok(out)
}

macro_rules! registry {
    ($($name:literal => $ty:ty),* $(,)?) => {
        /// Every definition name with a plain Rust counterpart.
        pub const PLAIN_DEFS: &[&str] = &[$($name),*];

        fn roundtrip_plain(def: &str, json: &str) -> Option<Result<String, Failure>> {
            match def {
                $($name => Some(roundtrip_as::<$ty>(json)),)*
                _ => None,
            }
        }
    };
}

/// Definitions whose Rust counterpart needs context (a method) or is an envelope.
pub const SPECIAL_DEFS: &[&str] = &[
    "ExtRequest",
    "ExtNotification",
    "ExtResponse",
    "AgentResponse",
    "ClientResponse",
];

/// Decodes `json` as the Rust counterpart of the schema definition `def` and
/// re-encodes it. `None` if the definition has no Rust counterpart.
/// `method` is the request method, needed for the response envelopes.
pub fn roundtrip(def: &str, method: Option<&str>, json: &str) -> Option<Result<String, Failure>> {
    match def {
        "ExtRequest" => Some(roundtrip_ext::<ClientRequest>(json)),
        "ExtNotification" => Some(roundtrip_ext::<ClientNotification>(json)),
        "ExtResponse" => Some(
            acp_schema::decode::<acp_schema::ExtResponse>(json)
                .map(|r| r.0.get().to_string())
                .map_err(Failure::Decode),
        ),
        "AgentResponse" => Some(roundtrip_response::<AgentResponse>(method, json)),
        "ClientResponse" => Some(roundtrip_response::<ClientResponse>(method, json)),
        _ => roundtrip_plain(def, json).or_else(|| roundtrip_unstable(def, json)),
    }
}

/// Whether `def` has a Rust counterpart (in this build: unstable ones need
/// their feature).
pub fn has_counterpart(def: &str) -> bool {
    PLAIN_DEFS.contains(&def)
        || SPECIAL_DEFS.contains(&def)
        || UNSTABLE_DEFS
            .iter()
            .any(|(d, feature)| *d == def && feature_enabled(feature))
}

macro_rules! unstable_registry {
    ($($feat:literal : $name:literal => $ty:ty),* $(,)?) => {
        /// Every unstable-only definition with a Rust counterpart, and the
        /// cargo feature that has it.
        pub const UNSTABLE_DEFS: &[(&str, &str)] = &[$(($name, $feat)),*];

        #[allow(unreachable_code, unused_variables)]
        fn roundtrip_unstable(def: &str, json: &str) -> Option<Result<String, Failure>> {
            $(
                #[cfg(feature = $feat)]
                if def == $name {
                    return Some(roundtrip_as::<$ty>(json));
                }
            )*
            None
        }
    };
}

unstable_registry! {
    "unstable-session-model": "ModelId" => acp_schema::ModelId,
    "unstable-session-model": "ModelInfo" => acp_schema::ModelInfo,
    "unstable-session-model": "SessionModelState" => acp_schema::SessionModelState,
    "unstable-session-model": "SetSessionModelRequest" => acp_schema::SetSessionModelRequest,
    "unstable-session-model": "SetSessionModelResponse" => acp_schema::SetSessionModelResponse,
    "unstable-session-usage": "Usage" => acp_schema::Usage,
    "unstable-session-fork": "SessionForkCapabilities" => acp_schema::SessionForkCapabilities,
    "unstable-session-fork": "ForkSessionRequest" => acp_schema::ForkSessionRequest,
    "unstable-session-fork": "ForkSessionResponse" => acp_schema::ForkSessionResponse,
    "unstable-session-title": "SessionTitleCapabilities" => acp_schema::SessionTitleCapabilities,
    "unstable-session-title": "SetSessionTitleRequest" => acp_schema::SetSessionTitleRequest,
    "unstable-session-title": "SetSessionTitleResponse" => acp_schema::SetSessionTitleResponse,
    "unstable-system-prompt": "SessionSystemPromptCapabilities" => acp_schema::SessionSystemPromptCapabilities,
    "unstable-system-prompt": "SessionSystemPromptModeCapabilities" => acp_schema::SessionSystemPromptModeCapabilities,
    "unstable-system-prompt": "SessionSystemPromptOverrideCapabilities" => acp_schema::SessionSystemPromptOverrideCapabilities,
    "unstable-system-prompt": "SystemPrompt" => acp_schema::SystemPrompt,
    "unstable-system-prompt": "SystemPromptMode" => acp_schema::SystemPromptMode,
    "unstable-providers": "ProvidersCapabilities" => acp_schema::ProvidersCapabilities,
    "unstable-providers": "ProviderId" => acp_schema::ProviderId,
    "unstable-providers": "LlmProtocol" => acp_schema::LlmProtocol,
    "unstable-providers": "ProviderCurrentConfig" => acp_schema::ProviderCurrentConfig,
    "unstable-providers": "ProviderInfo" => acp_schema::ProviderInfo,
    "unstable-providers": "ListProvidersRequest" => acp_schema::ListProvidersRequest,
    "unstable-providers": "ListProvidersResponse" => acp_schema::ListProvidersResponse,
    "unstable-providers": "SetProviderRequest" => acp_schema::SetProviderRequest,
    "unstable-providers": "SetProviderResponse" => acp_schema::SetProviderResponse,
    "unstable-providers": "DisableProviderRequest" => acp_schema::DisableProviderRequest,
    "unstable-providers": "DisableProviderResponse" => acp_schema::DisableProviderResponse,
    "unstable-mcp-over-acp": "McpServerAcp" => acp_schema::McpServerAcp,
    "unstable-mcp-over-acp": "McpServerAcpId" => acp_schema::McpServerAcpId,
    "unstable-mcp-over-acp": "McpRequestId" => acp_schema::McpRequestId,
    "unstable-mcp-over-acp": "MessageMcpRequest" => acp_schema::MessageMcpRequest,
    "unstable-mcp-over-acp": "MessageMcpResponse" => acp_schema::MessageMcpResponse,
    "unstable-mcp-over-acp": "MessageMcpNotification" => acp_schema::MessageMcpNotification,
    "unstable-mcp-over-acp": "McpError" => acp_schema::McpError,
    "unstable-subagents": "SubagentCapabilities" => acp_schema::SubagentCapabilities,
    "unstable-subagents": "SubagentUpdate" => acp_schema::SubagentUpdate,
    "unstable-subagents": "SubagentSessionCapabilities" => acp_schema::SubagentSessionCapabilities,
    "unstable-subagents": "SessionCancelCapabilities" => acp_schema::SessionCancelCapabilities,
    "unstable-subagents": "StateUpdate" => acp_schema::StateUpdate,
    "unstable-subagents": "RunningStateUpdate" => acp_schema::RunningStateUpdate,
    "unstable-subagents": "IdleStateUpdate" => acp_schema::IdleStateUpdate,
    "unstable-subagents": "RequiresActionStateUpdate" => acp_schema::RequiresActionStateUpdate,
    "unstable-subagents": "UnknownStateUpdate" => acp_schema::UnknownStateUpdate,
    "unstable-subagents": "ErrorStopReason" => acp_schema::ErrorStopReason,
    "unstable-subagents": "SessionMessage" => acp_schema::SessionMessage,
    "unstable-subagents": "SessionMessageChunk" => acp_schema::SessionMessageChunk,
}

/// Unstable-only definitions of the unstable schemas that have no Rust
/// counterpart (yet), by area: the surface this crate does not type. A
/// member or variant of one of these is kept raw like any unknown one.
pub const UNTYPED_UNSTABLE_DEFS: &[(&str, &[&str])] = &[
    (
        "auth status (auth/status, auth/status_update)",
        &[
            "AuthStatusCapabilities",
            "AuthStatusRequest",
            "AuthStatusResponse",
            "AuthState",
            "AuthAccount",
            "AuthStatusUpdateNotification",
        ],
    ),
    (
        "session archive (session/archive, session/unarchive)",
        &[
            "SessionArchiveCapabilities",
            "ArchiveSessionRequest",
            "ArchiveSessionResponse",
            "UnarchiveSessionRequest",
            "UnarchiveSessionResponse",
            "SessionArchiveFilter",
        ],
    ),
    (
        "session status (session/status)",
        &[
            "SessionStatusCapabilities",
            "SessionStatusRequest",
            "SessionStatusResponse",
            "SessionStatus",
        ],
    ),
    (
        "plan updates (plan_update, plan_removed)",
        &[
            "PlanCapabilities",
            "PlanUpdate",
            "PlanRemoved",
            "PlanUpdateContent",
            "PlanId",
            "PlanItems",
            "PlanFile",
            "PlanMarkdown",
        ],
    ),
    (
        "proxy chains (proxy/initialize, proxy/successor)",
        &[
            "ProxyRequest",
            "ProxyResponse",
            "ProxyNotification",
            "InitializeProxyRequest",
            "InitializeProxyResponse",
            "ProxySuccessorRequest",
            "ProxySuccessorResponse",
            "ProxySuccessorNotification",
        ],
    ),
];

registry! {
    // JSON-RPC envelopes (src/messages.rs)
    "ClientRequest" => RequestMessage<ClientRequest>,
    "AgentRequest" => RequestMessage<AgentRequest>,
    "ClientNotification" => NotificationMessage<ClientNotification>,
    "AgentNotification" => NotificationMessage<AgentNotification>,
    // rpc
    "RequestId" => acp_schema::RequestId,
    "ErrorCode" => acp_schema::ErrorCode,
    "Error" => acp_schema::Error,
    "CancelRequestNotification" => acp_schema::CancelRequestNotification,
    // content
    "ContentBlock" => acp_schema::ContentBlock,
    "TextContent" => acp_schema::TextContent,
    "ImageContent" => acp_schema::ImageContent,
    "AudioContent" => acp_schema::AudioContent,
    "ResourceLink" => acp_schema::ResourceLink,
    "EmbeddedResource" => acp_schema::EmbeddedResource,
    "EmbeddedResourceResource" => acp_schema::EmbeddedResourceResource,
    "TextResourceContents" => acp_schema::TextResourceContents,
    "BlobResourceContents" => acp_schema::BlobResourceContents,
    "Annotations" => acp_schema::Annotations,
    "Role" => acp_schema::Role,
    // initialize
    "ProtocolVersion" => acp_schema::ProtocolVersion,
    "InitializeRequest" => acp_schema::InitializeRequest,
    "InitializeResponse" => acp_schema::InitializeResponse,
    "Implementation" => acp_schema::Implementation,
    "ClientCapabilities" => acp_schema::ClientCapabilities,
    "FileSystemCapabilities" => acp_schema::FileSystemCapabilities,
    "AuthCapabilities" => acp_schema::AuthCapabilities,
    "ClientSessionCapabilities" => acp_schema::ClientSessionCapabilities,
    "SessionConfigOptionsCapabilities" => acp_schema::SessionConfigOptionsCapabilities,
    "BooleanConfigOptionCapabilities" => acp_schema::BooleanConfigOptionCapabilities,
    "CompactionCapabilities" => acp_schema::CompactionCapabilities,
    "NoticeCapabilities" => acp_schema::NoticeCapabilities,
    "ElicitationCapabilities" => acp_schema::ElicitationCapabilities,
    "ElicitationFormCapabilities" => acp_schema::ElicitationFormCapabilities,
    "ElicitationUrlCapabilities" => acp_schema::ElicitationUrlCapabilities,
    "AgentCapabilities" => acp_schema::AgentCapabilities,
    "PromptCapabilities" => acp_schema::PromptCapabilities,
    "McpCapabilities" => acp_schema::McpCapabilities,
    "SessionCapabilities" => acp_schema::SessionCapabilities,
    "SessionListCapabilities" => acp_schema::SessionListCapabilities,
    "SessionDeleteCapabilities" => acp_schema::SessionDeleteCapabilities,
    "SessionAdditionalDirectoriesCapabilities" => acp_schema::SessionAdditionalDirectoriesCapabilities,
    "SessionResumeCapabilities" => acp_schema::SessionResumeCapabilities,
    "SessionCloseCapabilities" => acp_schema::SessionCloseCapabilities,
    "AgentAuthCapabilities" => acp_schema::AgentAuthCapabilities,
    "LogoutCapabilities" => acp_schema::LogoutCapabilities,
    // auth
    "AuthMethod" => acp_schema::AuthMethod,
    "AuthMethodAgent" => acp_schema::AuthMethodAgent,
    "AuthMethodTerminal" => acp_schema::AuthMethodTerminal,
    "AuthMethodId" => acp_schema::AuthMethodId,
    "AuthenticateRequest" => acp_schema::AuthenticateRequest,
    "AuthenticateResponse" => acp_schema::AuthenticateResponse,
    "LogoutRequest" => acp_schema::LogoutRequest,
    "LogoutResponse" => acp_schema::LogoutResponse,
    // mcp
    "McpServer" => acp_schema::McpServer,
    "McpServerStdio" => acp_schema::McpServerStdio,
    "McpServerHttp" => acp_schema::McpServerHttp,
    "McpServerSse" => acp_schema::McpServerSse,
    "HttpHeader" => acp_schema::HttpHeader,
    "EnvVariable" => acp_schema::EnvVariable,
    // session
    "SessionId" => acp_schema::SessionId,
    "SessionModeId" => acp_schema::SessionModeId,
    "SessionMode" => acp_schema::SessionMode,
    "SessionModeState" => acp_schema::SessionModeState,
    "NewSessionRequest" => acp_schema::NewSessionRequest,
    "NewSessionResponse" => acp_schema::NewSessionResponse,
    "LoadSessionRequest" => acp_schema::LoadSessionRequest,
    "LoadSessionResponse" => acp_schema::LoadSessionResponse,
    "SessionInfo" => acp_schema::SessionInfo,
    "ListSessionsRequest" => acp_schema::ListSessionsRequest,
    "ListSessionsResponse" => acp_schema::ListSessionsResponse,
    "DeleteSessionRequest" => acp_schema::DeleteSessionRequest,
    "DeleteSessionResponse" => acp_schema::DeleteSessionResponse,
    "ResumeSessionRequest" => acp_schema::ResumeSessionRequest,
    "ResumeSessionResponse" => acp_schema::ResumeSessionResponse,
    "CloseSessionRequest" => acp_schema::CloseSessionRequest,
    "CloseSessionResponse" => acp_schema::CloseSessionResponse,
    "SetSessionModeRequest" => acp_schema::SetSessionModeRequest,
    "SetSessionModeResponse" => acp_schema::SetSessionModeResponse,
    "CancelNotification" => acp_schema::CancelNotification,
    // config
    "SessionConfigId" => acp_schema::SessionConfigId,
    "SessionConfigValueId" => acp_schema::SessionConfigValueId,
    "SessionConfigGroupId" => acp_schema::SessionConfigGroupId,
    "SessionConfigSelectOption" => acp_schema::SessionConfigSelectOption,
    "SessionConfigSelectGroup" => acp_schema::SessionConfigSelectGroup,
    "SessionConfigSelectOptions" => acp_schema::SessionConfigSelectOptions,
    "SessionConfigSelect" => acp_schema::SessionConfigSelect,
    "SessionConfigBoolean" => acp_schema::SessionConfigBoolean,
    "SessionConfigOptionCategory" => acp_schema::SessionConfigOptionCategory,
    "SessionConfigOption" => acp_schema::SessionConfigOption,
    "SetSessionConfigOptionRequest" => acp_schema::SetSessionConfigOptionRequest,
    "SetSessionConfigOptionResponse" => acp_schema::SetSessionConfigOptionResponse,
    // prompt
    "PromptRequest" => acp_schema::PromptRequest,
    "PromptResponse" => acp_schema::PromptResponse,
    "StopReason" => acp_schema::StopReason,
    // session/update
    "SessionNotification" => acp_schema::SessionNotification,
    "SessionUpdate" => acp_schema::SessionUpdate,
    "ContentChunk" => acp_schema::ContentChunk,
    "MessageId" => acp_schema::MessageId,
    "AvailableCommand" => acp_schema::AvailableCommand,
    "AvailableCommandInput" => acp_schema::AvailableCommandInput,
    "UnstructuredCommandInput" => acp_schema::UnstructuredCommandInput,
    "AvailableCommandsUpdate" => acp_schema::AvailableCommandsUpdate,
    "CurrentModeUpdate" => acp_schema::CurrentModeUpdate,
    "ConfigOptionUpdate" => acp_schema::ConfigOptionUpdate,
    "SessionInfoUpdate" => acp_schema::SessionInfoUpdate,
    "UsageUpdate" => acp_schema::UsageUpdate,
    "Cost" => acp_schema::Cost,
    "Notice" => acp_schema::Notice,
    "NoticeSeverity" => acp_schema::NoticeSeverity,
    "CompactionId" => acp_schema::CompactionId,
    "CompactionStatus" => acp_schema::CompactionStatus,
    "CompactionUpdate" => acp_schema::CompactionUpdate,
    "CompactionSummaryChunk" => acp_schema::CompactionSummaryChunk,
    // tool calls
    "ToolCall" => acp_schema::ToolCall,
    "ToolCallUpdate" => acp_schema::ToolCallUpdate,
    "ToolCallId" => acp_schema::ToolCallId,
    "ToolKind" => acp_schema::ToolKind,
    "ToolCallStatus" => acp_schema::ToolCallStatus,
    "ToolCallContent" => acp_schema::ToolCallContent,
    "ToolCallLocation" => acp_schema::ToolCallLocation,
    "Content" => acp_schema::Content,
    "Diff" => acp_schema::Diff,
    "Terminal" => acp_schema::Terminal,
    // plan
    "Plan" => acp_schema::Plan,
    "PlanEntry" => acp_schema::PlanEntry,
    "PlanEntryPriority" => acp_schema::PlanEntryPriority,
    "PlanEntryStatus" => acp_schema::PlanEntryStatus,
    // permission
    "RequestPermissionRequest" => acp_schema::RequestPermissionRequest,
    "RequestPermissionResponse" => acp_schema::RequestPermissionResponse,
    "RequestPermissionOutcome" => acp_schema::RequestPermissionOutcome,
    "SelectedPermissionOutcome" => acp_schema::SelectedPermissionOutcome,
    "PermissionOption" => acp_schema::PermissionOption,
    "PermissionOptionId" => acp_schema::PermissionOptionId,
    "PermissionOptionKind" => acp_schema::PermissionOptionKind,
    // fs
    "ReadTextFileRequest" => acp_schema::ReadTextFileRequest,
    "ReadTextFileResponse" => acp_schema::ReadTextFileResponse,
    "WriteTextFileRequest" => acp_schema::WriteTextFileRequest,
    "WriteTextFileResponse" => acp_schema::WriteTextFileResponse,
    // terminal
    "TerminalId" => acp_schema::TerminalId,
    "CreateTerminalRequest" => acp_schema::CreateTerminalRequest,
    "CreateTerminalResponse" => acp_schema::CreateTerminalResponse,
    "TerminalOutputRequest" => acp_schema::TerminalOutputRequest,
    "TerminalOutputResponse" => acp_schema::TerminalOutputResponse,
    "TerminalExitStatus" => acp_schema::TerminalExitStatus,
    "WaitForTerminalExitRequest" => acp_schema::WaitForTerminalExitRequest,
    "WaitForTerminalExitResponse" => acp_schema::WaitForTerminalExitResponse,
    "KillTerminalRequest" => acp_schema::KillTerminalRequest,
    "KillTerminalResponse" => acp_schema::KillTerminalResponse,
    "ReleaseTerminalRequest" => acp_schema::ReleaseTerminalRequest,
    "ReleaseTerminalResponse" => acp_schema::ReleaseTerminalResponse,
    // elicitation
    "CreateElicitationRequest" => acp_schema::CreateElicitationRequest,
    "CreateElicitationResponse" => acp_schema::CreateElicitationResponse,
    "CompleteElicitationNotification" => acp_schema::CompleteElicitationNotification,
    "ElicitationId" => acp_schema::ElicitationId,
    "ElicitationFormMode" => acp_schema::ElicitationFormMode,
    "ElicitationUrlMode" => acp_schema::ElicitationUrlMode,
    "ElicitationSessionScope" => acp_schema::ElicitationSessionScope,
    "ElicitationRequestScope" => acp_schema::ElicitationRequestScope,
    "ElicitationSchema" => acp_schema::ElicitationSchema,
    "ElicitationSchemaType" => acp_schema::ElicitationSchemaType,
    "ElicitationPropertySchema" => acp_schema::ElicitationPropertySchema,
    "StringPropertySchema" => acp_schema::StringPropertySchema,
    "NumberPropertySchema" => acp_schema::NumberPropertySchema,
    "IntegerPropertySchema" => acp_schema::IntegerPropertySchema,
    "BooleanPropertySchema" => acp_schema::BooleanPropertySchema,
    "MultiSelectPropertySchema" => acp_schema::MultiSelectPropertySchema,
    "MultiSelectItems" => acp_schema::MultiSelectItems,
    "StringMultiSelectItems" => acp_schema::StringMultiSelectItems,
    "TitledMultiSelectItems" => acp_schema::TitledMultiSelectItems,
    "EnumOption" => acp_schema::EnumOption,
    "StringFormat" => acp_schema::StringFormat,
    "ElicitationAcceptAction" => acp_schema::ElicitationAcceptAction,
    "ElicitationContentValue" => acp_schema::ElicitationContentValue,
}

/// Serialises a parsed JSON value the way the tests compare outputs.
pub fn text(value: &Value) -> String {
    serde_json::to_string(value).expect("a JSON value serialises")
}

// ---------------------------------------------------------------------------
// Schema walking helpers shared by the coverage checks and the generator

/// The alternatives of a `oneOf`/`anyOf` schema, with nested bare unions
/// (`anyOf: [{anyOf: [...]}, {type: null}]`) flattened.
pub fn alternatives(schema: &Value) -> Vec<&Value> {
    alternatives_at(schema, "")
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

/// [`alternatives`] with the JSON pointer of each, relative to `schema`
/// (`/oneOf/2`, `/anyOf/0/anyOf/3`), appended to `base`.
pub fn alternatives_at<'a>(schema: &'a Value, base: &str) -> Vec<(String, &'a Value)> {
    let (keyword, list) = match (schema.get("oneOf"), schema.get("anyOf")) {
        (Some(Value::Array(l)), _) => ("oneOf", l),
        (_, Some(Value::Array(l))) => ("anyOf", l),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for (i, alt) in list.iter().enumerate() {
        let pointer = format!("{base}/{keyword}/{i}");
        let is_bare_union = alt.as_object().is_some_and(|m| {
            m.keys()
                .all(|k| matches!(k.as_str(), "anyOf" | "oneOf" | "description" | "title"))
                && (m.contains_key("anyOf") || m.contains_key("oneOf"))
        });
        if is_bare_union {
            out.extend(alternatives_at(alt, &pointer));
        } else {
            out.push((pointer, alt));
        }
    }
    out
}

/// Whether a subschema only admits `null`.
pub fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null"))
}

/// A short label for an alternative: its title, its tag const or its `$ref`.
pub fn alt_label(alt: &Value) -> String {
    if let Some(t) = alt.get("title").and_then(Value::as_str) {
        return t.to_string();
    }
    if let Some(c) = alt.get("const") {
        return c.to_string();
    }
    if let Some(props) = alt.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            if let Some(c) = v.get("const") {
                return format!("{k}={c}");
            }
        }
    }
    let refs: Vec<&str> = alt
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(std::iter::once(alt))
        .filter_map(|s| s.get("$ref").and_then(Value::as_str))
        .collect();
    if !refs.is_empty() {
        return refs.join(",");
    }
    let s = alt.to_string();
    s.chars().take(80).collect()
}
