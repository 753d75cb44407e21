//! The official SDKs side by side: the same four workloads on the official
//! Rust SDK (crate `agent-client-protocol`) and the official TypeScript SDK
//! (`@agentclientprotocol/sdk`), each with its own client driving its own
//! agent over the pipes of a child process.
//!
//! The glue lives in `peers/` next to this crate, outside the workspace and
//! its CI: `peers/rust-sdk` is a Cargo project of its own (its own
//! workspace and `Cargo.lock`), built on demand with `cargo build --release
//! --locked --manifest-path …`; `peers/js/peer.mjs` runs on Node.js with the
//! SDK installed by `npm ci` from the committed lock. Each peer's client
//! prints one JSON line ([`PeerLine`]): the timed window, the wire bytes, CPU
//! time and peak RSS of both processes, what its handlers counted and the
//! agent's findings; the counts are checked here with the same code as for
//! our own rows. A peer that cannot be built or started is skipped with a
//! loud line; the run goes on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use crate::client::{Counts, Mode, RunResult};
use crate::spec::{Findings, Spec};

/// The pinned version of the official Rust SDK (as `peers/rust-sdk/Cargo.toml` pins it).
pub const RUST_SDK_VERSION: &str = "5.2.0";

/// The pinned version of the official TypeScript SDK (as `peers/js/package.json` pins it).
pub const TS_SDK_VERSION: &str = "2.4.0";

/// The directory of the peers' glue: `ACP_BENCH_PEERS` if set, else
/// `peers/` in this crate's source.
pub fn dir() -> PathBuf {
    std::env::var_os("ACP_BENCH_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("peers"))
}

/// The peer client's command for `mode`, without the spec.
fn command(mode: Mode) -> Option<Command> {
    let dir = dir();
    match mode {
        Mode::RustSdk => {
            let mut cmd = Command::new(rust_binary(&dir));
            cmd.arg("client");
            Some(cmd)
        }
        Mode::TsSdk => {
            let mut cmd = Command::new(node());
            cmd.arg(dir.join("js").join("peer.mjs")).arg("client");
            Some(cmd)
        }
        Mode::Floor | Mode::TokioFloor | Mode::Acp => None,
    }
}

fn rust_binary(dir: &Path) -> PathBuf {
    dir.join("rust-sdk/target/release").join(format!(
        "acp-bench-rust-sdk{}",
        std::env::consts::EXE_SUFFIX
    ))
}

fn node() -> String {
    std::env::var("ACP_BENCH_NODE").unwrap_or_else(|_| "node".into())
}

/// Makes the peer of `mode` ready to run: builds the Rust SDK's glue
/// (quick when nothing changed), installs the TypeScript SDK if missing.
/// Returns a one-line description of what runs (versions), or why it cannot.
pub fn prepare(mode: Mode) -> Result<String, String> {
    let dir = dir();
    match mode {
        Mode::RustSdk => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let manifest = dir.join("rust-sdk/Cargo.toml");
            if !manifest.exists() {
                return Err(format!("no glue at {}", manifest.display()));
            }
            eprintln!(
                "acp-bench: building the official Rust SDK's glue ({})",
                manifest.display()
            );
            let mut build = Command::new(&cargo);
            build
                .args([
                    "build",
                    "--release",
                    "--locked",
                    "--quiet",
                    "--manifest-path",
                ])
                .arg(&manifest);
            // Its own workspace, target directory and release profile,
            // whatever the driver was built with (so its build is reused).
            for (name, _) in std::env::vars_os() {
                let name = name.to_string_lossy().into_owned();
                let theirs = ["CARGO_TARGET_DIR", "CARGO_INCREMENTAL", "RUSTFLAGS"];
                if name.starts_with("CARGO_PROFILE_")
                    || name == "CARGO_ENCODED_RUSTFLAGS"
                    || theirs.contains(&name.as_str())
                {
                    build.env_remove(name);
                }
            }
            let status = build
                .status()
                .map_err(|e| format!("cannot run {cargo}: {e}"))?;
            if !status.success() {
                return Err(format!(
                    "`cargo build` of {} failed: {status}",
                    manifest.display()
                ));
            }
            let rustc = Command::new("rustc")
                .arg("--version")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or_else(|| "rustc ?".into());
            Ok(format!(
                "official Rust SDK: agent-client-protocol {RUST_SDK_VERSION} ({rustc}, Tokio multi-threaded)"
            ))
        }
        Mode::TsSdk => {
            let version = Command::new(node())
                .arg("--version")
                .output()
                .map_err(|e| format!("no Node.js ({}): {e}", node()))?;
            if !version.status.success() {
                return Err(format!("`{} --version` failed", node()));
            }
            let node_version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
            let js = dir.join("js");
            if !js.join("peer.mjs").exists() {
                return Err(format!("no glue at {}", js.join("peer.mjs").display()));
            }
            let sdk = js.join("node_modules/@agentclientprotocol/sdk/package.json");
            if !sdk.exists() {
                eprintln!("acp-bench: running `npm ci` in {}", js.display());
                let status = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&js)
                    .stdout(Stdio::null())
                    .status()
                    .map_err(|e| format!("cannot run npm: {e}"))?;
                if !status.success() || !sdk.exists() {
                    return Err(format!("`npm ci` in {} failed: {status}", js.display()));
                }
            }
            let installed = std::fs::read_to_string(&sdk)
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .and_then(|v| v.get("version")?.as_str().map(str::to_owned))
                .unwrap_or_default();
            if installed != TS_SDK_VERSION {
                return Err(format!(
                    "{} holds @agentclientprotocol/sdk {installed:?}, not the pinned {TS_SDK_VERSION}: run `npm ci` there",
                    js.display()
                ));
            }
            Ok(format!(
                "official TypeScript SDK: @agentclientprotocol/sdk {TS_SDK_VERSION} (Node.js {node_version})"
            ))
        }
        Mode::Floor | Mode::TokioFloor | Mode::Acp => Ok(String::new()),
    }
}

