//! Mutation tests of `acp check client`: each mutant client has one
//! deliberate protocol bug, and the suite must fail exactly the checks that
//! bug breaks. The mutant without a bug passes everything it does.

use acp_check::client::{self, ClientOptions};
use acp_check::{Report, Status};
use std::time::Duration;

const MUTANT: &str = env!("CARGO_BIN_EXE_acp-check-mutant-client");

async fn check(bug: &str) -> Report {
    let mut opts = ClientOptions::new(
        vec![MUTANT.to_string(), bug.to_string(), "{agent}".to_string()],
        vec![MUTANT.to_string(), "relay".to_string()],
    );
    opts.timeout = Duration::from_secs(20);
    opts.cancel_within = Duration::from_secs(5);
    client::run(opts).await.expect("the checks run")
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutant_client_without_a_bug_passes_and_skips_only_what_it_lacks() {
    let report = check("good").await;
    eprintln!("{}", report.text());
    assert_eq!(
        with(&report, Status::Fail),
        Vec::<&str>::new(),
        "{}",
        report.text()
    );
    assert_eq!(
        with(&report, Status::Skip),
        ["elicitation.form", "elicitation.url"],
        "{}",
        report.text()
    );
    assert!(report.ok());
}

macro_rules! mutants {
    ($($test:ident: $bug:literal => [$($check:literal),*];)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            mutant_fails($bug, &[$($check),*]).await;
        }
    )*};
}

mutants! {
    a_write_that_claims_success_but_writes_nothing: "fake-write" => ["fs.write"];
    a_missing_file_answered_with_empty_content: "empty-missing" => ["fs.read-missing"];
    a_permission_outcome_not_offered: "unoffered-option" => ["permission.all-kinds", "permission.single-kind"];
    terminal_output_cut_between_bytes: "byte-cut" => ["terminal.output-limit"];
    terminal_output_cut_but_not_marked_truncated: "truncated-flag" => ["terminal.output-limit"];
    a_released_terminal_id_accepted: "released-accepted" => ["terminal.released-rejected"];
    string_ids_turned_into_numbers: "numeric-ids" => ["rpc.string-id", "wire.responses-match"];
    noise_on_the_agents_stdin: "stdout-noise" => ["wire.json-lines"];
    a_wrong_error_code: "wrong-error-code" => ["rpc.method-not-found", "rpc.ext-method-not-found"];
    a_pending_permission_selected_at_the_cancel: "cancel-selects" => ["permission.cancelled"];
}
