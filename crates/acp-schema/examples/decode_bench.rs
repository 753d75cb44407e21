//! How long decoding takes, per message, against an independent floor.
//!
//! ```text
//! cargo run --release -p acp-schema --example decode_bench [-- --quick]
//! ```
//!
//! Each row is one kind of params object, decoded the way the `acp` runtime
//! decodes it (the routing enum's `decode(method, params)`), and the same text
//! decoded by the *floor*: minimal borrowed structs written here, with plain
//! serde derives, that share no code with the crate. The floor reads every field
//! the message has (strings borrowed where they have no escapes, raw JSON left
//! raw) and keeps nothing it is not given, so it is what any decoder of these
//! shapes must at least spend. The last row decodes and re-encodes a message
//! carrying fields the schema does not know (and `_meta`); its floor decodes and
//! re-encodes the known fields only.
//!
//! Every timing is the median of several runs of many iterations, in
//! nanoseconds per message. Nothing here asserts a speed.

use acp_schema::{AgentNotification, ClientRequest, MethodEnum};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::hint::black_box;
use std::time::Instant;

/// The floor: borrowed structs covering exactly the fields the rows use.
// The fields are only read by the deserializer; that is the point.
#[allow(dead_code)]
mod floor {
    use super::*;

    /// `session/update` params; `C` is the update's `content` (one block for a
    /// chunk, a list for a tool call: the floor knows which it reads).
    #[derive(Deserialize, Serialize)]
    #[serde(bound(deserialize = "'de: 'a, C: Deserialize<'de>"))]
    pub struct Notification<'a, C> {
        #[serde(rename = "sessionId", borrow)]
        pub session_id: Cow<'a, str>,
        pub update: Update<'a, C>,
        #[serde(
            rename = "_meta",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub meta: Option<&'a RawValue>,
    }

    /// Every field of the update kinds the rows send, all optional but the tag.
    #[derive(Deserialize, Serialize)]
    #[serde(bound(deserialize = "'de: 'a, C: Deserialize<'de>"))]
    pub struct Update<'a, C> {
        #[serde(rename = "sessionUpdate", borrow)]
        pub kind: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub content: Option<C>,
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
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub locations: Option<Vec<Location<'a>>>,
        #[serde(
            rename = "rawInput",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub raw_input: Option<&'a RawValue>,
        #[serde(
            rename = "rawOutput",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub raw_output: Option<&'a RawValue>,
        #[serde(
            rename = "_meta",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub meta: Option<&'a RawValue>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct Block<'a> {
        #[serde(rename = "type", borrow)]
        pub kind: Cow<'a, str>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub text: Option<Cow<'a, str>>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub name: Option<Cow<'a, str>>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        pub uri: Option<Cow<'a, str>>,
        #[serde(
            rename = "mimeType",
            borrow,
            default,
            skip_serializing_if = "Option::is_none"
        )]
        pub mime_type: Option<Cow<'a, str>>,
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

    #[derive(Deserialize)]
    pub struct Prompt<'a> {
        #[serde(rename = "sessionId", borrow)]
        pub session_id: Cow<'a, str>,
        #[serde(borrow)]
        pub prompt: Vec<Block<'a>>,
    }
}

const SESSION: &str = "sess-7f3a9c21";

fn chunk_line() -> String {
    // 40 bytes of text, as a streaming model emits them.
    let text = "The failing test expects a trailing new";
    assert_eq!(text.len() + 1, 40);
    format!(
        r#"{{"sessionId":"{SESSION}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}e"}}}}}}"#
    )
}

fn tool_call_line() -> String {
    format!(
        concat!(
            r#"{{"sessionId":"{}","update":{{"sessionUpdate":"tool_call_update","toolCallId":"toolu_01","#,
            r#""status":"completed","title":"Edit src/lib.rs","content":[{{"type":"content","content":"#,
            r#"{{"type":"text","text":"Applied 1 edit to src/lib.rs"}}}},{{"type":"diff","path":"/work/src/lib.rs","#,
            r#""oldText":"pub fn add(a: i32, b: i32) -> i32 {{\n    a - b\n}}\n","#,
            r#""newText":"pub fn add(a: i32, b: i32) -> i32 {{\n    a + b\n}}\n"}}],"#,
            r#""locations":[{{"path":"/work/src/lib.rs","line":2}}],"rawOutput":{{"ok":true,"bytes":47}}}}}}"#
        ),
        SESSION
    )
}

fn prompt_line() -> String {
    format!(
        concat!(
            r#"{{"sessionId":"{}","prompt":[{{"type":"text","text":"Fix the failing test in "#,
            r#"src/lib.rs and tell me what was wrong."}},{{"type":"resource_link","name":"lib.rs","#,
            r#""uri":"file:///work/src/lib.rs","mimeType":"text/x-rust"}}]}}"#
        ),
        SESSION
    )
}

