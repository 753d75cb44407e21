//! `acp exec` against agents that misbehave on the wire: a malformed
//! `session/update`, a huge line, a line over the size limit, stdout closed
//! mid-turn. Each must end with the right exit code and a clear message,
//! without a panic and without hanging.

use crate::common;
use common::*;
use std::time::{Duration, Instant};

/// Runs `acp exec` and checks it took less than `limit`.
fn exec_within(sb: &Sandbox, args: &[&str], limit: Duration) -> Output {
    let started = Instant::now();
    let out = sb.exec(args);
    let took = started.elapsed();
    assert!(
        took < limit,
        "acp exec {args:?} took {took:?}\n--- stderr\n{}",
        out.stderr
    );
    out
}

fn assert_no_panic(out: &Output) {
    assert!(
        !out.stderr.contains("panicked"),
        "acp panicked:\n{}",
        out.stderr
    );
}

#[test]
fn a_malformed_session_update_is_reported_and_the_turn_goes_on() {
    let sb = Sandbox::new();
    let out = exec_within(&sb, &["bad-update"], Duration::from_secs(20));
    assert_no_panic(&out);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "still here\n");
    // The reason comes from the schema's decoder; its wording is not ours,
    // but it names the field.
    let (head, why) = out
        .stderr
        .split_at(out.stderr.find("update.content").unwrap_or(0));
    assert_eq!(
        head,
        "[session] sess-1\n\
         [warning] the agent sent a malformed session/update, which was left out: ",
        "{}",
        out.stderr
    );
    assert!(
        why.ends_with('\n') && why.lines().count() == 1,
        "{}",
        out.stderr
    );
}

#[test]
fn a_huge_line_within_the_limit_is_passed_through_whole() {
    let sb = Sandbox::new();
    let size = 8 * 1024 * 1024;
    let out = exec_within(&sb, &[&format!("huge {size}")], Duration::from_secs(60));
    assert_no_panic(&out);
    assert_code(&out, 0);
    assert_eq!(out.stdout.len(), size + 1);
    assert!(out.stdout.bytes().take(size).all(|b| b == b'x'));
    assert!(out.stdout.ends_with("x\n"));
    assert_eq!(out.stderr, "[session] sess-1\n");
}

#[test]
fn a_line_over_the_limit_stops_the_run_with_code_1() {
    let sb = Sandbox::new();
    let out = exec_within(&sb, &["too-long"], Duration::from_secs(60));
    assert_no_panic(&out);
    assert_code(&out, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "[session] sess-1\n\
         acp: the agent sent a message longer than 64 MiB, the most acp reads; it was skipped, \
         and since the agent or acp could now wait for it forever, the run stops\n"
    );
}

#[test]
fn stdout_closed_mid_turn_is_a_crash_with_code_6() {
    let sb = Sandbox::new();
    let out = exec_within(&sb, &["hangup"], Duration::from_secs(20));
    assert_no_panic(&out);
    assert_code(&out, 6);
    assert_eq!(out.stdout, "hanging up\n");
    assert_eq!(
        out.stderr,
        "[session] sess-1\n\
         acp: the agent closed the connection during session/prompt; last lines of its stderr:\n  \
         | test-agent: closing stdout\n"
    );
}
