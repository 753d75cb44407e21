//! Mutation tests: each mutant agent has one deliberate protocol bug, and
//! `acp check agent` must fail exactly the checks that bug breaks — no more
//! (the other checks are not fooled into failing) and no less (the bug is
//! seen). The mutant without a bug passes everything it does. Each also
//! gets its verdict: a bug that breaks only ADVISORY or INFORMATIONAL
//! requirements leaves the agent CONFORMANT.

use acp_check::agent::{self, AgentOptions};
use acp_check::{Report, Status};
use acp_host::SupervisorProgram;
use std::time::Duration;

/// The path of the `acp-check-mutant` fixture (crate acp-testkit).
fn mutant() -> String {
    acp_testkit::bin("acp-check-mutant").display().to_string()
}

async fn check(bug: &str) -> Report {
    let mut opts = AgentOptions::new(vec![mutant(), bug.to_string()]);
    opts.prompts = vec!["do the work".into()];
    opts.cancel_prompt = "slow".into();
    opts.timeout = Duration::from_secs(20);
    opts.cancel_within = Duration::from_secs(2);
    // The mutant binary doubles as the supervisor of the terminals it asks for.
    opts.supervisor = SupervisorProgram::Path(mutant().into());
    agent::run(opts).await.expect("the checks run")
}

fn failed(report: &Report) -> Vec<&str> {
    report
        .results
        .iter()
        .filter(|r| r.outcome.status == Status::Fail)
        .map(|r| r.name.as_str())
        .collect()
}

async fn mutant_fails(bug: &str, expected: &[&str], conformant: bool) {
    let report = check(bug).await;
    assert_eq!(failed(&report), expected, "{}", report.text());
    assert_eq!(report.conformant(), conformant, "{}", report.text());
    assert_eq!(report.ok(), conformant, "{}", report.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutant_without_a_bug_passes_and_skips_only_what_it_lacks() {
    let report = check("good").await;
    assert_eq!(failed(&report), Vec::<&str>::new(), "{}", report.text());
    let skipped: Vec<&str> = report
        .results
        .iter()
        .filter(|r| r.outcome.status == Status::Skip)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "auth.authenticate",
            "session.modes",
            "session.config-options",
            "session.set-mode",
            "session.set-config-option",
            "session.list",
            "session.resume",
            "session.close",
            "session.delete",
        ],
        "{}",
        report.text()
    );
    assert!(report.ok());
    assert!(report.conformant());
}

macro_rules! mutants {
    ($($test:ident: $bug:literal => [$($check:literal),*] $verdict:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            mutant_fails($bug, &[$($check),*], stringify!($verdict) == "conformant").await;
        }
    )*};
}

mutants! {
    an_update_after_the_prompt_response: "late-update" => ["prompt.no-update-after-response"] not_conformant;
    string_ids_turned_into_numbers: "numeric-ids" => ["rpc.string-id", "wire.responses-match"] not_conformant;
    a_cancel_ignored: "ignore-cancel" => ["cancel.stop-reason"] not_conformant;
    a_terminal_never_released: "unreleased-terminal" => ["terminals.released"] not_conformant;
    noise_on_stdout: "stdout-noise" => ["wire.json-lines"] not_conformant;
    no_exit_on_eof: "no-exit-on-eof" => ["rpc.exit-on-eof"] conformant;
    a_malformed_update: "malformed-update" => ["wire.strict-types"] not_conformant;
    a_wrong_error_code: "wrong-error-code" => ["rpc.method-not-found", "rpc.ext-method-not-found"] conformant;
    an_update_before_its_tool_call: "update-before-call" => ["tools.update-follows-call"] not_conformant;
    a_status_going_backwards: "status-backwards" => ["tools.status-forward"] conformant;
    an_unsupported_version_echoed: "echo-version" => ["initialize.unsupported-version"] not_conformant;
    a_load_without_history: "no-replay" => ["session.load", "session.load-fresh-process"] not_conformant;
    updates_naming_another_session: "wrong-session-id" => ["prompt.session-id"] not_conformant;
    a_notification_answered: "answer-notification" => ["rpc.notification-unanswered"] not_conformant;
    an_unknown_session_accepted: "unknown-session-ok" => ["session.unknown-rejected"] conformant;
}