fn large_line() -> String {
    // About 1 MiB of text with a newline (an escape) every 80 bytes.
    let mut text = String::with_capacity(1 << 20);
    while text.len() < (1 << 20) - 100 {
        text.push_str("a line of generated source code that goes on for a while, then breaks ....");
        text.push_str("\\n");
    }
    format!(
        r#"{{"sessionId":"{SESSION}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}"#
    )
}

fn unknown_fields_line() -> String {
    format!(
        concat!(
            r#"{{"sessionId":"{}","update":{{"sessionUpdate":"tool_call","toolCallId":"toolu_02","#,
            r#""title":"Run cargo test","kind":"execute","status":"pending","#,
            r#""content":[{{"type":"content","content":{{"type":"text","text":"cargo test","x_render":"mono"}}}}],"#,
            r#""rawInput":{{"command":"cargo test","timeout":120}},"#,
            r#""_meta":{{"claudeCode":{{"toolName":"Bash","parent":null}}}},"x_vendor_rank":3}},"x_trace":"a1b2"}}"#
        ),
        SESSION
    )
}

/// Median nanoseconds per call of `f`, over `runs` runs of `iters` calls.
fn time(runs: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..iters.div_ceil(10) {
        f();
    }
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[runs / 2]
}

/// The params as the runtime holds them: raw JSON cut out of the envelope.
fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_string()).expect("the bench lines are JSON")
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (runs, scale) = if quick { (3, 1) } else { (9, 5) };

    let chunk = raw(&chunk_line());
    let tool = raw(&tool_call_line());
    let prompt = raw(&prompt_line());
    let large = raw(&large_line());
    let unknown = raw(&unknown_fields_line());

    let notif = |params: &RawValue| {
        let n = AgentNotification::decode("session/update", Some(params)).expect("decodes");
        black_box(n);
    };
    type Chunk<'a> = floor::Notification<'a, floor::Block<'a>>;
    type Tool<'a> = floor::Notification<'a, Vec<floor::ToolContent<'a>>>;
    let floor_chunk = |params: &RawValue| {
        let n: Chunk<'_> = serde_json::from_str(params.get()).expect("floor decodes");
        black_box(n);
    };

    struct Row {
        name: &'static str,
        bytes: usize,
        ours: f64,
        floor: f64,
    }
    let mut rows = Vec::new();
    let mut row = |name, bytes, iters: usize, ours: &mut dyn FnMut(), floor: &mut dyn FnMut()| {
        let ours = time(runs, iters * scale, ours);
        let floor = time(runs, iters * scale, floor);
        rows.push(Row {
            name,
            bytes,
            ours,
            floor,
        });
    };

    row(
        "session/update agent_message_chunk (40 B text)",
        chunk.get().len(),
        40_000,
        &mut || notif(&chunk),
        &mut || floor_chunk(&chunk),
    );
    row(
        "session/update tool_call_update with content",
        tool.get().len(),
        10_000,
        &mut || notif(&tool),
        &mut || {
            let n: Tool<'_> = serde_json::from_str(tool.get()).expect("floor decodes");
            black_box(n);
        },
    );
    row(
        "session/prompt request",
        prompt.get().len(),
        20_000,
        &mut || {
            let r = ClientRequest::decode("session/prompt", Some(&prompt)).expect("decodes");
            black_box(r);
        },
        &mut || {
            let p: floor::Prompt<'_> = serde_json::from_str(prompt.get()).expect("floor decodes");
            black_box(p);
        },
    );
    row(
        "session/update 1 MiB agent_message_chunk",
        large.get().len(),
        20,
        &mut || notif(&large),
        &mut || floor_chunk(&large),
    );
    row(
        "decode+encode tool_call with unknown fields",
        unknown.get().len(),
        10_000,
        &mut || {
            let n = AgentNotification::decode("session/update", Some(&unknown)).expect("decodes");
            black_box(serde_json::to_string(&n).expect("encodes"));
        },
        &mut || {
            let n: Tool<'_> = serde_json::from_str(unknown.get()).expect("floor decodes");
            black_box(serde_json::to_string(&n).expect("floor encodes"));
        },
    );

    println!(
        "{:<48} {:>9} {:>12} {:>12} {:>7}",
        "message", "bytes", "ours ns", "floor ns", "ratio"
    );
    for r in &rows {
        println!(
            "{:<48} {:>9} {:>12.0} {:>12.0} {:>6.2}x",
            r.name,
            r.bytes,
            r.ours,
            r.floor,
            r.ours / r.floor
        );
    }
    println!("(median of {runs} runs; ns per message; ratio = ours / floor)");
}
