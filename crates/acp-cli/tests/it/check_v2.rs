//! `acp check agent --protocol 2` on the command line: its own requirement
//! list, the version checked, and a v1-only agent (our test agent) judged
//! plainly: the version requirement fails, every other v2 requirement is
//! NOT TESTED with that reason, NOT CONFORMANT, in text, JSON and JUnit.
//! (v2 agents are judged in acp-check's and acp-e2e's tests.) And `acp
//! check client --protocol 2`: `acp exec --protocol 2` is a conformant v2
//! client, `acp exec` (v1) is not one. (The TypeScript SDK's v2 client is
//! judged in `interop_v2`.)

use crate::common;
use common::*;

#[test]
fn protocol_2_lists_the_v2_requirements() {
    let sb = Sandbox::new();
    let out = sb.run(&["check", "agent", "--protocol", "2", "--list"]);
    assert_code(&out, 0);
    assert!(
        out.stdout.contains("| `v2.init.version` | MANDATORY |"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("`initialize.response`"),
        "{}",
        out.stdout
    );
    let out = sb.run(&["check", "agent", "--protocol", "3", "--list"]);
    assert_code(&out, 2);
}

#[test]
fn a_v1_only_agent_is_not_conformant_for_v2_and_its_v2_checks_not_tested() {
    let sb = Sandbox::new();
    let junit = sb.root().join("report.xml");
    let junit_arg = junit.display().to_string();
    let out = sb.run(&[
        "check",
        "agent",
        "--protocol",
        "2",
        "--timeout",
        "20",
        "--junit",
        &junit_arg,
        "--",
        test_agent(),
    ]);
    assert_code(&out, 1);
    assert!(
        out.stdout.contains(
            "FAIL v2.init.version: the agent answered protocol version 1 to a v2 initialize, so it does not speak v2"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("NOT TESTED v2.prompt.ack: needs a turn, which failed: the agent answered protocol version 1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("VERDICT: NOT CONFORMANT\n"),
        "{}",
        out.stdout
    );
    assert!(
        std::fs::read_to_string(&junit)
            .unwrap()
            .contains("v2.init.version")
    );

    let out = sb.run(&[
        "check",
        "agent",
        "--protocol",
        "2",
        "--format",
        "json",
        "--",
        test_agent(),
    ]);
    assert_code(&out, 1);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["verdict"], "NOT CONFORMANT");
    let statuses: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses[0], ("v2.init.version", "FAIL"));
    assert!(
        statuses[1..].iter().all(|(_, s)| *s == "NOT TESTED"),
        "{statuses:?}"
    );
}

/// `acp check client --protocol 2 -- CLIENT… {agent}…`, its output.
fn check_client(sb: &Sandbox, client: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "client",
        "--protocol",
        "2",
        "--timeout",
        "20",
        "--",
    ];
    args.extend_from_slice(client);
    sb.run(&args)
}

#[test]
fn acp_exec_protocol_2_is_a_conformant_v2_client() {
    let sb = Sandbox::new();
    let out = check_client(
        &sb,
        &[
            ACP,
            "exec",
            "--protocol",
            "2",
            "--agent",
            "{agent}",
            "--approve-all",
            "hello",
        ],
    );
    assert_code(&out, 0);
    for name in [
        "v2.client.initialize",
        "v2.client.session-new",
        "v2.client.prompt",
        "v2.client.permission",
        "v2.client.wire-types",
    ] {
        assert!(
            out.stdout.contains(&format!("  PASS {name}\n")),
            "{name}\n{}",
            out.stdout
        );
    }
    assert!(
        out.stdout.ends_with("VERDICT: CONFORMANT\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_client_asking_for_v1_is_not_conformant_for_v2() {
    let sb = Sandbox::new();
    let out = check_client(
        &sb,
        &[ACP, "exec", "--agent", "{agent}", "--approve-all", "hello"],
    );
    assert_code(&out, 1);
    assert!(
        out.stdout.contains(
            "  FAIL v2.client.initialize: the client asked for protocol version 1, not 2"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "  NOT TESTED v2.client.permission: not tested: the client asked for protocol version 1"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("VERDICT: NOT CONFORMANT\n"),
        "{}",
        out.stdout
    );
}
