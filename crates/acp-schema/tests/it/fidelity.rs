//! Nothing is lost on the way through the types: `_meta` and unknown variants
//! come back byte for byte, members the types do not know are kept and written
//! back, a union's tag may come anywhere in its object, and the field paths of
//! errors stay the same whichever way the object was read.

use acp_schema::{
    AgentNotification, ClientRequest, ContentBlock, Error, Meta, MethodEnum, PromptRequest,
    RawJson, RawObject, RequestPermissionOutcome, RequestPermissionResponse, SessionNotification,
    SessionUpdate, ToolCallContent, ToolCallUpdate, decode, decode_value,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn encode<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("serialises")
}

/// Decodes `text` as `T` and asserts it is written back exactly.
fn exact<T>(text: &str) -> T
where
    T: serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug + PartialEq,
{
    let value: T = decode(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(encode(&value), text);
    let again: T = decode(&encode(&value)).expect("the output decodes");
    assert_eq!(again, value);
    value
}

#[test]
fn meta_comes_back_byte_for_byte() {
    // Number spellings, escapes, key order, nesting and whitespace are all kept.
    let text = r#"{"sessionId":"s","prompt":[],"_meta":{ "z" : 1.50, "a":[1e3,-0,0.1e-2],"\u00e9":"caf\u00e9 \"q\"","n":{"deep":[{"x":null}]} }}"#;
    let req: PromptRequest = exact(text);
    let meta = req.meta.as_ref().expect("kept");
    assert_eq!(meta.keys(), ["z", "a", "é", "n"]);
    assert_eq!(meta.get("z").map(RawValue::get), Some("1.50"));
    assert_eq!(
        meta.get_as::<Vec<f64>>("a"),
        Some(vec![1000.0, -0.0, 0.001])
    );

    // `_meta` inside a union variant, and on a session update deep down.
    let text = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","_meta":{"b":2,"a":1}},"_meta":{"trace":[3,2,1]}},"_meta":{"top":true}}"#;
    let n: SessionNotification = exact(text);
    let SessionUpdate::AgentMessageChunk(chunk) = &n.update else {
        panic!("{n:?}")
    };
    let ContentBlock::Text(t) = &chunk.content else {
        panic!("{chunk:?}")
    };
    assert_eq!(
        t.meta.as_ref().map(|m| m.as_raw().get()),
        Some(r#"{"b":2,"a":1}"#)
    );

    // Not an object: dropped, as the schema's default-on-error says.
    let p: PromptRequest = decode(r#"{"sessionId":"s","prompt":[],"_meta":[1]}"#).unwrap();
    assert_eq!(p.meta, None);
}

#[test]
fn meta_can_be_read_and_edited() {
    let mut meta = Meta::new();
    meta.insert("b", 1);
    meta.insert("a", json!({"x": [true]}));
    meta.insert("b", "two");
    assert_eq!(encode(&meta), r#"{"b":"two","a":{"x":[true]}}"#);
    assert_eq!(meta.get_as::<String>("b").as_deref(), Some("two"));
    assert!(meta.contains_key("a") && !meta.contains_key("c"));
    let from_map: Meta = serde_json::from_str::<serde_json::Map<String, Value>>(r#"{"k":1}"#)
        .unwrap()
        .into();
    assert_eq!(encode(&from_map), r#"{"k":1}"#);
    // Equality is by content, not by spelling.
    assert_eq!(
        Meta::parse(r#"{"a":1,"b":[2]}"#).unwrap(),
        Meta::parse(r#"{ "b": [2], "a": 1 }"#).unwrap()
    );
    assert!(Meta::parse("[]").is_err());
}

#[test]
fn unknown_variants_come_back_byte_for_byte() {
    for text in [
        // An unknown session update, its members in any order, odd numbers kept.
        r#"{"sessionId":"s","update":{"sessionUpdate":"_acme/progress","pct":40.0,"eta":1e2,"nested":{"z":1,"a":[null,{}]}}}"#,
        // The tag in the middle and at the end.
        r#"{"sessionId":"s","update":{"pct":40,"sessionUpdate":"_acme/progress","z":[]}}"#,
        r#"{"sessionId":"s","update":{"pct":40,"z":{"k":"v"},"sessionUpdate":"_acme/progress"}}"#,
    ] {
        let n: SessionNotification = exact(text);
        assert!(matches!(n.update, SessionUpdate::Other(_)), "{text}");
        assert_eq!(n.update.kind(), "_acme/progress");
    }
    // An unknown content block inside a tool call, and an unknown outcome.
    let text = r#"{"toolCallId":"c","content":[{"type":"_hologram","frames":[1,2],"fps":24.0}]}"#;
    let up: ToolCallUpdate = exact(text);
    assert!(matches!(
        up.content.as_deref(),
        Some([ToolCallContent::Other(_)])
    ));
    let r: RequestPermissionResponse =
        exact(r#"{"outcome":{"when":"later","outcome":"_deferred"}}"#);
    let RequestPermissionOutcome::Other(obj) = &r.outcome else {
        panic!("{r:?}")
    };
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["when", "outcome"]);
}

#[test]
fn a_tag_that_is_not_first_decodes_the_same() {
    let first = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m"}}"#;
    for later in [
        r#"{"sessionId":"s","update":{"content":{"type":"text","text":"hi"},"sessionUpdate":"agent_message_chunk","messageId":"m"}}"#,
        r#"{"sessionId":"s","update":{"messageId":"m","content":{"text":"hi","type":"text"},"sessionUpdate":"agent_message_chunk"}}"#,
        r#"{"update":{"content":{"text":"hi","type":"text"},"messageId":"m","sessionUpdate":"agent_message_chunk"},"sessionId":"s"}"#,
    ] {
        let a: SessionNotification = decode(first).unwrap();
        let b: SessionNotification = decode(later).unwrap_or_else(|e| panic!("{later}: {e}"));
        assert_eq!(a, b, "{later}");
        // Written back with the tag first, as every encoder we know does.
        assert_eq!(encode(&b), first);
    }
    // A `null` tag counts as absent (so a later tag is still found), and the
    // tag of a union without a default is required.
    let n: SessionNotification = decode(
        r#"{"sessionId":"s","update":{"content":{"type":"text","text":"x"},"sessionUpdate":"user_message_chunk"}}"#,
    )
    .unwrap();
    assert_eq!(n.update, SessionUpdate::user_message("x"));
    let e = decode::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":null,"content":{"type":"text","text":"x"}}}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "update", "{e}");
    assert!(e.message.contains("sessionUpdate"), "{e}");
}

#[test]
fn errors_name_the_same_path_whether_the_tag_came_first_or_not() {
    for (text, path) in [
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}}"#,
            "update.content.text",
        ),
        (
            r#"{"sessionId":"s","update":{"content":{"text":7,"type":"text"},"sessionUpdate":"agent_message_chunk"}}"#,
            "update.content.text",
        ),
        (
            r#"{"sessionId":"s","update":{"content":{"type":"text","text":[1]},"sessionUpdate":"agent_message_chunk"}}"#,
            "update.content.text",
        ),
        (
            r#"{"sessionId":"s","update":{"title":5,"toolCallId":"c","sessionUpdate":"tool_call"}}"#,
            "update.title",
        ),
        (
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[],"locations":[],"_meta":{}},"x":1,"sessionId":"again"}"#,
            "sessionId",
        ),
        (
            r#"{"sessionId":"s","update":{"content":{"type":5},"sessionUpdate":"agent_message_chunk"}}"#,
            "update.content.type",
        ),
    ] {
        let e = decode::<SessionNotification>(text).unwrap_err();
        assert_eq!(e.path, path, "{text}: {e}");
    }
    let e = decode::<PromptRequest>(
        r#"{"prompt":[{"text":"a","type":"text"},{"resource":{"uri":"file:///a","text":7},"type":"resource"}],"sessionId":"s"}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "prompt[1].resource.text", "{e}");
}

#[test]
fn unknown_members_are_kept_and_written_back() {
    let text = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","x_rank":3,"content":[{"type":"content","content":{"type":"text","text":"ok","x_render":"mono"},"x_item":{"a":1}}],"locations":[{"path":"/a","x_col":4}],"rawInput":{"z":1,"a":2}},"x_trace":"t1"}"#;
    let n: SessionNotification = decode(text).unwrap();
    assert_eq!(
        n.extra.get("x_trace").map(RawJson::get),
        Some(r#""t1""#),
        "top-level member"
    );
    let SessionUpdate::ToolCallUpdate(up) = &n.update else {
        panic!("{n:?}")
    };
    assert_eq!(up.extra.get_as::<u32>("x_rank").unwrap().unwrap(), 3);
    let Some([ToolCallContent::Content(c)]) = up.content.as_deref() else {
        panic!("{up:?}")
    };
    assert_eq!(c.extra.get("x_item").map(RawJson::get), Some(r#"{"a":1}"#));
    let ContentBlock::Text(t) = &c.content else {
        panic!("{c:?}")
    };
    assert_eq!(t.extra.get_str("x_render").as_deref(), Some("mono"));
    // rawInput keeps its member order; unknown members follow the known ones.
    assert_eq!(
        encode(&n),
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":[{"type":"content","content":{"type":"text","text":"ok","x_render":"mono"},"x_item":{"a":1}}],"locations":[{"path":"/a","x_col":4}],"rawInput":{"z":1,"a":2},"x_rank":3},"x_trace":"t1"}"#
    );
    let back: Value = serde_json::from_str(&encode(&n)).unwrap();
    let input: Value = serde_json::from_str(text).unwrap();
    assert_eq!(back, input, "the same JSON, member order aside");
}

#[test]
fn unknown_members_can_be_set() {
    let mut req = PromptRequest::new("s", vec![ContentBlock::from("hi")]);
    req.extra.insert("x_client", "acme");
    req.extra
        .insert_raw("x_raw", RawJson::parse(r#"{"kept": 1.50}"#).unwrap());
    assert_eq!(
        encode(&req),
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"hi"}],"x_client":"acme","x_raw":{"kept": 1.50}}"#
    );
    req.extra.insert("x_client", "other");
    assert_eq!(
        req.extra.remove("x_raw").map(|r| r.to_value()),
        Some(json!({"kept": 1.5}))
    );
    assert_eq!(
        encode(&req),
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"hi"}],"x_client":"other"}"#
    );
    let obj: RawObject = [("k", json!(1))].into_iter().collect();
    assert_eq!(encode(&obj), r#"{"k":1}"#);
}

#[test]
fn a_known_member_twice_is_an_error() {
    let e =
        decode::<PromptRequest>(r#"{"sessionId":"a","prompt":[],"sessionId":"b"}"#).unwrap_err();
    assert!(e.message.contains("duplicate field `sessionId`"), "{e}");
}

#[test]
fn a_notification_s_update_and_content_decode_like_any_required_member() {
    // `update` and a chunk's `content` are decoded in place (the notifications
    // that arrive by the thousand); what they accept and refuse is unchanged.
    let e = decode::<SessionNotification>(r#"{"sessionId":"s","update":7}"#).unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.message.as_str()),
        ("update", "invalid type: integer `7`, expected a map")
    );
    let e = decode::<SessionNotification>(r#"{"sessionId":"s"}"#).unwrap_err();
    assert_eq!(e.message, "missing field `update`");
    let chunk = r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}"#;
    let e = decode::<SessionNotification>(&format!(
        r#"{{"sessionId":"s","update":{chunk},"update":{chunk}}}"#
    ))
    .unwrap_err();
    assert!(e.message.contains("duplicate field `update`"), "{e}");
    let e = decode::<SessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":[1]}}"#,
    )
    .unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.message.as_str()),
        ("update.content", "invalid type: sequence, expected a map")
    );
    // Before the union's tag, the members are replayed, in place too.
    let n: SessionNotification = decode(
        r#"{"update":{"content":{"text":"x","type":"text"},"sessionUpdate":"agent_message_chunk"},"sessionId":"s"}"#,
    )
    .unwrap();
    assert_eq!(n.update, SessionUpdate::agent_message("x"));
}

#[test]
fn tolerance_where_the_schema_says_so() {
    // A malformed optional member falls back (x-deserialize-default-on-error)…
    let n: SessionNotification = decode(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":[{"priority":1}]},"messageId":7}}"#,
    )
    .unwrap();
    assert_eq!(n.update, SessionUpdate::agent_message("x"));
    // …bad list items are dropped (x-deserialize-skip-invalid-items)…
    let up: ToolCallUpdate = decode(
        r#"{"toolCallId":"c","content":[{"type":"diff","path":"/a"},{"type":"content","content":{"type":"text","text":"ok"}},7],"locations":[{"line":1},{"path":"/b"}]}"#,
    )
    .unwrap();
    assert_eq!(up.content.as_ref().map(Vec::len), Some(1));
    assert_eq!(up.locations.as_ref().map(Vec::len), Some(1));
    // …and an unknown update kind does not drop the notification.
    let raw = RawValue::from_string(
        r#"{"sessionId":"s","update":{"sessionUpdate":"plan_v9","steps":[]}}"#.to_string(),
    )
    .unwrap();
    let n = AgentNotification::decode("session/update", Some(&raw)).unwrap();
    assert_eq!(encode(&n), raw.get());
}

#[test]
fn values_decode_too() {
    // `decode_value` reads from a parsed `Value` (raw members included).
    let v = json!({"sessionId": "s", "prompt": [{"type": "text", "text": "a", "x": [1]}], "_meta": {"k": 1}});
    let p: PromptRequest = decode_value(v.clone()).unwrap();
    assert_eq!(p.meta.as_ref().and_then(|m| m.get_as::<u8>("k")), Some(1));
    assert_eq!(serde_json::to_value(&p).unwrap(), v);
    let e = decode_value::<PromptRequest>(json!({"sessionId": "s", "prompt": [{"type": "text"}]}))
        .unwrap_err();
    assert_eq!(e.path, "prompt[0]", "{e}");
}

#[test]
fn error_data_is_kept_as_sent() {
    let e: Error = exact(r#"{"code":-32602,"message":"Invalid params","data":{"z":1,"a":[2.50]}}"#);
    assert_eq!(
        e.data.map(|d| d.to_value()),
        Some(json!({"a": [2.5], "z": 1}))
    );
    let from_decode: Error = decode::<PromptRequest>("{}").unwrap_err().into();
    assert_eq!(
        encode(&from_decode),
        r#"{"code":-32602,"message":"Invalid params","data":{"path":"","message":"missing field `sessionId`"}}"#
    );
}

#[test]
fn the_runtime_decode_path_keeps_everything() {
    let text = r#"{"sessionId":"s","prompt":[{"type":"resource_link","name":"a","uri":"file:///a","x":{"y":[]}}],"x_top":null}"#;
    let raw = RawValue::from_string(text.to_string()).unwrap();
    let req = ClientRequest::decode("session/prompt", Some(&raw)).unwrap();
    assert_eq!(encode(&req), text);
}

/// `output` is `input` again: the same members with the same values, except
/// that a member sent as `null` may be left out (an absent optional field and
/// a `null` one mean the same), and so may an empty list, where the type reads
/// absent as empty; the paths of those go to `empty_dropped`.
fn same_json(
    input: &Value,
    output: &Value,
    at: &str,
    empty_dropped: &mut Vec<String>,
) -> Result<(), String> {
    match (input, output) {
        (Value::Object(i), Value::Object(o)) => {
            for key in o.keys() {
                if !i.contains_key(key) {
                    return Err(format!("{at}.{key}: added"));
                }
            }
            for (key, v) in i {
                match o.get(key) {
                    Some(w) => same_json(v, w, &format!("{at}.{key}"), empty_dropped)?,
                    None if v.is_null() => {}
                    None if v.as_array().is_some_and(Vec::is_empty) => {
                        empty_dropped.push(format!("{at}.{key}"));
                    }
                    None => return Err(format!("{at}.{key}: dropped")),
                }
            }
            Ok(())
        }
        (Value::Array(i), Value::Array(o)) if i.len() == o.len() => i
            .iter()
            .zip(o)
            .enumerate()
            .try_for_each(|(n, (v, w))| same_json(v, w, &format!("{at}[{n}]"), empty_dropped)),
        (i, o) if i == o => Ok(()),
        (i, o) => Err(format!("{at}: {i} became {o}")),
    }
}

/// Decodes one line of `tests/agents/messages.jsonl` the way the runtime does
/// (the routing enums, by method) and re-encodes it.
fn agent_message_roundtrip(method: &str, kind: &str, value: &RawValue) -> Result<String, String> {
    use acp_schema::{
        AgentRequest, AgentResponse, ClientNotification, ClientResponse, MethodKind, Side,
        method_info,
    };
    let info = method_info(method).ok_or_else(|| format!("unknown method `{method}`"))?;
    let v = Some(value);
    let out = match (kind, info.kind, info.handled_by) {
        ("params", MethodKind::Request, Side::Agent) => {
            ClientRequest::decode(method, v).map(|x| encode(&x))
        }
        ("params", MethodKind::Request, _) => AgentRequest::decode(method, v).map(|x| encode(&x)),
        ("params", MethodKind::Notification, Side::Agent) => {
            ClientNotification::decode(method, v).map(|x| encode(&x))
        }
        ("params", MethodKind::Notification, _) => {
            AgentNotification::decode(method, v).map(|x| encode(&x))
        }
        ("result", MethodKind::Request, Side::Agent) => {
            AgentResponse::decode(method, v).map(|x| encode(&x))
        }
        ("result", MethodKind::Request, _) => ClientResponse::decode(method, v).map(|x| encode(&x)),
        _ => return Err(format!("{method}: no {kind}")),
    };
    out.map_err(|e| e.to_string())
}

/// Messages shaped like those of the real agents the issue captured (written
/// here, not copied): every one comes back as the same JSON, whichever
/// `unstable-*` features this build has. Lines of methods this build does not
/// know (an unstable method without its feature) are skipped, and counted.
#[test]
fn agent_shaped_messages_come_back_as_the_same_json() {
    #[derive(serde::Deserialize)]
    struct Line {
        agent: String,
        method: String,
        kind: String,
        value: Box<RawValue>,
    }
    let text = include_str!("../agents/messages.jsonl");
    let (mut checked, mut unknown, mut problems) = (0, 0, Vec::new());
    let mut empty_dropped = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line: Line =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let label = format!(
            "line {} ({} {} {})",
            n + 1,
            line.agent,
            line.method,
            line.kind
        );
        if acp_schema::method_info(&line.method).is_none() {
            unknown += 1;
            continue;
        }
        match agent_message_roundtrip(&line.method, &line.kind, &line.value) {
            Ok(out) => {
                checked += 1;
                let input: Value = serde_json::from_str(line.value.get()).unwrap();
                let output: Value = serde_json::from_str(&out).unwrap();
                let mut dropped = Vec::new();
                if let Err(e) = same_json(&input, &output, "", &mut dropped) {
                    problems.push(format!(
                        "{label}: {e}\n    in:  {}\n    out: {out}",
                        line.value.get()
                    ));
                }
                empty_dropped.extend(dropped.into_iter().map(|p| format!("{} {p}", n + 1)));
            }
            Err(e) => problems.push(format!("{label}: {e}")),
        }
    }
    // The one normalisation: a tool call's empty `content` and `locations`
    // lists are left out (absent reads as empty).
    assert_eq!(
        empty_dropped,
        ["13 .update.content", "13 .update.locations"]
    );
    let all = text.lines().count();
    eprintln!("{checked} of {all} agent-shaped messages checked ({unknown} of unknown methods)");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Only the unstable methods can be unknown, and only without their feature.
    let expected_unknown = usize::from(!cfg!(feature = "unstable-session-fork"))
        + usize::from(!cfg!(feature = "unstable-providers"));
    assert_eq!(unknown, expected_unknown);
}

/// With the features on, the unstable members of those messages are typed;
/// with them off, they wait in `extra`, raw.
#[test]
fn unstable_members_are_typed_with_their_feature_and_kept_without() {
    use acp_schema::{InitializeResponse, NewSessionResponse, PromptResponse};
    let text = include_str!("../agents/messages.jsonl");
    let value_of = |n: usize| -> String {
        let line: Value = serde_json::from_str(text.lines().nth(n).unwrap()).unwrap();
        line["value"].to_string()
    };
    let init: InitializeResponse = decode(&value_of(0)).unwrap();
    let caps = &init.agent_capabilities;
    #[cfg(feature = "unstable-providers")]
    assert!(caps.providers.is_some() && !caps.extra.contains_key("providers"));
    #[cfg(not(feature = "unstable-providers"))]
    assert_eq!(caps.extra.get("providers").map(RawJson::get), Some("{}"));
    #[cfg(feature = "unstable-mcp-over-acp")]
    assert_eq!(caps.mcp_capabilities.acp, Some(true));
    #[cfg(not(feature = "unstable-mcp-over-acp"))]
    assert_eq!(
        caps.mcp_capabilities.extra.get("acp").map(RawJson::get),
        Some("true")
    );
    let sc = &caps.session_capabilities;
    #[cfg(feature = "unstable-session-fork")]
    assert!(sc.fork.is_some());
    #[cfg(feature = "unstable-system-prompt")]
    assert!(sc.system_prompt.as_ref().is_some_and(|s| s.mode.is_some()));
    // `subagents` under sessionCapabilities is no schema's: kept raw always.
    assert_eq!(sc.extra.get("subagents").map(RawJson::get), Some("{}"));
    let unknown: Vec<&str> = sc.extra.keys().collect();
    let mut expected = Vec::new();
    if !cfg!(feature = "unstable-session-fork") {
        expected.push("fork");
    }
    if !cfg!(feature = "unstable-session-title") {
        expected.push("title");
    }
    if !cfg!(feature = "unstable-system-prompt") {
        expected.push("systemPrompt");
    }
    expected.push("subagents");
    let mut unknown_sorted = unknown.clone();
    unknown_sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(unknown_sorted, expected);

    let new: NewSessionResponse = decode(&value_of(3)).unwrap();
    #[cfg(feature = "unstable-session-model")]
    {
        let models = new.models.as_ref().expect("typed");
        assert_eq!(models.current_model_id.as_str(), "default");
        assert_eq!(models.available_models.len(), 2);
    }
    #[cfg(not(feature = "unstable-session-model"))]
    assert!(new.extra.contains_key("models"));
    let done: PromptResponse = decode(&value_of(7)).unwrap();
    #[cfg(feature = "unstable-session-usage")]
    assert_eq!(
        done.usage.as_ref().map(|u| u.thought_tokens),
        Some(Some(640))
    );
    #[cfg(not(feature = "unstable-session-usage"))]
    assert!(done.extra.contains_key("usage"));
}
