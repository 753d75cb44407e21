//! The official SDKs' rows: each peer's client drives its agent through
//! every workload, small, and passes the same count checks as our runs.
//!
//! The peers are outside the workspace build and CI's test run: a test runs
//! a peer that is ready (the Rust SDK's glue already built, the TypeScript
//! SDK installed) and otherwise says so and returns. With
//! `ACP_BENCH_PEER_TESTS=require` it builds or installs the peer first, and
//! a peer that cannot run fails the test. (Not `ACP_INTEROP=require`, which
//! CI sets: building the Rust SDK takes minutes.)

use std::process::Command;

use acp_bench::client::{Mode, RunResult};
use acp_bench::peers;

const SPECS: [&str; 4] = [
    "W1 count=500 bytes=40 update=0",
    "W2 count=200 bytes=100 update=0",
    "W3 count=300 bytes=100 update=0",
    "W4 count=1 bytes=300000 update=70000",
];

fn required() -> bool {
    std::env::var("ACP_BENCH_PEER_TESTS").is_ok_and(|v| v == "require")
}

/// Whether the peer of `mode` can run here; prepares it when required.
fn ready(mode: Mode) -> bool {
    let dir = peers::dir();
    let present = match mode {
        Mode::RustSdk => dir
            .join("rust-sdk/target/release/acp-bench-rust-sdk")
            .exists(),
        _ => {
            dir.join("js/node_modules/@agentclientprotocol/sdk")
                .exists()
                && Command::new("node").arg("--version").output().is_ok()
        }
    };
    if present && !required() {
        return true;
    }
    if !required() {
        eprintln!(
            "skipping the `{}` peer: not built or installed (ACP_BENCH_PEER_TESTS=require prepares it)",
            mode.as_str()
        );
        return false;
    }
    if let Err(e) = peers::prepare(mode) {
        panic!("the `{}` peer cannot run: {e}", mode.as_str());
    }
    true
}

fn run(mode: Mode, spec: &str) -> RunResult {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-bench"))
        .args(["--client", mode.as_str(), "--spec", spec, "--cpu", "any"])
        .output()
        .expect("start acp-bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} {spec}: {stderr}",
        mode.as_str()
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{stdout:?}: {e}"))
}

fn every_workload(mode: Mode) {
    if !ready(mode) {
        return;
    }
    for spec in SPECS {
        let r = run(mode, spec);
        assert!(r.wall_ns > 0 && r.wire_bytes > 0, "{spec}: {r:?}");
        assert!(r.client_rss_kib > 0 && r.agent_rss_kib > 0, "{spec}: {r:?}");
        assert!(r.client_cpu_ns > 0 && r.agent_cpu_ns > 0, "{spec}: {r:?}");
        assert_eq!(r.p50_ns.is_some(), spec.starts_with("W2"), "{spec}: {r:?}");
    }
}

#[test]
fn the_rust_sdk_runs_every_workload() {
    every_workload(Mode::RustSdk);
}

#[test]
fn the_typescript_sdk_runs_every_workload() {
    every_workload(Mode::TsSdk);
}
