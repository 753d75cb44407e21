//! Every workload, small, through each of our implementations (the floor,
//! the floor on Tokio's reactor, the runtime): the runs complete, pass their
//! own count checks and report sane numbers.

use std::process::Command;

use acp_bench::client::RunResult;

fn run(mode: &str, spec: &str) -> RunResult {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-bench"))
        .args(["--client", mode, "--spec", spec])
        .output()
        .expect("start acp-bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{mode} {spec}: {stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{stdout:?}: {e}"))
}

#[test]
fn every_workload_runs_every_way() {
    let specs = [
        "W1 count=500 bytes=40 update=0",
        "W2 count=200 bytes=100 update=0",
        "W3 count=300 bytes=100 update=0",
        "W4 count=1 bytes=300000 update=70000",
    ];
    for spec in specs {
        let floor = run("floor", spec);
        let tokio_floor = run("tokio-floor", spec);
        let acp = run("acp", spec);
        for r in [&floor, &tokio_floor, &acp] {
            assert!(r.wall_ns > 0 && r.client_cpu_ns > 0, "{spec}: {r:?}");
            assert!(r.client_rss_kib > 0 && r.agent_rss_kib > 0, "{spec}: {r:?}");
            assert_eq!(r.p50_ns.is_some(), spec.starts_with("W2"), "{spec}: {r:?}");
        }
        // Same messages, same shapes: the byte counts agree up to id widths.
        // The same program: only the digits of the agent's timings differ.
        let (a, b) = (floor.wire_bytes, tokio_floor.wire_bytes);
        assert!(a.abs_diff(b) < 32, "{spec}: floor {a} B, tokio-floor {b} B");
        let (a, b) = (floor.wire_bytes as f64, acp.wire_bytes as f64);
        assert!((a - b).abs() / a < 0.05, "{spec}: floor {a} B, acp {b} B");
    }
}

#[test]
fn a_bad_spec_fails_the_run() {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-bench"))
        .args(["--client", "acp", "--spec", "W9"])
        .output()
        .expect("start acp-bench");
    assert!(!output.status.success());
}
