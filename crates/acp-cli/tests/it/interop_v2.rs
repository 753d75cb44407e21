//! Protocol v2 against the official TypeScript SDK's `experimental/v2`
//! peers (`interop/js/client-v2.mjs`, `interop/js/agent-v2.mjs`; crate
//! acp-interop): `acp bridge` between the SDK's v2 client and our v1
//! fixture agent. Skipped without Node.js, unless `ACP_INTEROP=require`.

use crate::common;

use acp_interop::Peer::Js;
use acp_interop::{Output, Sandbox, assert_code, assert_sdk_accepted_everything, run};

/// `node interop/js/<script>`, as words.
fn js(script: &str) -> Vec<String> {
    let programs = Js.programs();
    vec![
        programs.interpreter.display().to_string(),
        programs.dir.join(script).display().to_string(),
    ]
}

/// The SDK's v2 client with `options` against the agent `agent` (words).
fn client_v2(sb: &Sandbox, options: &[&str], agent: &[String]) -> Output {
    let [node, path]: [String; 2] = js("client-v2.mjs").try_into().expect("two words");
    let mut command = sb.command(node);
    command.arg(path).args(options).arg("--").args(agent);
    run(command)
}

/// `acp bridge --verbose -- AGENT…`, as words.
fn bridged(agent: &[&str]) -> Vec<String> {
    [common::ACP, "bridge", "--verbose", "--"]
        .iter()
        .chain(agent)
        .map(|w| w.to_string())
        .collect()
}

#[track_caller]
fn assert_has(out: &Output, what: &str) {
    assert!(
        out.stderr.contains(what),
        "no {what:?} on standard error\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn acp_bridge_lets_the_sdk_v2_client_use_the_v1_test_agent() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v2(
        &sb,
        &["--prompt", "hello v2", "--prompt", "tool"],
        &bridged(&[common::test_agent()]),
    );
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "You said: hello v2\nSTOP end_turn\nEdited.\nSTOP end_turn\n"
    );
    assert_has(&out, "acp bridge: client v2, agent v1, translated");
    // The bridge acknowledged each prompt with the id of the user message
    // it inserted, and the SDK matched them.
    assert_has(&out, "prompt acknowledged: bridge-user-1");
    assert_has(&out, "prompt acknowledged: bridge-user-2");
    // The v1 tool call arrived as upserts by its id.
    assert_has(&out, "tool_call_update call-1 pending Edit notes.txt");
    assert_has(&out, "tool_call_update call-1 completed");
    assert_sdk_accepted_everything(Js, &out);
}

#[test]
fn acp_bridge_pipes_a_v1_client_to_a_v1_agent_untouched() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let [node, path]: [String; 2] = js("client.mjs").try_into().expect("two words");
    let mut command = sb.command(node);
    command
        .arg(path)
        .args(["--prompt", "hello v1", "--"])
        .args(bridged(&[common::test_agent()]));
    let out = run(command);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hello v1\nSTOP end_turn\n");
    assert_has(&out, "acp bridge: client v1, agent v1, piped");
}

#[test]
fn acp_bridge_names_a_missing_agent() {
    let sb = Sandbox::new();
    let mut command = sb.command(common::ACP);
    command.args(["bridge", "--", "no-such-agent-program"]);
    let out = run(command);
    assert_code(&out, 127);
    assert!(
        out.stderr.contains("no-such-agent-program"),
        "{}",
        out.stderr
    );
}
