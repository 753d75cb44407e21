//! Malformed or wrong-typed JSON gives an error that names the field path, and
//! never a panic: hand-picked cases, then a property test that mutates the
//! corpus examples (deleted keys, swapped types, truncated text, random bytes).

use crate::common;

use acp_schema::{
    AgentResponse, ClientRequest, DecodeError, InitializeRequest, PromptRequest, RequestMessage,
    ResponseMessage, SessionNotification, ToolCall, decode,
};
use common::*;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn err<T: serde::de::DeserializeOwned + std::fmt::Debug>(json: &str) -> DecodeError {
    match decode::<T>(json) {
        Ok(v) => panic!("{json} decoded as {v:?}"),
        Err(e) => e,
    }
}

#[test]
fn wrong_type_deep_inside_a_union_names_the_path() {
    let e = err::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}}"#,
    );
    assert_eq!(e.path, "update.content.text", "{e}");
    assert!(e.to_string().starts_with("update.content.text: "), "{e}");

    let e = err::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":5}}"#,
    );
    assert_eq!(e.path, "update.title", "{e}");
    let e = err::<PromptRequest>(
        r#"{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a","text":7}}]}"#,
    );
    assert_eq!(e.path, "prompt[0].resource.text", "{e}");
}

#[test]
fn wrong_item_in_a_list_names_the_index() {
    let e = err::<PromptRequest>(
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":5}]}"#,
    );
    assert_eq!(e.path, "prompt[1].type", "{e}");
    let e = err::<PromptRequest>(
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":"image","data":"AA=="}]}"#,
    );
    assert_eq!(e.path, "prompt[1]", "{e}");
    assert!(e.message.contains("mimeType"), "{e}");
    let e = err::<PromptRequest>(
        r#"{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a"}}]}"#,
    );
    assert!(e.path.starts_with("prompt[0].resource"), "{e}");
}

#[test]
fn missing_required_fields_are_named() {
    let e = err::<PromptRequest>(r#"{"prompt":[]}"#);
    assert!(e.message.contains("sessionId"), "{e}");
    let e = err::<PromptRequest>(r#"{"sessionId":"s"}"#);
    assert!(e.message.contains("prompt"), "{e}");
    let e = err::<ToolCall>(r#"{"toolCallId":"c"}"#);
    assert!(e.message.contains("title"), "{e}");
    let e = err::<InitializeRequest>("{}");
    assert!(e.message.contains("protocolVersion"), "{e}");
    let e = err::<SessionNotification>(
        r#"{"sessionId":"s","update":{"content":{"type":"text","text":"x"}}}"#,
    );
    assert!(e.to_string().contains("sessionUpdate"), "{e}");
    let e = err::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"current_mode_update"}}"#,
    );
    assert!(e.path.starts_with("update"), "{e}");
    assert!(e.message.contains("currentModeId"), "{e}");
}

