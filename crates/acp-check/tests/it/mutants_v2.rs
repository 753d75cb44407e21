//! `acp check agent --protocol 2` against `acp-check-mutant-v2 BUG` (crate
//! acp-testkit): the agent without a bug is CONFORMANT, each bug fails
//! exactly the v2 requirements it breaks and makes the verdict NOT
//! CONFORMANT; a v1-only agent fails the version and has every other v2
//! check NOT TESTED.

use acp_check::agent::{AgentOptions, v2};
use acp_check::{Report, Status};
use std::time::Duration;

fn mutant() -> String {
    acp_testkit::bin("acp-check-mutant-v2")
        .display()
        .to_string()
}

async fn check(bug: &str) -> Report {
    let mut opts = AgentOptions::new(vec![mutant(), bug.to_string()]);
    opts.prompts = vec!["do the work".into()];
    opts.cancel_prompt = "slow".into();
    opts.timeout = Duration::from_secs(3);
    opts.cancel_within = Duration::from_secs(2);
    v2::run_with(opts, &mut |_| {})
        .await
        .expect("the checks run")
}

fn with(report: &Report, status: Status) -> Vec<&str> {
    report
        .results
        .iter()
        .filter(|r| r.outcome.status == status)
        .map(|r| r.name.as_str())
        .collect()
}

async fn mutant_fails(bug: &str, expected: &[&str]) {
    let report = check(bug).await;
    assert_eq!(with(&report, Status::Fail), expected, "{}", report.text());
    assert!(!report.conformant(), "{}", report.text());
    assert!(
        report.text().ends_with("VERDICT: NOT CONFORMANT\n"),
        "{}",
        report.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_v2_agent_without_a_bug_is_conformant() {
    let report = check("good").await;
    assert_eq!(
        with(&report, Status::Fail),
        Vec::<&str>::new(),
        "{}",
        report.text()
    );
    assert_eq!(
        with(&report, Status::Skip),
        Vec::<&str>::new(),
        "{}",
        report.text()
    );
    assert_eq!(with(&report, Status::Pass).len(), v2::V2_CHECKS.len());
    assert!(report.conformant(), "{}", report.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_without_idle_fails_running_idle() {
    // The turns never end: everything that needs an ended turn is skipped.
    mutant_fails("no-idle", &["v2.prompt.running-idle"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_without_message_ids_fail_message_ids_and_types() {
    mutant_fails("no-message-id", &["v2.prompt.message-ids", "v2.wire.types"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_answered_at_idle_fails_the_ack() {
    mutant_fails("late-ack", &["v2.prompt.ack"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_turn_ending_end_turn_fails_the_cancel() {
    mutant_fails("cancel-end-turn", &["v2.cancel.idle-cancelled"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_answering_1_is_reported_not_tested_for_v2() {
    let report = check("v1-only").await;
    assert_eq!(
        with(&report, Status::Fail),
        ["v2.init.version"],
        "{}",
        report.text()
    );
    let not_tested = with(&report, Status::NotTested);
    assert_eq!(
        not_tested.len(),
        v2::V2_CHECKS.len() - 1,
        "{}",
        report.text()
    );
    let text = report.text();
    assert!(
        text.contains("the agent answered protocol version 1 to a v2 initialize"),
        "{text}"
    );
    assert!(text.ends_with("VERDICT: NOT CONFORMANT\n"), "{text}");
}
