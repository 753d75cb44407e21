//! The public v1 → v2 translations (`acp::map`, feature `v2`): exact JSON in,
//! exact JSON out, for each function a program serving v2 from v1 types uses.

use acp::map;
use acp::schema::{self as v1, v2};

fn v1<T: serde::de::DeserializeOwned>(json: &str) -> T {
    serde_json::from_str(json).unwrap()
}

fn wire(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn a_new_file_is_added_with_dev_null_and_an_edit_modifies_without_prefixes() {
    let added: v1::ToolCallContent =
        v1(r#"{"type":"diff","path":"/w/a.txt","oldText":null,"newText":"x\n"}"#);
    assert_eq!(
        wire(&map::tool_call_content_to_v2(added)),
        r#"{"type":"diff","changes":[{"fileType":"text","operation":"add","path":"/w/a.txt"}],"patch":{"format":"git_patch","text":"diff --git /w/a.txt /w/a.txt\nnew file mode 100644\n--- /dev/null\n+++ /w/a.txt\n@@ -0,0 +1 @@\n+x\n"}}"#
    );
    let modified: v1::ToolCallContent =
        v1(r#"{"type":"diff","path":"/w/a.txt","oldText":"x\n","newText":"y\n","_meta":{"k":1}}"#);
    assert_eq!(
        wire(&map::tool_call_content_to_v2(modified)),
        r#"{"type":"diff","changes":[{"fileType":"text","operation":"modify","path":"/w/a.txt"}],"patch":{"format":"git_patch","text":"diff --git /w/a.txt /w/a.txt\n--- /w/a.txt\n+++ /w/a.txt\n@@ -1 +1 @@\n-x\n+y\n"},"_meta":{"k":1}}"#
    );
}

#[test]
fn a_tool_call_and_its_update_become_upserts_keeping_meta_and_unknown_fields() {
    let call: v1::ToolCall = v1(
        r#"{"toolCallId":"c1","title":"Read","kind":"read","status":"pending","content":[{"type":"content","content":{"type":"text","text":"hi"},"x-c":true}],"rawInput":{"p":1},"_meta":{"m":2},"x-call":"kept"}"#,
    );
    assert_eq!(
        wire(&map::tool_call_to_v2(call)),
        r#"{"toolCallId":"c1","title":"Read","kind":"read","status":"pending","content":[{"type":"content","content":{"type":"text","text":"hi"},"x-c":true}],"rawInput":{"p":1},"_meta":{"m":2},"x-call":"kept"}"#
    );
    let update: v1::ToolCallUpdate = v1(r#"{"toolCallId":"c1","status":"completed","x-u":1}"#);
    assert_eq!(
        wire(&map::tool_call_update_to_v2(update)),
        r#"{"toolCallId":"c1","status":"completed","x-u":1}"#
    );
}

#[test]
fn plans_commands_and_config_options_take_v2_shapes() {
    let plan: v1::Plan = v1(
        r#"{"entries":[{"content":"Read","priority":"high","status":"in_progress","_meta":{"e":1}}],"_meta":{"p":1}}"#,
    );
    assert_eq!(
        wire(&map::plan_to_v2(plan)),
        r#"{"plan":{"type":"items","planId":"plan","entries":[{"content":"Read","priority":"high","status":"in_progress","_meta":{"e":1}}]},"_meta":{"p":1}}"#
    );
    let command: v1::AvailableCommand =
        v1(r#"{"name":"web","description":"Search","input":{"hint":"query"}}"#);
    assert_eq!(
        wire(&map::command_to_v2(command)),
        r#"{"type":"command","name":"web","description":"Search","input":{"type":"text","hint":"query"}}"#
    );
    let option: v1::SessionConfigOption = v1(
        r#"{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask","options":[{"group":"g","name":"G","options":[{"value":"ask","name":"Ask"}]}]}"#,
    );
    // `id` is `configId`, a group's `group` its `groupId`.
    assert_eq!(
        wire(&map::config_option_to_v2(option)),
        r#"{"configId":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask","options":[{"groupId":"g","name":"G","options":[{"value":"ask","name":"Ask"}]}]}"#
    );
}

#[test]
fn content_blocks_go_both_ways() {
    let link: v1::ContentBlock =
        v1(r#"{"type":"resource_link","name":"a","uri":"file:///a","size":-1,"x-l":1}"#);
    let v2_link = map::block_to_v2(link);
    // v2 has no negative size: it is dropped; the unknown field is kept.
    assert_eq!(
        wire(&v2_link),
        r#"{"type":"resource_link","name":"a","uri":"file:///a","x-l":1}"#
    );
    let back: v2::ContentBlock = serde_json::from_str(
        r#"{"type":"resource_link","name":"a","uri":"file:///a","size":3,"icons":[{"src":"i.png"}]}"#,
    )
    .unwrap();
    // v1 has no icons.
    assert_eq!(
        wire(&map::block_to_v1(back)),
        r#"{"type":"resource_link","name":"a","size":3,"uri":"file:///a"}"#
    );
}

#[test]
fn a_v2_session_request_and_its_mcp_servers_become_v1s() {
    let req: v2::NewSessionRequest = serde_json::from_str(
        r#"{"cwd":"/w","additionalDirectories":["/d"],"mcpServers":[{"type":"stdio","name":"s","command":"/bin/s"},{"type":"http","name":"h","url":"http://127.0.0.1:1/mcp"}]}"#,
    )
    .unwrap();
    // v1 requires the lists v2 leaves out, and a stdio server has no `type`.
    assert_eq!(
        wire(&map::new_session_to_v1(req)),
        r#"{"cwd":"/w","additionalDirectories":["/d"],"mcpServers":[{"name":"s","command":"/bin/s","args":[],"env":[]},{"type":"http","name":"h","url":"http://127.0.0.1:1/mcp","headers":[]}]}"#
    );
    // A server of a type v2 does not know is passed on as it is.
    let custom: v2::McpServer =
        serde_json::from_str(r#"{"type":"_custom","name":"c","x":1}"#).unwrap();
    assert_eq!(
        wire(&map::mcp_server_to_v1(custom)),
        r#"{"type":"_custom","name":"c","x":1}"#
    );
}

#[test]
fn a_listed_session_keeps_its_directories() {
    let info: v1::SessionInfo = v1(
        r#"{"sessionId":"s1","cwd":"/w","additionalDirectories":["/d"],"title":"T","updatedAt":"2026-12-06T00:00:00Z"}"#,
    );
    assert_eq!(
        wire(&map::session_info_to_v2(info)),
        r#"{"sessionId":"s1","cwd":"/w","additionalDirectories":["/d"],"title":"T","updatedAt":"2026-12-06T00:00:00Z"}"#
    );
}

#[test]
fn an_auth_method_names_its_id_method_id_and_a_stop_reason_keeps_its_name() {
    let method: v1::AuthMethod =
        v1(r#"{"id":"env","name":"Env","description":"Set KEY","_meta":{"k":1}}"#);
    assert_eq!(
        wire(&map::auth_method_to_v2(method)),
        r#"{"type":"agent","methodId":"env","name":"Env","description":"Set KEY","_meta":{"k":1}}"#
    );
    let stop: v1::StopReason = v1(r#""max_turn_requests""#);
    // v2's stop reason is the member of the idle `state_update` it goes into.
    assert_eq!(
        wire(&map::stop_reason_to_v2(stop)),
        r#"{"stopReason":"max_turn_requests"}"#
    );
}
