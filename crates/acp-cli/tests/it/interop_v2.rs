//! Protocol v2 against the official TypeScript SDK's `experimental/v2`
//! peers (`interop/js/client-v2.mjs`, `interop/js/agent-v2.mjs`; crate
//! acp-interop): `acp bridge` between the SDK's v2 client and our v1
//! fixture agent; `acp exec` and `acp chat --protocol 2` with the SDK's v2
//! agent (a turn, tool calls, permissions, plans, `--timeout` and Ctrl-C),
//! and with our v1 fixture agent (which answers 1), and `protocol = 2` in
//! the config. The SDK tests are skipped without Node.js, unless
//! `ACP_INTEROP=require`.

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

// ---------------------------------------------------------------------------
// `acp exec --protocol 2`

/// The SDK's v2 agent as `acp exec --agent` takes it.
fn agent_v2() -> String {
    js("agent-v2.mjs")
        .iter()
        .map(|w| acp_interop::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn acp_exec_protocol_2_completes_a_turn_with_the_sdk_v2_agent() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let prompt = "hello  v2\tworld ✓";
    let out = run(sb.acp_exec(
        common::ACP,
        &agent_v2(),
        &["--protocol", "2", "--verbose", prompt],
    ));
    assert_code(&out, 0);
    // The reply streamed as a v1 session's would be.
    assert_eq!(out.stdout, format!("{prompt}\n"));
    // The agent was asked for v2, and got a v2 initialize it accepted.
    let log = sb.log();
    let init = acp_interop::logged(&log, "initialize");
    assert_eq!(init["protocolVersion"], 2, "{init}");
    assert_eq!(init["info"]["name"], "acp", "{init}");
    assert!(log.lines().any(|l| l == "stop end_turn"), "{log}");
    assert!(!out.stderr.contains("[protocol]"), "{}", out.stderr);
    // Its standard error (shown with --verbose) has no complaint about us.
    assert_sdk_accepted_everything(Js, &out);
}

#[test]
fn acp_exec_protocol_2_shows_the_v2_agents_tool_calls_permissions_and_plans() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(
        common::ACP,
        &agent_v2(),
        &["--protocol", "2", "--approve-all", "permission and plan"],
    ));
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "permission and plan\npermission: selected allow\n"
    );
    // The question is shown with its title; the tool call's upserts update
    // it in place; the plan as a v1 plan.
    for line in [
        "[tool] Edit notes.txt (edit, pending)\n",
        "[permission] Allow editing notes.txt?: allowed (allow_once: Allow)\n",
        "[tool] Edit notes.txt: completed\n",
        "[plan]\n  [x] Read\n  [~] Change\n  [ ] Test\n",
    ] {
        assert!(out.stderr.contains(line), "{line:?} in\n{}", out.stderr);
    }
    let log = sb.log();
    assert_eq!(
        acp_interop::logged(&log, "permission"),
        serde_json::json!({"outcome": "selected", "optionId": "allow"})
    );
}

