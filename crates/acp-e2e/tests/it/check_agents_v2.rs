//! `acp check agent --protocol 2` as users run it, on the v2 agents we
//! have: `acp-agent` on the scripted model of `check_agents`, and the
//! official TypeScript SDK's v2 agent (`interop/js/agent-v2.mjs`; needs
//! Node.js, skipped without it unless `ACP_INTEROP=require`). Each test
//! asserts the whole report: which requirements failed, which were
//! skipped, the verdict and the exit code.

use crate::check_agents::Model;
use acp_interop::Peer;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

const ACP: &str = env!("CARGO_BIN_EXE_acp-e2e-acp");
const AGENT: &str = env!("CARGO_BIN_EXE_acp-e2e-agent");

/// What one run reported.
struct Report {
    code: i32,
    text: String,
    stderr: String,
}

impl Report {
    /// The requirements with `status` (`PASS`, `FAIL`, `SKIP`, `NOT TESTED`).
    fn names(&self, status: &str) -> BTreeSet<String> {
        let prefix = format!("  {status} ");
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.split(':').next().unwrap_or(rest).trim().to_string())
            .collect()
    }

    /// Fails unless exactly `failed` failed (none of them deciding the
    /// verdict), exactly `skipped` were skipped, every other of the `all`
    /// requirements passed, the verdict is CONFORMANT and the exit code 0.
    #[track_caller]
    fn assert_conformant(&self, all: usize, failed: &[&str], skipped: &[&str]) {
        let shown = format!("--- report\n{}\n--- stderr\n{}", self.text, self.stderr);
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(self.names("FAIL"), set(failed), "failures\n{shown}");
        assert_eq!(self.names("SKIP"), set(skipped), "skips\n{shown}");
        assert_eq!(
            self.names("PASS").len(),
            all - failed.len() - skipped.len(),
            "passes\n{shown}"
        );
        assert!(
            self.text.ends_with("VERDICT: CONFORMANT\n"),
            "the verdict\n{shown}"
        );
        assert_eq!(self.code, 0, "exit code\n{shown}");
    }
}

/// How many requirements `acp check agent --protocol 2` has.
const ALL_V2: usize = 21;

/// Runs `acp check agent --protocol 2 OPTIONS… -- AGENT…` in a temporary
/// HOME with `env` (2 minutes at most).
async fn check(env: &[(&str, &str)], options: &[&str], agent: &[String]) -> Report {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().canonicalize().unwrap();
    let mut cmd = tokio::process::Command::new(ACP);
    cmd.args(["check", "agent", "--protocol", "2", "--timeout", "15"])
        .args(["--cancel-within", "5"])
        .args(options)
        .arg("--")
        .args(agent)
        .current_dir(&root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &root)
        .env("XDG_CONFIG_HOME", root.join("config"))
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("acp check agent finishes within 2 minutes")
        .unwrap();
    Report {
        code: out.status.code().unwrap_or(-1),
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `acp-agent` answers v2, logs in (`auth/login` with `--auth`), reads a
/// file on its own host after asking
/// permission (a tool call upserted by id), and is cancelled while it
/// counts slowly; it advertises `session.delete` too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_agent_is_conformant_in_v2_on_a_scripted_model() {
    let model = Model::start().await;
    let data = tempfile::tempdir().unwrap();
    let env = [
        ("OPENAI_BASE_URL", model.base_url.as_str()),
        ("OPENAI_API_KEY", "test-key"),
        ("ACP_AGENT_MODEL", "openai:mock-model"),
    ];
    let agent = [
        AGENT.to_string(),
        "--data-dir".into(),
        data.path().display().to_string(),
    ];
    let options = [
        "--auth",
        "environment",
        "--prompt",
        "read {workspace}/notes.txt",
        "--cancel-prompt",
        "count slowly from 1 to 200",
        "--expect",
        "tools,list,resume,close,delete",
    ];
    let report = check(&env, &options, &agent).await;
    report.assert_conformant(ALL_V2, &[], &[]);
}

/// The SDK's v2 agent: asked for "permission" it upserts a tool call and
/// asks; "slow" keeps it busy until cancelled. It does not advertise
/// `session.delete`, and it accepts a prompt to a closed session (the spec
/// leaves that open: INFORMATIONAL, recorded only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_v2_agent_is_conformant() {
    if !Peer::Js.available() {
        return;
    }
    let programs = Peer::Js.programs();
    let script: PathBuf = programs.dir.join("agent-v2.mjs");
    let agent = [
        programs.interpreter.display().to_string(),
        script.display().to_string(),
    ];
    let options = [
        "--prompt",
        "permission please",
        "--cancel-prompt",
        "slow",
        "--expect",
        "tools,list,resume,close",
    ];
    let report = check(&[], &options, &agent).await;
    report.assert_conformant(
        ALL_V2,
        &["v2.session.closed-refused"],
        &["v2.session.delete"],
    );
}
