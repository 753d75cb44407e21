//! Mutation tests of `acp check client`: each mutant client has one
//! deliberate protocol bug, and the suite must fail exactly the checks that
//! bug breaks. The mutant without a bug passes everything it does.

use acp_check::client::{self, ClientOptions};
use acp_check::{Report, Status};
use std::time::Duration;

/// The path of the `acp-check-mutant-client` fixture (crate acp-testkit).
fn mutant() -> String {
    acp_testkit::bin("acp-check-mutant-client")
        .display()
        .to_string()
}

async fn check_run(bug: &str) -> Report {
    check_within(bug, Duration::from_secs(20)).await
}

async fn check_within(bug: &str, timeout: Duration) -> Report {
    let mut opts = ClientOptions::new(
        vec![mutant(), bug.to_string(), "{agent}".to_string()],
        vec![mutant(), "relay".to_string()],
    );
    opts.timeout = timeout;
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
    let report = check_run(bug).await;
    assert_eq!(with(&report, Status::Fail), expected, "{}", report.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutant_client_without_a_bug_passes_every_check() {
    let report = check_run("good").await;
    eprintln!("{}", report.text());
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
    // Both elicitations ran and were answered by the mutant's accept.
    for (name, note) in [
        (
            "elicitation.form",
            "accepted with age, color, name, ratio, size, subscribe, tags",
        ),
        ("elicitation.url", "accepted; elicitation/complete followed"),
    ] {
        let r = report.results.iter().find(|r| r.name == name).unwrap();
        assert_eq!(r.outcome.notes, [note], "{}", report.text());
    }
    assert!(report.ok());
    assert!(report.conformant(), "{}", report.text());
}

/// The one check `bug` fails, and the reason it gives.
async fn mutant_fails_because(bug: &str, check: &str, reason: &str) {
    let report = check_run(bug).await;
    assert_eq!(with(&report, Status::Fail), [check], "{}", report.text());
    let got = report.results.iter().find(|r| r.name == check).unwrap();
    assert_eq!(got.outcome.reason, reason, "{}", report.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_form_field_of_the_wrong_type() {
    mutant_fails_because(
        "elicitation-wrong-type",
        "elicitation.form",
        "field \"age\": \"1\" is not an integer",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_form_without_a_required_field() {
    mutant_fails_because(
        "elicitation-missing",
        "elicitation.form",
        "accepted without the required field name",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_form_choice_not_offered() {
    mutant_fails_because(
        "elicitation-unoffered",
        "elicitation.form",
        "field \"color\": \"not-offered\" is not one of the values offered (red, green, blue)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_advertised_but_answered_method_not_found() {
    let report = check_run("elicitation-unsupported").await;
    assert_eq!(
        with(&report, Status::Fail),
        ["elicitation.form", "elicitation.url"],
        "{}",
        report.text()
    );
    for r in report
        .results
        .iter()
        .filter(|r| r.name.starts_with("elicitation."))
    {
        assert!(
            r.outcome.reason.contains(
                "answered -32601 (method not found), though the client advertises this mode"
            ),
            "{}",
            report.text()
        );
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_response_ids_are_failures_naming_the_id_not_timeouts() {
    let report = check_run("wrong-ids").await;
    assert!(!report.conformant(), "{}", report.text());
    let fs_read = report.results.iter().find(|r| r.name == "fs.read").unwrap();
    assert!(
        fs_read
            .outcome
            .reason
            .contains(", which matches no request: "),
        "{}",
        report.text()
    );
    for r in &report.results {
        assert!(
            !r.outcome.reason.contains("no response within"),
            "{}: {}\n{}",
            r.name,
            r.outcome.reason,
            report.text()
        );
    }
    assert_eq!(with(&report, Status::NotTested), Vec::<&str>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_answering_costs_one_timeout_then_is_not_tested() {
    let report = check_within("stops-answering", Duration::from_secs(3)).await;
    assert!(!report.conformant(), "{}", report.text());
    let responses = report
        .results
        .iter()
        .find(|r| r.name == "wire.responses-match")
        .unwrap();
    assert_eq!(responses.outcome.status, Status::Fail, "{}", report.text());
    assert!(
        responses
            .outcome
            .reason
            .starts_with("the client stopped answering: "),
        "{}",
        report.text()
    );
    let not_tested = with(&report, Status::NotTested);
    assert!(not_tested.contains(&"fs.write"), "{}", report.text());
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
