//! `acp check client --protocol 2` against `acp-check-mutant-client-v2 BUG`
//! (crate acp-testkit): the client without a bug is CONFORMANT, each bug
//! fails exactly the v2 requirements it breaks.

use acp_check::client::{ClientOptions, v2};
use acp_check::{Report, Status};
use std::time::Duration;

fn fixture(name: &str) -> String {
    acp_testkit::bin(name).display().to_string()
}

async fn check(bug: &str) -> Report {
    let mut opts = ClientOptions::new(
        vec![
            fixture("acp-check-mutant-client-v2"),
            bug.to_string(),
            "{agent}".to_string(),
        ],
        // The v1 mutant client doubles as the checking agent's relay.
        vec![fixture("acp-check-mutant-client"), "relay".to_string()],
    );
    opts.timeout = Duration::from_secs(20);
    v2::run_with(opts, &mut |_| {})
        .await
        .expect("the checks run")
}

fn failed(report: &Report) -> Vec<&str> {
    report
        .results
        .iter()
        .filter(|r| r.outcome.status == Status::Fail)
        .map(|r| r.name.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_v2_client_without_a_bug_is_conformant() {
    let report = check("good").await;
    assert_eq!(failed(&report), Vec::<&str>::new(), "{}", report.text());
    assert!(report.conformant(), "{}", report.text());
    assert_eq!(report.results.len(), v2::V2_CLIENT_CHECKS.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_v2_client_bug_fails_its_requirements() {
    for (bug, expected) in [
        (
            "v1-fields",
            &["v2.client.initialize", "v2.client.wire-types"][..],
        ),
        ("unoffered-option", &["v2.client.permission"][..]),
        ("v1-method", &["v2.client.wire-types"][..]),
    ] {
        let report = check(bug).await;
        assert_eq!(failed(&report), expected, "{bug}\n{}", report.text());
        assert!(!report.conformant(), "{bug}\n{}", report.text());
    }
}
