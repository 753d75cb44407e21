//! acpx, a headless ACP client others wrote (npm package `acpx`, pinned in
//! `interop/acpx`, installed on first use by `acp_interop::acpx`), run
//! through `acp check client`. Its real failures are listed with their
//! reasons in `tests/fixtures/acpx.baseline`: the run passes with them, and
//! fails on any other failure, or when a listed one passes now (the list
//! must shrink). Skipped when Node.js or npm is missing;
//! `ACP_INTEROP=require` makes that a failure.

use acp_interop::{Sandbox, assert_code, run};

const ACP: &str = env!("CARGO_BIN_EXE_acp");

#[test]
fn acpx_passes_acp_check_client_but_for_its_baseline() {
    let Some(acpx) = acp_interop::acpx() else {
        return;
    };
    let baseline = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/acpx.baseline");
    let sb = Sandbox::new();
    let mut command = sb.command(ACP);
    command.args([
        "check",
        "client",
        "--timeout",
        "60",
        "--expect",
        "fs-read,fs-write,terminal,cancel",
        "--baseline",
        baseline,
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
    let failing: Vec<&str> = checks
        .iter()
        .filter(|c| c["status"] == "FAIL" && c["baseline"] != true)
        .map(|c| c["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(failing, Vec::<&str>::new(), "{}", out.stdout);
    let fixed: Vec<&str> = checks
        .iter()
        .filter(|c| c["status"] == "PASS" && c["baseline"] == true)
        .map(|c| c["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        fixed,
        Vec::<&str>::new(),
        "listed in acpx.baseline but passing now: remove them"
    );
    assert_eq!(report["summary"]["known"], 1, "{}", out.stdout);
    assert!(
        report["summary"]["passed"].as_u64().unwrap_or(0) >= 35,
        "{}",
        out.stdout
    );
    assert_code(&out, 0);
}
