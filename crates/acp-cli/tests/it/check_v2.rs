//! `acp check agent --protocol 2` on the command line: its own requirement
//! list, the version checked, and a v1-only agent (our test agent) judged
//! plainly: the version requirement fails, every other v2 requirement is
//! NOT TESTED with that reason, NOT CONFORMANT, in text, JSON and JUnit.
//! (v2 agents are judged in acp-check's and acp-e2e's tests.)

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
