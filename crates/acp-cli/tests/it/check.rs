//! `acp check agent` as users run it: our own test agent passes the whole
//! suite (every feature it has, claimed with `--expect`), the report comes
//! as text, JSON and JUnit, and a baseline forgives a known failure.

use crate::common;
use common::*;

/// `acp check agent` against the test agent with every extra turned on.
fn check(sb: &Sandbox, extra: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "agent",
        "--prompt",
        "permission",
        "--prompt",
        "terminal echo hi",
        "--prompt",
        "read {workspace}/notes.txt",
        "--cancel-prompt",
        "slow",
        "--timeout",
        "20",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", test_agent()]);
    sb.run(&args)
}

fn extras() -> Sandbox {
    Sandbox::new()
        .env("ACP_TEST_AGENT_EXTRAS", "1")
        .env("ACP_TEST_AGENT_RESUME", "1")
}

#[test]
fn the_test_agent_passes_with_every_feature_it_has_expected() {
    let sb = extras();
    let junit = sb.root().join("report.xml");
    let out = check(
        &sb,
        &[
            "--expect",
            "modes,config-options,tools,permission,terminal,fs,load,list,resume",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_code(&out, 0);
    let last: Vec<&str> = out.stdout.lines().rev().take(2).collect();
    // Skipped: auth (no --auth), close and delete (not advertised).
    assert_eq!(
        last,
        ["VERDICT: CONFORMANT", "38 passed, 0 failed, 3 skipped"],
        "{}",
        out.stdout
    );
    for line in [
        "\nMANDATORY\n",
        "\nCAPABILITY\n",
        "  PASS cancel.stop-reason (ACP-CANCEL-001)\n",
        "  PASS session.load-fresh-process\n",
        "  PASS terminals.released\n",
        "  PASS rpc.large-id (ACP-JSONRPC-001)\n",
        "  SKIP session.close (ACP-CLOSE-001): the agent does not advertise sessionCapabilities.close\n",
        "\nMANDATORY: 18 passed, 0 failed, 0 skipped\n",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
    // Each result was printed to stderr as soon as it was decided.
    assert!(
        out.stderr
            .starts_with("[MANDATORY] PASS initialize.response (ACP-INIT-001)\n"),
        "{}",
        out.stderr
    );
    let xml = read(&junit);
    assert!(
        xml.contains("tests=\"41\" failures=\"0\" skipped=\"3\""),
        "{xml}"
    );
}

#[test]
fn a_claimed_feature_that_is_missing_fails_and_a_baseline_forgives_it() {
    let sb = Sandbox::new();
    let out = check(
        &sb,
        &[
            "--expect",
            "modes",
            "--only",
            "session.modes",
            "--format",
            "json",
        ],
    );
    assert_code(&out, 1);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["checks"][0]["id"], "session.modes");
    assert_eq!(report["checks"][0]["tier"], "CAPABILITY");
    assert_eq!(report["checks"][0]["kit"], "ACP-MODES-001");
    assert_eq!(report["checks"][0]["status"], "FAIL");
    assert_eq!(report["verdict"], "NOT CONFORMANT");
    assert_eq!(
        report["checks"][0]["reason"],
        "skipped, but --expect claims modes: session/new answered no modes"
    );
    let baseline = sb.root().join("baseline");
    std::fs::write(&baseline, "session.modes  # no modes yet\n").unwrap();
    let out = check(
        &sb,
        &[
            "--expect",
            "modes",
            "--only",
            "session.modes",
            "--baseline",
            baseline.to_str().unwrap(),
        ],
    );
    assert_code(&out, 0);
    assert!(
        out.stdout
            .ends_with("0 passed, 0 failed, 0 skipped (1 known failures in the baseline)\nVERDICT: NOT CONFORMANT (every deciding failure is in the baseline)\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_usage_error_names_the_missing_agent() {
    let out = Sandbox::new().run(&["check", "agent"]);
    assert_code(&out, 2);
    assert!(
        out.stderr.contains("acp check agent -- AGENT"),
        "{}",
        out.stderr
    );
}
