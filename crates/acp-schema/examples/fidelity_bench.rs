//! What keeping unknown fields costs: decode and decode+encode of a realistic
//! stream of `session/update` notifications, without and with members the
//! schema does not know, against a floor that drops them; and the unstable
//! results (`models`, `usage`) typed (feature on) or kept raw (feature off).
//!
//! ```text
//! cargo build --release -p acp-schema --example fidelity_bench
//! taskset -c 0 target/release/examples/fidelity_bench
//! cargo build --release -p acp-schema --example fidelity_bench --features unstable
//! taskset -c 0 target/release/examples/fidelity_bench
//! ```
//!
//! The stream cycles through 100 notifications shaped like a coding turn: 70
//! `agent_message_chunk` (40 bytes of text), 10 `agent_thought_chunk`, 8
//! `tool_call` (with `rawInput`), 8 `tool_call_update` (a diff and a text
//! block), 2 `plan` and 2 `usage_update`. The *extras* stream is the same
//! with two members added to every object, as captured agents send them: a
//! vendor field (`x_vendor`: a small object) and `_meta` on the update.
//!
//! The *floor* is written here and shares no code with the crate: borrowed
//! structs with plain serde derives that read the fields the stream has and,
//! like any decoder without `extra` maps, skip every member they do not
//! know, and on encode write only what they kept. So on the extras stream
//! the floor's column is what a decoder that *drops* unknown members spends;
//! the difference to ours is the price of keeping them.
//!
//! Every timing is the median of several runs, in nanoseconds per message.
//! Nothing here asserts a speed; the one check (that decode+encode of the
//! extras stream gives the input back) is of correctness, done once before
//! timing.

use acp_schema::{AgentNotification, ContentBlock, MethodEnum, RawObject, SessionNotification};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::hint::black_box;
use std::time::Instant;

/// The floor: what a decoder that drops unknown members reads and writes.
#[allow(dead_code)] // the fields are read by the deserializer only
mod floor {
    use super::*;

    #[derive(Deserialize, Serialize)]
    pub struct Notification<'a> {
        #[serde(rename = "sessionId", borrow)]
        pub session_id: Cow<'a, str>,
        #[serde(borrow)]
        pub update: Update<'a>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct Update<'a> {
        #[serde(rename = "sessionUpdate", borrow)]
        pub kind: Cow<'a, str>,
        /// Decoded in a second step, by kind.
        #[serde(borrow, default, skip_serializing)]
        pub content: Option<&'a RawValue>,
        #[serde(
            skip_deserializing,
            skip_serializing_if = "Option::is_none",
            rename = "content"
        )]
        pub content_out: Option<Content<'a>>,
        #[serde(
            rename = "toolCallId",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub tool_call_id: Option<Cow<'a, str>>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub title: Option<Cow<'a, str>>,
        #[serde(
            rename = "kind",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub tool_kind: Option<Cow<'a, str>>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub status: Option<Cow<'a, str>>,
        #[serde(
            rename = "rawInput",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub raw_input: Option<&'a RawValue>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub locations: Option<Vec<Location<'a>>>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub entries: Option<Vec<PlanEntry<'a>>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub used: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub size: Option<u64>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub cost: Option<Cost<'a>>,
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    pub enum Content<'a> {
        Block(Block<'a>),
        Tool(Vec<ToolContent<'a>>),
    }

    #[derive(Deserialize, Serialize)]
    pub struct Block<'a> {
        #[serde(rename = "type", borrow)]
        pub kind: Cow<'a, str>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub text: Option<Cow<'a, str>>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct ToolContent<'a> {
        #[serde(rename = "type", borrow)]
        pub kind: Cow<'a, str>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub content: Option<Block<'a>>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub path: Option<Cow<'a, str>>,
        #[serde(
            rename = "oldText",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub old_text: Option<Cow<'a, str>>,
        #[serde(
            rename = "newText",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub new_text: Option<Cow<'a, str>>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct Location<'a> {
        #[serde(borrow)]
        pub path: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub line: Option<u32>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct PlanEntry<'a> {
        #[serde(borrow)]
        pub content: Cow<'a, str>,
        #[serde(borrow)]
        pub priority: Cow<'a, str>,
        #[serde(borrow)]
        pub status: Cow<'a, str>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct Cost<'a> {
        pub amount: f64,
        #[serde(borrow)]
        pub currency: Cow<'a, str>,
    }

    /// Decodes one notification, its content by the update's kind.
    pub fn decode(text: &str) -> Notification<'_> {
        let mut n: Notification<'_> = serde_json::from_str(text).expect("floor decodes");
        if let Some(raw) = n.update.content.take() {
            let tool = n.update.kind.starts_with("tool_call");
            n.update.content_out = Some(if tool {
                Content::Tool(serde_json::from_str(raw.get()).expect("floor content"))
            } else {
                Content::Block(serde_json::from_str(raw.get()).expect("floor content"))
            });
        }
        n
    }
}

