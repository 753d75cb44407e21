//! The shapes of the official conformance kit's fixture agents (`acp-tck`),
//! as bugs of our own mutant (`acp-check-mutant`, crate acp-testkit): the
//! conforming agent is CONFORMANT, each broken shape NOT CONFORMANT for the
//! requirement it breaks, and a broken agent is judged by what it did, not
//! by waiting: wrong response ids are failures naming the id, not
//! timeouts; an agent that stops answering costs one timeout, and the
//! checks after it are NOT TESTED; a cancel the turn's end outran is not
//! exercised, not failed.

use acp_check::agent::{self, AgentOptions};
use acp_check::{Report, Status};
use acp_host::SupervisorProgram;
use serde_json::json;
use std::time::Duration;

fn mutant() -> String {
    acp_testkit::bin("acp-check-mutant").display().to_string()
}

/// `acp check agent` with the default timeouts (60 s a request, 10 s for
/// the cancel), but `timeout` when given.
async fn check(bug: &str, timeout: Option<Duration>) -> Report {
    let mut opts = AgentOptions::new(vec![mutant(), bug.to_string()]);
    opts.prompts = vec!["do the work".into()];
    opts.cancel_prompt = "slow".into();
    if let Some(t) = timeout {
        opts.timeout = t;
    }
    opts.supervisor = SupervisorProgram::Path(mutant().into());
    agent::run(opts).await.expect("the checks run")
}

fn with(report: &Report, status: Status) -> Vec<&str> {
    report
        .results
        .iter()
        .filter(|r| r.outcome.status == status)
        .map(|r| r.name.as_str())
        .collect()
}

fn reason<'a>(report: &'a Report, name: &str) -> &'a str {
    let r = report.results.iter().find(|r| r.name == name);
    &r.unwrap_or_else(|| panic!("{name} ran")).outcome.reason
}

/// Asserts the verdict and exactly the failing requirements.
#[track_caller]
fn judged(report: &Report, conformant: bool, failing: &[&str]) {
    assert_eq!(with(report, Status::Fail), failing, "{}", report.text());
    assert_eq!(report.conformant(), conformant, "{}", report.text());
    let verdict = if conformant {
        "\nVERDICT: CONFORMANT\n"
    } else {
        "\nVERDICT: NOT CONFORMANT\n"
    };
    assert!(report.text().ends_with(verdict), "{}", report.text());
    assert_eq!(report.ok(), conformant);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conforming_shape_is_conformant() {
    let report = check("good", None).await;
    judged(&report, true, &[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_stop_reason_on_cancel_is_not_conformant() {
    let report = check("cancel-end-turn", None).await;
    judged(&report, false, &["cancel.stop-reason"]);
    assert_eq!(
        reason(&report, "cancel.stop-reason"),
        "the cancelled turn ended with stop reason \"end_turn\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_ends_as_the_cancel_comes_is_a_race_not_a_failure() {
    let report = check("cancel-ends-first", None).await;
    judged(&report, true, &[]);
    let why = reason(&report, "cancel.stop-reason");
    assert!(
        why.starts_with("not exercised: the turn ended with stop reason \"end_turn\" in the first line the agent wrote after session/cancel"),
        "{why}"
    );
    assert!(with(&report, Status::Skip).contains(&"cancel.stop-reason"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_updates_are_not_conformant() {
    let report = check("late-update", None).await;
    judged(&report, false, &["prompt.no-update-after-response"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_missing_its_fields_is_not_conformant() {
    let report = check("missing-fields", None).await;
    judged(&report, false, &["wire.strict-types"]);
    let why = reason(&report, "wire.strict-types");
    assert!(why.contains("content"), "{why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_response_ids_are_failures_naming_the_id_not_timeouts() {
    let report = check("wrong-ids", None).await;
    assert!(!report.conformant(), "{}", report.text());
    let why = reason(&report, "initialize.response");
    assert!(
        why.starts_with("initialize: a response with id 1001, which matches no request: "),
        "{why}"
    );
    // The JSON report carries the wire lines of the failure: what was sent, what came back.
    let json = report.json();
    let init = &json["checks"][0];
    assert_eq!(init["id"], "initialize.response");
    let lines: Vec<&str> = init["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    let parse = |line: &str, dir: &str| -> serde_json::Value {
        let json = line
            .strip_prefix(dir)
            .unwrap_or_else(|| panic!("{dir}: {lines:?}"));
        serde_json::from_str(json).unwrap()
    };
    let sent = parse(lines[0], "> ");
    assert_eq!(
        (&sent["method"], &sent["id"]),
        (&json!("initialize"), &json!(1))
    );
    assert_eq!(parse(lines[1], "< ")["id"], 1001, "{lines:?}");
    for r in &report.results {
        assert!(
            !r.outcome.reason.contains("no response within"),
            "{}: {}\n{}",
            r.name,
            r.outcome.reason,
            report.text()
        );
    }
    assert!(
        with(&report, Status::Fail).contains(&"wire.responses-match"),
        "{}",
        report.text()
    );
    assert_eq!(with(&report, Status::NotTested), Vec::<&str>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_stops_answering_costs_one_timeout_then_is_not_tested() {
    let report = check("stops-answering", Some(Duration::from_secs(3))).await;
    // The first request it leaves unanswered (a prompt to an unknown
    // session) is the one timeout; that no request may go unanswered is
    // MANDATORY.
    judged(
        &report,
        false,
        &["session.unknown-rejected", "wire.responses-match"],
    );
    let why = reason(&report, "wire.responses-match");
    assert!(
        why.starts_with("the peer stopped answering: session/prompt (id "),
        "{why}"
    );
    assert!(why.ends_with(") got no response within 3 s"), "{why}");
    let not_tested = with(&report, Status::NotTested);
    for name in [
        "prompt.text",
        "cancel.stop-reason",
        "rpc.string-id",
        "rpc.exit-on-eof",
    ] {
        assert!(not_tested.contains(&name), "{name}\n{}", report.text());
    }
    for r in report
        .results
        .iter()
        .filter(|r| r.outcome.status == Status::NotTested)
    {
        assert!(
            r.outcome.reason.contains("stopped answering"),
            "{}: {}",
            r.name,
            r.outcome.reason
        );
    }
}