#[test]
fn non_objects_where_objects_are_needed() {
    for bad in ["\"hello\"", "7", "true", "null"] {
        let e = err::<PromptRequest>(bad);
        assert!(e.path.is_empty(), "{e}");
    }
    let e = err::<SessionNotification>(r#"{"sessionId":"s","update":"agent_message_chunk"}"#);
    assert_eq!(e.path, "update", "{e}");
    let e = err::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":[1]}}"#,
    );
    assert_eq!(e.path, "update.content", "{e}");
    // (A string version is the pre-release protocol 0, not an error.)
    for bad in ["true", "1.5", "[1]", "{}", "null"] {
        let e = err::<InitializeRequest>(&format!(r#"{{"protocolVersion":{bad}}}"#));
        assert_eq!(e.path, "protocolVersion", "{bad}: {e}");
    }
    let e = err::<InitializeRequest>(r#"{"protocolVersion":70000}"#);
    assert_eq!(e.path, "protocolVersion", "{e}");
    let e = err::<InitializeRequest>(r#"{"protocolVersion":-1}"#);
    assert_eq!(e.path, "protocolVersion", "{e}");
}

#[test]
fn envelopes_name_params_and_result_paths() {
    let e = err::<RequestMessage<ClientRequest>>(
        r#"{"id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":false}]}}"#,
    );
    assert_eq!(e.path, "params.prompt[0].type", "{e}");
    let e = err::<RequestMessage<ClientRequest>>(r#"{"id":{},"method":"logout"}"#);
    assert_eq!(e.path, "id", "{e}");
    let e = err::<RequestMessage<ClientRequest>>(r#"{"id":1,"method":7}"#);
    assert_eq!(e.path, "method", "{e}");
    let e = ResponseMessage::<AgentResponse>::decode(
        "initialize",
        r#"{"id":1,"result":{"protocolVersion":[1]}}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "result.protocolVersion", "{e}");
    let e = ResponseMessage::<AgentResponse>::decode(
        "initialize",
        r#"{"id":1,"error":{"code":"bad"}}"#,
    )
    .unwrap_err();
    assert!(e.path.starts_with("error"), "{e}");
    let e = ResponseMessage::<AgentResponse>::decode("initialize", r#"{"id":1}"#).unwrap_err();
    assert!(e.message.contains("result"), "{e}");
    let e = ResponseMessage::<AgentResponse>::decode("initialize", "[1]").unwrap_err();
    assert!(e.message.contains("object"), "{e}");
}

#[test]
fn truncated_json_is_an_error() {
    let full = r#"{"sessionId":"s","prompt":[{"type":"text","text":"hello"}]}"#;
    for end in 0..full.len() {
        let e = err::<PromptRequest>(&full[..end]);
        assert!(!e.message.is_empty());
    }
    let e = err::<PromptRequest>(&format!("{full} {{"));
    assert!(e.message.contains("trailing"), "{e}");
}

#[test]
fn deeply_nested_garbage_is_an_error_not_a_crash() {
    let depth = 100_000;
    let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(decode::<PromptRequest>(&arrays).is_err());
    let nested_meta = format!(
        r#"{{"sessionId":"s","prompt":[],"_meta":{}1{}}}"#,
        r#"{"a":"#.repeat(depth),
        "}".repeat(depth)
    );
    assert!(decode::<PromptRequest>(&nested_meta).is_err());
    let raw_input = format!(
        r#"{{"toolCallId":"c","title":"t","rawInput":{}0{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert!(decode::<ToolCall>(&raw_input).is_err());
    // Nesting within serde_json's limit is fine and kept.
    let ok = format!(
        r#"{{"sessionId":"s","prompt":[],"_meta":{}1{}}}"#,
        r#"{"a":"#.repeat(100),
        "}".repeat(100)
    );
    let p: PromptRequest = decode(&ok).unwrap();
    assert_eq!(serde_json::to_string(&p).unwrap(), ok);
}

#[test]
fn garbage_bytes_are_an_error() {
    for bad in [
        "",
        " ",
        "\u{0}",
        "{\"sessionId\":\"\\ud800\"}",
        "{\"a\":}",
        "nul",
        "{\"sessionId\":\"s\",\"prompt\":[],}",
    ] {
        assert!(decode::<PromptRequest>(bad).is_err(), "{bad:?}");
    }
}

// ---------------------------------------------------------------------------
// Mutations of the corpus

#[derive(Debug, Clone)]
enum Mutation {
    /// Remove the n-th key found walking the value.
    DeleteKey(usize),
    /// Replace the n-th value found walking the value by a value of another type.
    Swap(usize, Value),
    /// Cut the text after this fraction of its length (per mille).
    Truncate(usize),
    /// Insert a byte at a position (per mille of the length).
    InsertByte(usize, u8),
    /// Overwrite a byte at a position (per mille of the length).
    ReplaceByte(usize, u8),
}

fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        "[a-z_/]{0,8}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        Just(json!([{"type": "text"}])),
        Just(json!({"type": "_unknown", "x": 1})),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0usize..64).prop_map(Mutation::DeleteKey),
        (0usize..64, replacement()).prop_map(|(i, v)| Mutation::Swap(i, v)),
        (0usize..1000).prop_map(Mutation::Truncate),
        (0usize..1000, any::<u8>()).prop_map(|(p, b)| Mutation::InsertByte(p, b)),
        (0usize..1000, any::<u8>()).prop_map(|(p, b)| Mutation::ReplaceByte(p, b)),
    ]
}

/// Visits every object (for key deletion) or every value (for swaps), counting down `n`.
fn nth_object<'a>(value: &'a mut Value, n: &mut usize) -> Option<&'a mut Map<String, Value>> {
    let non_empty_object = value.as_object().is_some_and(|m| !m.is_empty());
    if non_empty_object {
        if *n == 0 {
            return value.as_object_mut();
        }
        *n -= 1;
    }
    match value {
        Value::Object(map) => map.values_mut().find_map(|v| nth_object(v, n)),
        Value::Array(items) => items.iter_mut().find_map(|v| nth_object(v, n)),
        _ => None,
    }
}

fn nth_value<'a>(value: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
    if *n == 0 {
        return Some(value);
    }
    *n -= 1;
    match value {
        Value::Object(map) => map.values_mut().find_map(|v| nth_value(v, n)),
        Value::Array(items) => items.iter_mut().find_map(|v| nth_value(v, n)),
        _ => None,
    }
}

fn apply(example: &Example, m: &Mutation) -> Vec<u8> {
    let mut value = example.value.clone();
    match m {
        Mutation::DeleteKey(i) => {
            let mut n = *i;
            if let Some(map) = nth_object(&mut value, &mut n) {
                let key = map.keys().nth(i % map.len()).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
            text(&value).into_bytes()
        }
        Mutation::Swap(i, v) => {
            let mut n = *i;
            if let Some(slot) = nth_value(&mut value, &mut n) {
                *slot = v.clone();
            }
            text(&value).into_bytes()
        }
        Mutation::Truncate(at) => {
            let mut bytes = text(&value).into_bytes();
            bytes.truncate(bytes.len() * at / 1000);
            bytes
        }
        Mutation::InsertByte(at, b) => {
            let mut bytes = text(&value).into_bytes();
            let pos = bytes.len() * at / 1000;
            bytes.insert(pos, *b);
            bytes
        }
        Mutation::ReplaceByte(at, b) => {
            let mut bytes = text(&value).into_bytes();
            if !bytes.is_empty() {
                let pos = (bytes.len() * at / 1000).min(bytes.len() - 1);
                bytes[pos] = *b;
            }
            bytes
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// A mutated example decodes or fails cleanly; when it decodes, the value is
    /// stable under re-encoding, and a failure names something.
    #[test]
    fn mutated_examples_never_panic(index in 0usize..10_000, m in mutation()) {
        let examples = corpus();
        let example = &examples[index % examples.len()];
        let bytes = apply(example, &m);
        // The decoders take text; invalid UTF-8 is rejected before them, so make it lossy.
        let input = String::from_utf8_lossy(&bytes);
        match roundtrip(&example.def, example.method.as_deref(), &input) {
            None => prop_assert!(false, "no Rust counterpart for {}", example.def),
            Some(Ok(_)) => {}
            Some(Err(Failure::Decode(e))) => prop_assert!(!e.message.is_empty()),
            Some(Err(Failure::Unstable(msg))) => {
                prop_assert!(false, "{}: {m:?} made an unstable value: {msg}\n  input: {input}", example.id())
            }
        }
    }
}
