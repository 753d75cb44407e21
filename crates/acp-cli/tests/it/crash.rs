//! The agent dying mid-turn.

use crate::common;
use common::*;

#[test]
fn crash_mid_turn_shows_exit_status_and_stderr_tail() {
    let sb = Sandbox::new();
    let out = sb.exec(&["crash"]);
    assert_code(&out, 6);
    assert_eq!(out.stdout, "about to crash\n");
    assert_eq!(
        out.stderr,
        "[session] sess-1\n\
         acp: the agent exited (exit status: 3) during session/prompt; last lines of its stderr:\n  \
         | test-agent: something went wrong\n  | test-agent: fatal: simulated crash\n"
    );
}

#[test]
fn verbose_shows_the_agents_stderr_as_it_comes() {
    let sb = Sandbox::new();
    let out = sb.exec(&["--verbose", "crash"]);
    assert_code(&out, 6);
    assert_eq!(out.stdout, "about to crash\n");
    assert!(
        out.stderr.starts_with(
            "[policy] permissions: --deny-all: nothing is written, no command runs\n\
             [sandbox] sandbox: not needed (no command runs)\n\
             [session] sess-1\n\
             agent: test-agent: something went wrong\n\
             agent: test-agent: fatal: simulated crash\n"
        ),
        "{}",
        out.stderr
    );
}