const SESSION: &str = "sess-7f3a9c21";

/// Notification `i` of the plain stream.
fn notification(i: usize) -> Value {
    let update = match i % 100 {
        0..70 => json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "The failing test expects a trailing ne"}}),
        70..80 => json!({"sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "Check whether add() subtracts instead."}}),
        80..88 => json!({"sessionUpdate": "tool_call", "toolCallId": format!("toolu_{i:04}"),
            "title": "Run cargo test", "kind": "execute", "status": "pending",
            "rawInput": {"command": "cargo test -p demo", "timeout": 120}}),
        88..96 => {
            json!({"sessionUpdate": "tool_call_update", "toolCallId": format!("toolu_{i:04}"),
            "status": "completed",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "Applied 1 edit to src/lib.rs"}},
                {"type": "diff", "path": "/work/src/lib.rs",
                 "oldText": "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
                 "newText": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"}],
            "locations": [{"path": "/work/src/lib.rs", "line": 2}]})
        }
        96..98 => json!({"sessionUpdate": "plan", "entries": [
            {"content": "Read the failing test", "priority": "high", "status": "completed"},
            {"content": "Fix add()", "priority": "high", "status": "in_progress"},
            {"content": "Run the tests", "priority": "medium", "status": "pending"}]}),
        _ => json!({"sessionUpdate": "usage_update", "used": 53_000 + i as u64, "size": 200_000,
            "cost": {"amount": 0.42, "currency": "USD"}}),
    };
    json!({"sessionId": SESSION, "update": update})
}

/// Adds the members captured agents send that the schema does not know: a
/// vendor field in every object, and `_meta` on the update.
fn with_extras(mut v: Value) -> Value {
    fn walk(v: &mut Value, depth: usize) {
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    if k != "rawInput" {
                        walk(child, depth + 1);
                    }
                }
                map.insert("x_vendor".into(), json!({"seq": depth, "tag": "a1"}));
            }
            Value::Array(items) => items.iter_mut().for_each(|c| walk(c, depth + 1)),
            _ => {}
        }
    }
    walk(&mut v, 0);
    v["update"]["_meta"] = json!({"vendor": {"parentToolUseId": null, "seq": 7}});
    v
}

fn raw(v: &Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).expect("JSON")
}

/// Median nanoseconds per message of `f` over the stream, over `runs` runs.
fn time(runs: usize, passes: usize, stream: &[Box<RawValue>], mut f: impl FnMut(&RawValue)) -> f64 {
    for m in stream {
        f(m);
    }
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..passes {
                for m in stream {
                    f(m);
                }
            }
            start.elapsed().as_nanos() as f64 / (passes * stream.len()) as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[runs / 2]
}

fn ours_decode(m: &RawValue) {
    black_box(AgentNotification::decode("session/update", Some(m)).expect("decodes"));
}

fn ours_round_trip(m: &RawValue) {
    let n = AgentNotification::decode("session/update", Some(m)).expect("decodes");
    black_box(serde_json::to_string(&n).expect("encodes"));
}

fn floor_decode(m: &RawValue) {
    black_box(floor::decode(m.get()));
}

fn floor_round_trip(m: &RawValue) {
    let n = floor::decode(m.get());
    black_box(serde_json::to_string(&n).expect("floor encodes"));
}

/// A `session/new` result as claude-agent-acp and codex-acp send it: modes,
/// the model selector and config options.
fn new_session_result() -> Value {
    let models: Vec<Value> = ["default", "opus", "sonnet", "haiku"]
        .iter()
        .map(|m| json!({"modelId": m, "name": m, "description": format!("The {m} model")}))
        .collect();
    let values: Vec<Value> = ["default", "opus", "sonnet", "haiku"]
        .iter()
        .map(|m| json!({"value": m, "name": m}))
        .collect();
    json!({
        "sessionId": SESSION,
        "modes": {"currentModeId": "default", "availableModes": [
            {"id": "default", "name": "Default"}, {"id": "plan", "name": "Plan"}]},
        "models": {"currentModelId": "default", "availableModels": models},
        "configOptions": [{"id": "model", "name": "Model", "type": "select", "category": "model",
            "currentValue": "default", "options": values}]
    })
}

