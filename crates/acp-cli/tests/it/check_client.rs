//! `acp check client` as users run it: `acp exec` itself is the client
//! under test and passes; the report comes as text, JSON and JUnit, with a
//! trace; a command line without `{agent}` is a usage error, and a client
//! that never starts the agent or closes it at once fails with the reason.

use crate::common;
use common::*;

/// `acp check client` with `acp exec --approve-all` as the client.
fn check(sb: &Sandbox, extra: &[&str]) -> Output {
    let mut args = vec!["check", "client", "--timeout", "20"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--",
        ACP,
        "exec",
        "--agent",
        "{agent}",
        "--approve-all",
        "check",
        "me",
    ]);
    sb.run(&args)
}

#[test]
fn acp_exec_passes_as_a_client() {
    let sb = Sandbox::new();
    let junit = sb.root().join("report.xml");
    let out = check(
        &sb,
        &[
            "--expect",
            "fs-read,fs-write,terminal,cancel",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    eprintln!("{}", out.stdout);
    assert_code(&out, 0);
    for line in [
        "acp check client: ",
        "  PASS fs.write",
        "  PASS terminal.output-limit",
        "  PASS terminal.released-rejected",
        "  PASS cancel.notification",
        "  PASS wire.strict-types",
        "  SKIP elicitation.form: the client does not advertise elicitation.form",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
    let last: Vec<&str> = out.stdout.lines().rev().take(2).collect();
    assert_eq!(last[0], "VERDICT: CONFORMANT", "{}", out.stdout);
    assert!(last[1].contains(" 0 failed"), "{}", out.stdout);
    assert!(read(&junit).contains("failures=\"0\""));
}

#[test]
fn the_json_report_and_only_select_checks() {
    let sb = Sandbox::new();
    let trace = sb.root().join("trace.jsonl");
    let out = check(
        &sb,
        &[
            "--only",
            "fs.read",
            "--format",
            "json",
            "--trace",
            trace.to_str().unwrap(),
        ],
    );
    assert_code(&out, 0);
    // Every line exchanged, both ways: the client's initialize, and the
    // checking agent's fs/read_text_file.
    let trace = read(&trace);
    let lines: Vec<serde_json::Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines[0]["dir"] == "in"
            && lines[0]["line"]
                .as_str()
                .unwrap()
                .contains("\"initialize\""),
        "{trace}"
    );
    assert!(
        lines.iter().any(|l| l["dir"] == "out" && l["line"].as_str().unwrap().contains("fs/read_text_file")),
        "{trace}"
    );
    // Only the fs part of the turn ran: no terminal was asked for.
    assert!(!trace.contains("terminal/create"), "{trace}");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["side"], "client");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fs.read", "fs.read-lines", "fs.read-missing"]);
    assert_eq!(report["summary"]["passed"], 3);
}

#[test]
fn a_command_line_without_the_placeholder_is_a_usage_error() {
    let out = Sandbox::new().run(&["check", "client", "--", ACP, "exec", "hi"]);
    assert_code(&out, 2);
    assert!(out.stderr.contains("{agent}"), "{}", out.stderr);
    let out = Sandbox::new().run(&["check", "client"]);
    assert_code(&out, 2);
}

#[test]
fn a_client_that_never_starts_the_agent_fails_with_the_reason() {
    let sb = Sandbox::new();
    let out = sb.run(&[
        "check",
        "client",
        "--timeout",
        "5",
        "--only",
        "initialize",
        "--",
        "sh",
        "-c",
        "echo no agent for me >&2; exit 4; {agent}",
    ]);
    assert_code(&out, 1);
    assert!(
        out.stdout.contains("FAIL initialize.request: the client exited (exit status: 4) without starting the agent (its stderr ends: no agent for me)"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_client_that_does_not_offer_terminals_skips_them_unless_expected() {
    let sb = Sandbox::new();
    let out = sb.run(&[
        "check",
        "client",
        "--timeout",
        "20",
        "--only",
        "terminal.create,fs.write",
        "--expect",
        "terminal",
        "--",
        ACP,
        "exec",
        "--agent",
        "{agent}",
        "--deny-all",
        "hi",
    ]);
    assert_code(&out, 1);
    assert!(
        out.stdout.contains("  FAIL terminal.create: skipped, but --expect claims terminal: the client does not advertise terminal\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  SKIP fs.write: the client does not advertise fs.writeTextFile\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_client_that_closes_the_agents_stdin_at_once_fails_initialize() {
    let sb = Sandbox::new();
    let out = sb.run(&[
        "check",
        "client",
        "--timeout",
        "10",
        "--",
        "sh",
        "-c",
        "{agent} < /dev/null",
    ]);
    assert_code(&out, 1);
    assert!(
        out.stdout.contains(
            "  FAIL initialize.request: the client closed the agent's stdin before its initialize\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  SKIP session.new: not reached: the client closed"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_client_in_a_real_project_finds_it_as_it_was() {
    let sb = Sandbox::new();
    let project = sb.root().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "mine\n").unwrap();
    let out = sb.run(&[
        "check",
        "client",
        "--timeout",
        "20",
        "--",
        ACP,
        "exec",
        "--agent",
        "{agent}",
        "--approve-all",
        "--cwd",
        project.to_str().unwrap(),
        "hi",
    ]);
    assert_code(&out, 0);
    let left: Vec<String> = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["notes.txt"], "{}", out.stdout);
    assert_eq!(read(&project.join("notes.txt")), "mine\n");
    assert!(out.stdout.contains("  PASS fs.write\n"), "{}", out.stdout);
}
