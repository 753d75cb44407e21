//! `terminal/*` served by `acp exec --approve-all`.

use crate::common;
use common::*;

#[test]
fn output_limit_truncates_from_the_start_on_a_char_boundary() {
    let sb = Sandbox::new();
    // "ab€é" is 7 bytes; the last 4 would start inside "€", so only "é" stays.
    let out = sb.exec(&["--approve-all", "terminal --limit 4 printf 'ab€é'"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "exit: 0\ntruncated: true\noutput:\né\n");
    let out = sb.exec(&["--approve-all", "terminal --limit 5 printf 'ab€é'"]);
    assert_eq!(out.stdout, "exit: 0\ntruncated: true\noutput:\n€é\n");
}

#[test]
fn stdout_and_stderr_in_order_with_exit_code_and_cwd() {
    let sb = Sandbox::new();
    let out = sb.exec(&[
        "--approve-all",
        "terminal echo one; echo two >&2; echo three; pwd; exit 4",
    ]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "exit: 4\ntruncated: false\noutput:\none\ntwo\nthree\n$WORK\n"
    );
}
