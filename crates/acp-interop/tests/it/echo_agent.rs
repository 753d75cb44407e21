//! Each peer's client (`interop/js/client.mjs` on the official TypeScript
//! SDK, `interop/python/client.py` on the Python SDK) against the
//! `echo_agent` example of crate `acp`, which this crate builds as its
//! binary `echo_agent` from the example's own source file, so that cargo
//! hands the tests its path.
//!
//! Each scenario is written once, as a function taking the peer, and followed
//! by its tests, one per peer. A peer whose runtime is missing is skipped
//! (see `Peer::available`).

use std::path::Path;

use acp_interop::Peer::{self, Js, Python};
use acp_interop::{Output, Sandbox, assert_code, assert_sdk_accepted_everything, run};

/// The peer's client run against the echo agent in the sandbox, with `options`.
fn client(peer: Peer, sb: &Sandbox, options: &[&str]) -> Output {
    run(sb.peer_client(
        peer,
        options,
        &[Path::new(env!("CARGO_BIN_EXE_echo_agent"))],
    ))
}

fn reads_the_echo_agent_example(peer: Peer) {
    let sb = Sandbox::new();
    let prompt = "hello  echo\nworld ✓";
    let out = client(peer, &sb, &["--prompt", prompt]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\nSTOP end_turn\n"));
    assert_sdk_accepted_everything(peer, &out);
}

#[test]
fn js_client_reads_the_echo_agent_example() {
    if !Js.available() {
        return;
    }
    reads_the_echo_agent_example(Js);
}

#[test]
fn python_client_reads_the_echo_agent_example() {
    if !Python.available() {
        return;
    }
    reads_the_echo_agent_example(Python);
}

fn cancels_the_echo_agent_example(peer: Peer) {
    let sb = Sandbox::new();
    let words: Vec<String> = (1..=200).map(|i| format!("w{i}")).collect();
    let prompt = words.join(" ");
    let out = client(
        peer,
        &sb,
        &["--prompt", &prompt, "--cancel-after-chunks", "3"],
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("w1 w2 w3 "), "{}", out.stdout);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("w200"),
        "not cancelled: {}",
        out.stdout
    );
}

#[test]
fn js_client_cancels_the_echo_agent_example() {
    if !Js.available() {
        return;
    }
    cancels_the_echo_agent_example(Js);
}

#[test]
fn python_client_cancels_the_echo_agent_example() {
    if !Python.available() {
        return;
    }
    cancels_the_echo_agent_example(Python);
}