#[test]
fn acp_exec_protocol_2_cancels_the_v2_agents_turn_at_the_timeout() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(
        common::ACP,
        &agent_v2(),
        &["--protocol", "2", "--timeout", "1", "slow"],
    ));
    // session/cancel reached the agent, whose idle update (cancelled) ended
    // the turn: the exit code is --timeout's.
    assert_code(&out, 124);
    assert!(out.stdout.starts_with("slow\ntick 1\n"), "{}", out.stdout);
    let log = sb.log();
    assert!(log.lines().any(|l| l == "session/cancel js2-1"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

#[test]
fn acp_exec_protocol_2_ctrl_c_cancels_the_v2_agents_turn() {
    use nix::sys::signal::{Signal, kill};
    use std::io::{BufRead, BufReader, Read};
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let (running, stdout) = acp_interop::spawn_streaming(sb.acp_exec(
        common::ACP,
        &agent_v2(),
        &["--protocol", "2", "slow"],
    ));
    let mut stdout = BufReader::new(stdout);
    let mut seen = String::new();
    while !seen.ends_with("tick 2\n") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "acp ended early: {seen}"
        );
        seen.push_str(&line);
    }
    kill(running.pid(), Signal::SIGINT).unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = running.finish();
    // 130: cancelled, after the agent's idle update said `cancelled`.
    assert_code(&out, 130);
    assert!(out.stderr.contains("[stop] cancelled"), "{}", out.stderr);
    let log = sb.log();
    assert!(log.lines().any(|l| l == "session/cancel js2-1"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

#[test]
fn acp_exec_protocol_2_goes_on_in_v1_with_a_v1_agent() {
    let sb = common::Sandbox::new();
    let out = sb.exec(&["--protocol", "2", "hi"]);
    common::assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hi\n");
    assert_eq!(
        out.stderr,
        "[protocol] the agent speaks protocol v1 only (asked for v2): going on in v1\n\
         [session] sess-1\n"
    );
    // The v1 agent read the client capabilities of the v2 initialize: it
    // may still read files through acp.
    std::fs::write(sb.work().join("notes.txt"), "one\ntwo\n").unwrap();
    let path = sb.work().join("notes.txt");
    let out = sb.exec(&["--protocol", "2", &format!("read {}", path.display())]);
    common::assert_code(&out, 0);
    assert_eq!(out.stdout, "one\ntwo\n");
}

#[test]
fn an_agents_config_entry_can_ask_for_protocol_2() {
    let sb = common::Sandbox::new();
    std::fs::create_dir_all(sb.config_file().parent().unwrap()).unwrap();
    let entry = |protocol: &str| {
        format!(
            "[agents.t]\ncommand = {:?}\nprotocol = {protocol}\n",
            common::test_agent()
        )
    };
    std::fs::write(sb.config_file(), entry("2")).unwrap();
    let out = sb.run(&["exec", "--agent", "t", "hi"]);
    common::assert_code(&out, 0);
    assert!(out.stderr.starts_with("[protocol] "), "{}", out.stderr);
    // --protocol wins over the entry.
    let out = sb.run(&["exec", "--agent", "t", "--protocol", "1", "hi"]);
    common::assert_code(&out, 0);
    assert_eq!(out.stderr, "[session] sess-1\n");
    // Only 1 and 2 are versions.
    std::fs::write(sb.config_file(), entry("3")).unwrap();
    let out = sb.run(&["exec", "--agent", "t", "hi"]);
    common::assert_code(&out, 2);
    assert!(
        out.stderr.contains("protocol must be 1 or 2, not 3"),
        "{}",
        out.stderr
    );
    let out = sb.exec(&["--protocol", "3", "hi"]);
    common::assert_code(&out, 2);
}

#[test]
fn acp_chat_protocol_2_streams_the_sdk_v2_agents_turns() {
    use expectrl::session::OsSession;
    use expectrl::{Eof, Expect};
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let mut command = sb.command(common::ACP);
    command
        .args(["chat", "--protocol", "2", "--agent", &agent_v2()])
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("XDG_STATE_HOME", sb.root().join("state"));
    let mut s = OsSession::spawn(command).expect("spawn acp chat in a pty");
    s.get_process_mut()
        .set_window_size(160, 40)
        .expect("set the pty's size");
    s.set_expect_timeout(Some(std::time::Duration::from_secs(30)));
    s.expect("Ctrl-D quits.").expect("the banner");
    s.expect("> ").expect("the first prompt");
    // (A carriage return submits the line; a line feed would add a line.)
    s.send("first v2 turn\r").unwrap();
    s.expect("first v2 turn\r\n").unwrap();
    s.expect("> ").unwrap();
    s.send("second one\r").unwrap();
    s.expect("second one\r\n").unwrap();
    s.expect("> ").unwrap();
    s.send(expectrl::ControlCode::EndOfTransmission).unwrap();
    s.expect(Eof).expect("acp chat ends after Ctrl-D");
    // Both turns reached the v2 agent and ended at its idle update.
    let log = sb.log();
    let stops = log.lines().filter(|l| *l == "stop end_turn").count();
    assert_eq!(stops, 2, "{log}");
}

/// `acp check client --protocol 2` answers the SDK's v2 client as a v2
/// agent (a turn with a permission question about a tool call) and finds
/// nothing wrong with it.
#[test]
fn acp_check_client_protocol_2_finds_the_sdk_v2_client_conformant() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let [node, path]: [String; 2] = js("client-v2.mjs").try_into().expect("two words");
    let mut command = sb.command(common::ACP);
    command
        .args([
            "check",
            "client",
            "--protocol",
            "2",
            "--timeout",
            "20",
            "--",
        ])
        .args([node, path])
        .args(["--prompt", "hi", "--", "{agent}"]);
    let out = run(command);
    assert_code(&out, 0);
    assert!(
        out.stdout.contains("5 passed, 0 failed, 0 skipped"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("VERDICT: CONFORMANT\n"),
        "{}",
        out.stdout
    );
}