fn prompt_result() -> Value {
    json!({"stopReason": "end_turn", "usage": {"totalTokens": 15320, "inputTokens": 15000,
        "outputTokens": 320, "cachedReadTokens": 14200}})
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (runs, passes) = if quick { (3, 20) } else { (9, 200) };
    let features = if cfg!(feature = "unstable") {
        "unstable on"
    } else {
        "unstable off"
    };

    let plain: Vec<Value> = (0..100).map(notification).collect();
    let extras: Vec<Value> = plain.iter().cloned().map(with_extras).collect();
    let plain_raw: Vec<Box<RawValue>> = plain.iter().map(raw).collect();
    let extras_raw: Vec<Box<RawValue>> = extras.iter().map(raw).collect();
    // Nothing dropped: the extras come back (compared as JSON values, since
    // known members are written in the schema's order).
    for (m, v) in extras_raw.iter().zip(&extras) {
        let n = AgentNotification::decode("session/update", Some(m)).expect("decodes");
        let back: Value = serde_json::from_str(&serde_json::to_string(&n).unwrap()).unwrap();
        assert_eq!(&back, v, "round trip");
    }
    let bytes = |s: &[Box<RawValue>]| s.iter().map(|m| m.get().len()).sum::<usize>() / s.len();

    struct Row {
        name: String,
        bytes: usize,
        ours: f64,
        floor: Option<f64>,
    }
    let mut rows = Vec::new();
    for (name, stream) in [("plain", &plain_raw), ("extras", &extras_raw)] {
        let b = bytes(stream);
        rows.push(Row {
            name: format!("stream {name}: decode"),
            bytes: b,
            ours: time(runs, passes, stream, ours_decode),
            floor: Some(time(runs, passes, stream, floor_decode)),
        });
        rows.push(Row {
            name: format!("stream {name}: decode+encode"),
            bytes: b,
            ours: time(runs, passes, stream, ours_round_trip),
            floor: Some(time(runs, passes, stream, floor_round_trip)),
        });
    }
    let new = raw(&new_session_result());
    let new_one = std::slice::from_ref(&new);
    rows.push(Row {
        name: "session/new result (models): decode+encode".into(),
        bytes: new.get().len(),
        ours: time(runs, passes * 50, new_one, |m| {
            let r: acp_schema::NewSessionResponse = serde_json::from_str(m.get()).unwrap();
            black_box(serde_json::to_string(&r).unwrap());
        }),
        floor: None,
    });
    let prompt = raw(&prompt_result());
    let prompt_one = std::slice::from_ref(&prompt);
    rows.push(Row {
        name: "session/prompt result (usage): decode+encode".into(),
        bytes: prompt.get().len(),
        ours: time(runs, passes * 50, prompt_one, |m| {
            let r: acp_schema::PromptResponse = serde_json::from_str(m.get()).unwrap();
            black_box(serde_json::to_string(&r).unwrap());
        }),
        floor: None,
    });

    println!("fidelity_bench ({features}; median of {runs} runs; ns per message)\n");
    println!("| message | bytes | ours ns | ours MB/s | floor ns | × floor |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        let mbs = r.bytes as f64 / r.ours * 1e9 / 1e6;
        let (floor, ratio) = match r.floor {
            Some(f) => (format!("{f:.0}"), format!("{:.2}", r.ours / f)),
            None => ("–".into(), "–".into()),
        };
        println!(
            "| {} | {} | {:.0} | {mbs:.0} | {floor} | {ratio} |",
            r.name, r.bytes, r.ours
        );
    }
    println!("\n| type | size_of bytes |");
    println!("|---|---:|");
    for (name, size) in [
        ("SessionNotification", size_of::<SessionNotification>()),
        ("ContentBlock", size_of::<ContentBlock>()),
        ("TextContent", size_of::<acp_schema::TextContent>()),
        ("RawObject (an `extra`)", size_of::<RawObject>()),
        (
            "NewSessionResponse",
            size_of::<acp_schema::NewSessionResponse>(),
        ),
        ("PromptResponse", size_of::<acp_schema::PromptResponse>()),
    ] {
        println!("| {name} | {size} |");
    }
}
