//! Permission policies of `acp exec`.

use crate::common;
use common::*;

#[test]
fn default_without_a_tty_denies() {
    let sb = Sandbox::new();
    let out = sb.exec(&["permission"]);
    assert_code(&out, 5);
    assert_eq!(out.stdout, "permission: selected reject\n");
    assert_eq!(
        out.stderr,
        "[session] sess-1\n[tool] Remove build/ (edit, pending)\n\
         [permission] Remove build/: denied (reject_once: Reject)\n[tool] Remove build/: failed\n"
    );
}

#[test]
fn approve_all_allows_once() {
    let sb = Sandbox::new();
    let out = sb.exec(&["--approve-all", "permission"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "permission: selected allow\n");
    assert!(
        out.stderr
            .contains("[permission] Remove build/: allowed (allow_once: Allow)"),
        "{}",
        out.stderr
    );
}

#[test]
fn deny_all_rejects() {
    let sb = Sandbox::new();
    let out = sb.exec(&["--deny-all", "permission", "read"]);
    assert_code(&out, 5);
    assert_eq!(out.stdout, "permission: selected reject\n");
}

#[test]
fn approve_reads_allows_reads_only() {
    let sb = Sandbox::new();
    let out = sb.exec(&["--approve-reads", "permission", "read"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "permission: selected allow\n");
    let out = sb.exec(&["--approve-reads", "permission", "search"]);
    assert_code(&out, 0);
    let out = sb.exec(&["--approve-reads", "permission", "execute"]);
    assert_code(&out, 5);
    assert_eq!(out.stdout, "permission: selected reject\n");
}