/// What a peer's client prints: one JSON line.
#[derive(Debug, Deserialize)]
pub struct PeerLine {
    wall_ns: u64,
    wire_bytes: u64,
    client_cpu_ns: u64,
    client_rss_kib: u64,
    agent_cpu_ns: u64,
    agent_rss_kib: u64,
    chunks: u64,
    chunk_bytes: u64,
    reads: u64,
    writes: u64,
    bad: u64,
    /// The prompt response's `_meta`; `null` when it had none.
    findings: Option<Findings>,
}

impl PeerLine {
    /// Checks the counts against `spec` (as for our own rows) and makes the
    /// run's result.
    pub fn into_result(self, spec: &Spec) -> Result<RunResult, String> {
        let counts = Counts {
            chunks: self.chunks,
            chunk_bytes: self.chunk_bytes,
            reads: self.reads,
            writes: self.writes,
            bad: self.bad,
        };
        let findings = self.findings.unwrap_or(Findings {
            bad: 1,
            ..Findings::default()
        });
        let (p50_ns, p99_ns) = counts.check(spec, &findings)?;
        if self.agent_rss_kib == 0 || self.client_rss_kib == 0 {
            return Err("the peer reported no peak RSS".into());
        }
        Ok(RunResult {
            wall_ns: self.wall_ns,
            messages: spec.messages(),
            wire_bytes: self.wire_bytes,
            client_cpu_ns: self.client_cpu_ns,
            agent_cpu_ns: self.agent_cpu_ns,
            client_rss_kib: self.client_rss_kib,
            agent_rss_kib: self.agent_rss_kib,
            p50_ns,
            p99_ns,
        })
    }
}

/// One run of the peer of `mode` (this process is already pinned; the
/// peer's processes inherit it).
pub fn run(mode: Mode, spec: &Spec) -> Result<RunResult, String> {
    let mut cmd = command(mode).ok_or("not a peer")?;
    let output = cmd
        .arg(spec.to_prompt())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start the {} client: {e}", mode.as_str()))?;
    if !output.status.success() {
        return Err(format!(
            "the {} client failed: {}",
            mode.as_str(),
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let line: PeerLine =
        serde_json::from_str(line).map_err(|e| format!("bad peer line {line:?}: {e}"))?;
    line.into_result(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(chunks: u64, findings: &str) -> PeerLine {
        serde_json::from_str(&format!(
            r#"{{"wall_ns":5,"wire_bytes":9,"client_cpu_ns":1,"client_rss_kib":2,"agent_cpu_ns":3,
                "agent_rss_kib":4,"chunks":{chunks},"chunk_bytes":{},"reads":0,"writes":0,"bad":0,
                "findings":{findings}}}"#,
            chunks * 3
        ))
        .unwrap()
    }

    #[test]
    fn a_peer_line_is_checked_like_our_runs() {
        let spec = Spec::parse("W1 count=2 bytes=3 update=0").unwrap();
        let ok = line(2, r#"{"done":2,"bad":0}"#).into_result(&spec).unwrap();
        assert_eq!((ok.wall_ns, ok.messages, ok.agent_rss_kib), (5, 4, 4));
        assert!(line(1, r#"{"done":2,"bad":0}"#).into_result(&spec).is_err());
        assert!(line(2, r#"{"done":2,"bad":1}"#).into_result(&spec).is_err());
        assert!(line(2, "null").into_result(&spec).is_err());
    }
}
