//! acpx, a headless ACP client others wrote (npm package `acpx`, pinned in
//! `interop/acpx`, installed on first use by `acp_interop::acpx`), run
//! through `acp check client`: it is CONFORMANT (exit 0, no baseline). Its
//! one failure is INFORMATIONAL: a line that is not JSON goes unanswered
//! (the protocol leaves that open), so it is recorded and decides nothing.
//! Any other failure fails the test. Skipped when Node.js or npm is
//! missing; `ACP_INTEROP=require` makes that a failure.

use acp_interop::{Sandbox, assert_code, run};

const ACP: &str = env!("CARGO_BIN_EXE_acp");

#[test]
fn acpx_is_conformant_as_a_client() {
    let Some(acpx) = acp_interop::acpx() else {
        return;
    };
    let sb = Sandbox::new();
    let mut command = sb.command(ACP);
    command.args([
        "check",
        "client",
        "--timeout",
        "60",
        "--expect",
        "fs-read,fs-write,terminal,cancel",
        "--format",
        "json",
        "--",
    ]);
    command.arg("node").arg(&acpx).args([
        "--agent",
        "{agent}",
        "--approve-all",
        "exec",
        "check me",
    ]);
    let out = run(command);
    let report: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}): {}\n{}", out.stdout, out.stderr));
    let checks = report["checks"].as_array().expect("checks");
    let failing: Vec<(&str, &str)> = checks
        .iter()
        .filter(|c| c["status"] == "FAIL")
        .map(|c| {
            (
                c["id"].as_str().unwrap_or(""),
                c["tier"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        failing,
        [("rpc.parse-error", "INFORMATIONAL")],
        "{}",
        out.stdout
    );
    assert_eq!(report["verdict"], "CONFORMANT", "{}", out.stdout);
    assert!(
        report["summary"]["passed"].as_u64().unwrap_or(0) >= 35,
        "{}",
        out.stdout
    );
    assert_code(&out, 0);
}
