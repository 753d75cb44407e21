//! Our agents and agents written on the official SDKs, through `acp check
//! agent` as users run it: `acp-agent` on a scripted model, the runtime's
//! `echo_agent` example, and the agents of `interop/js` (TypeScript SDK) and
//! `interop/python` (Python SDK).
//!
//! Each test asserts the whole report: no check fails (outside the agent's
//! baseline file under `tests/check_baselines/`, whose every entry must still
//! fail), and exactly the expected checks are skipped, so a check that
//! silently turns into a skip is noticed. `--expect` names the features the
//! agent claims, so the checker itself fails a skipped claim too.
//!
//! The SDK agents need Node.js and Python: without them their tests say so
//! and pass, unless `ACP_INTEROP=require` (CI) makes that a failure.

use acp_interop::Peer;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The `acp` binary, built from acp-cli's main.rs.
const ACP: &str = env!("CARGO_BIN_EXE_acp-e2e-acp");
/// `acp-agent`, built from its main.rs.
const AGENT: &str = env!("CARGO_BIN_EXE_acp-e2e-agent");
/// The `echo_agent` example of crate `acp`.
const ECHO: &str = env!("CARGO_BIN_EXE_acp-e2e-echo-agent");

/// Every check of `acp check agent` that needs a feature an agent may not
/// have: (check, feature).
const FEATURE_CHECKS: &[(&str, &str)] = &[
    ("auth.authenticate", "auth"),
    ("session.modes", "modes"),
    ("session.config-options", "config-options"),
    ("session.set-mode", "modes"),
    ("session.set-config-option", "config-options"),
    ("tools.update-follows-call", "tools"),
    ("tools.status-forward", "tools"),
    ("tools.permission-known-call", "permission"),
    ("terminals.released", "terminal"),
    ("fs.absolute-paths", "fs"),
    ("session.load", "load"),
    ("session.load-fresh-process", "load"),
    ("session.list", "list"),
    ("session.resume", "resume"),
    ("session.close", "close"),
    ("session.delete", "delete"),
];

/// The checks of the features an agent does not claim: those it may skip.
fn skips_without(claimed: &[&str]) -> BTreeSet<String> {
    FEATURE_CHECKS
        .iter()
        .filter(|(_, f)| !claimed.contains(f))
        .map(|(c, _)| c.to_string())
        .collect()
}

/// A temporary HOME (with the agent's data directory) and a clean
/// environment for `acp check`, which the agents it starts inherit.
struct Sandbox {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let env = vec![
            (
                "PATH".into(),
                std::env::var("PATH").unwrap_or_default().to_string(),
            ),
            ("HOME".into(), root.display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                root.join("config").display().to_string(),
            ),
        ];
        Sandbox { dir, env }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn env(mut self, key: &str, value: &str) -> Sandbox {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// What one run of `acp check agent` reported.
struct Report {
    code: i32,
    text: String,
    stderr: String,
}

impl Report {
    /// The names of the checks with `status` (`PASS`, `FAIL`, `SKIP`).
    fn names(&self, status: &str) -> BTreeSet<String> {
        let prefix = format!("  {status} ");
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|rest| {
                let name = rest.split(':').next().unwrap_or(rest);
                // `name (KIT-ID)`: the official kit's id of the requirement.
                name.split(" (").next().unwrap_or(name).trim().to_string()
            })
            .collect()
    }

    /// Fails unless `ran` checks ran, exactly `skips` were skipped and
    /// nothing failed but the `known` failures (each of which must still
    /// fail), the verdict is CONFORMANT (so the known failures are all
    /// ADVISORY or INFORMATIONAL) and the exit code 0.
    #[track_caller]
    fn assert(&self, ran: usize, skips: &BTreeSet<String>, known: &BTreeSet<String>) {
        let shown = format!("--- report\n{}\n--- stderr\n{}", self.text, self.stderr);
        assert_eq!(&self.names("FAIL"), known, "failures\n{shown}");
        assert_eq!(&self.names("SKIP"), skips, "skips\n{shown}");
        assert!(
            !self.text.contains("passes now: remove it"),
            "a baseline entry passes now\n{shown}"
        );
        assert_eq!(self.code, 0, "exit code\n{shown}");
        let last = format!(
            "{} passed, 0 failed, {} skipped",
            ran - skips.len() - known.len(),
            skips.len()
        );
        let mut end = self.text.lines().rev();
        assert_eq!(
            end.next(),
            Some("VERDICT: CONFORMANT"),
            "the verdict\n{shown}"
        );
        assert!(
            end.next().unwrap_or("").starts_with(&last),
            "expected {last:?}\n{shown}"
        );
    }
}

/// How many checks `acp check agent` has.
const ALL_CHECKS: usize = 41;

/// Runs `acp check agent OPTIONS… -- AGENT…` in the sandbox (2 minutes at most).
async fn check(sb: &Sandbox, options: &[&str], agent: &[String]) -> Report {
    let mut cmd = tokio::process::Command::new(ACP);
    cmd.args(["check", "agent", "--timeout", "15", "--cancel-within", "5"])
        .args(options)
        .arg("--")
        .args(agent)
        .current_dir(sb.root())
        .env_clear()
        .envs(sb.env.iter().map(|(k, v)| (k, v)))
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

/// The known failures of an agent: `tests/check_baselines/NAME` (one check
/// a line, each with a `#` reason), and the file's path for `--baseline`.
fn baseline(name: &str) -> (BTreeSet<String>, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/check_baselines")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut known = BTreeSet::new();
    for line in text.lines() {
        let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        assert!(
            !reason.trim().is_empty(),
            "{}: the entry {entry} gives no reason",
            path.display()
        );
        known.insert(entry.to_string());
    }
    (known, path.display().to_string())
}

// ---------------------------------------------------------------------------
// The scripted model acp-agent runs on.

/// An OpenAI-compatible model server on 127.0.0.1 that answers every Chat
/// Completions request by what its last message asks, so that the order in
/// which the checker's processes ask does not matter:
///
/// - after a tool result: "Done.";
/// - `read PATH`: a `read_file` call of PATH;
/// - `write PATH`: a `write_file` call writing a line to PATH;
/// - `run COMMAND`: a `run_command` call of COMMAND (the rest of the line);
/// - `count slowly`: a line every 100 ms for 20 s (the turn to cancel);
/// - anything else: one sentence.
pub(crate) struct Model {
    pub(crate) base_url: String,
}

impl Model {
    pub(crate) async fn start() -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let _ = serve(sock).await;
                });
            }
        });
        Model {
            base_url: format!("http://{addr}/v1"),
        }
    }
}

/// One piece of a streamed answer and the pause before it.
type Piece = (Duration, String);

fn sse(v: Value) -> String {
    format!("data: {v}\n\n")
}

fn text_piece(t: &str) -> String {
    sse(json!({"choices": [{"index": 0, "delta": {"content": t}}]}))
}

fn finish(reason: &str) -> Vec<Piece> {
    vec![
        (
            Duration::ZERO,
            sse(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})),
        ),
        (Duration::ZERO, "data: [DONE]\n\n".into()),
    ]
}

fn say(t: &str) -> Vec<Piece> {
    let mut pieces = vec![(Duration::ZERO, text_piece(t))];
    pieces.extend(finish("stop"));
    pieces
}

fn call_tool(name: &str, args: Value) -> Vec<Piece> {
    let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
        "index": 0, "id": format!("call-{name}"), "type": "function",
        "function": {"name": name, "arguments": args.to_string()}}]}}]});
    let mut pieces = vec![(Duration::ZERO, sse(call))];
    pieces.extend(finish("tool_calls"));
    pieces
}

/// The text of a message's `content` (a string or text parts).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the scripted model answers to a Chat Completions request.
fn answer(request: &Value) -> Vec<Piece> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.last() else {
        return say("Hello.");
    };
    if last["role"] == "tool" {
        return say("Done.");
    }
    let text = content_text(&last["content"]);
    let after = |word: &str| {
        text.find(word)
            .map(|at| text[at + word.len()..].lines().next().unwrap_or("").trim())
    };
    if text.contains("count slowly") {
        let mut pieces: Vec<Piece> = (1..=200)
            .map(|n| (Duration::from_millis(100), text_piece(&format!("{n}\n"))))
            .collect();
        pieces[0].0 = Duration::ZERO;
        pieces.extend(finish("stop"));
        return pieces;
    }
    if let Some(path) = after("read ").and_then(|rest| rest.split_whitespace().next()) {
        return call_tool("read_file", json!({"path": path}));
    }
    if let Some(path) = after("write ").and_then(|rest| rest.split_whitespace().next()) {
        return call_tool(
            "write_file",
            json!({"path": path, "content": "written by acp check\n"}),
        );
    }
    if let Some(command) = after("run ").filter(|c| !c.is_empty()) {
        return call_tool("run_command", json!({"command": command}));
    }
    say("Hello from the scripted model.")
}

/// Reads one HTTP request and streams the scripted answer to it.
async fn serve(mut sock: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let request: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    sock.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
    )
    .await?;
    for (pause, piece) in answer(&request) {
        tokio::time::sleep(pause).await;
        // A cancelled turn drops the stream: the write fails and this ends.
        sock.write_all(piece.as_bytes()).await?;
        sock.flush().await?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The agents.

/// Everything acp-agent claims: it authenticates with `environment`, has
/// modes and config options, calls tools (reading and writing through `fs`,
/// running commands in a terminal, asking permission first), and loads,
/// lists, resumes, closes and deletes sessions.
const ACP_AGENT_CLAIMS: &[&str] = &[
    "auth",
    "modes",
    "config-options",
    "tools",
    "permission",
    "terminal",
    "fs",
    "load",
    "list",
    "resume",
    "close",
    "delete",
];

/// `acp check agent OPTIONS… -- acp-agent` on the scripted model, with a
/// data directory of its own.
async fn check_acp_agent(options: &[&str]) -> Report {
    let model = Model::start().await;
    let sb = Sandbox::new()
        .env("OPENAI_BASE_URL", &model.base_url)
        .env("OPENAI_API_KEY", "test-key")
        .env("ACP_AGENT_MODEL", "openai:mock-model");
    let data = sb.root().join("agent-data");
    let agent = [
        AGENT.to_string(),
        "--data-dir".into(),
        data.display().to_string(),
    ];
    check(&sb, options, &agent).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_agent_passes_every_check_on_a_scripted_model() {
    let (known, file) = baseline("acp-agent");
    let claims = ACP_AGENT_CLAIMS.join(",");
    let report = check_acp_agent(&[
        "--auth",
        "environment",
        "--prompt",
        "read {workspace}/notes.txt",
        "--prompt",
        "write {workspace}/out.txt",
        "--prompt",
        "run echo hi",
        "--cancel-prompt",
        "count slowly from 1 to 200",
        "--expect",
        &claims,
        "--baseline",
        &file,
    ])
    .await;
    report.assert(ALL_CHECKS, &skips_without(ACP_AGENT_CLAIMS), &known);
}

/// The turn to cancel asks to run a command for 30 s, in the session's
/// mode "ask": the checker cancels at the tool call's announcement, so the
/// permission request that follows is answered `cancelled` (or, should it
/// come first, allowed, and the command is running when the cancel lands).
/// Either way the turn ends `cancelled`, every terminal made is released,
/// and the session runs a command in the next turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_agent_cancelled_at_a_command_ends_the_turn_and_goes_on() {
    let only = "cancel,tools,terminals,wire";
    let report = check_acp_agent(&[
        "--only",
        only,
        "--prompt",
        "run echo hi",
        "--cancel-prompt",
        "run sleep 30",
        "--expect",
        "tools,permission,terminal",
    ])
    .await;
    report.assert(9, &BTreeSet::new(), &BTreeSet::new());
}

/// The echo agent advertises nothing beyond prompts. It echoes a word every
/// 30 ms: the turn to cancel is 300 words long (9 s), so that the cancel
/// lands however slowly the checker reads on a busy machine.
#[tokio::test]
async fn the_echo_agent_example_passes_skipping_only_what_it_does_not_advertise() {
    let sb = Sandbox::new();
    let (known, file) = baseline("echo_agent");
    let long = vec!["word"; 300].join(" ");
    let options = ["--cancel-prompt", &long, "--baseline", &file];
    let report = check(&sb, &options, &[ECHO.to_string()]).await;
    report.assert(ALL_CHECKS, &skips_without(&[]), &known);
}

/// An agent of `interop/`, written on an SDK: asked for "permission" it
/// makes a tool call and asks permission for it, asked to "read PATH" it
/// reads the file through `fs`, and "slow" keeps it busy until cancelled.
async fn check_peer(peer: Peer, name: &str, options: &[&str], claims: &[&str]) {
    if !peer.available() {
        return;
    }
    let sb = Sandbox::new();
    let (known, file) = baseline(name);
    let claimed = claims.join(",");
    let mut all = options.to_vec();
    all.extend_from_slice(&[
        "--prompt",
        "permission please, then read {workspace}/notes.txt",
        "--cancel-prompt",
        "slow",
        "--expect",
        &claimed,
        "--baseline",
        &file,
    ]);
    let report = check(&sb, &all, &peer.programs().agent_command()).await;
    report.assert(ALL_CHECKS, &skips_without(claims), &known);
}

/// The TypeScript SDK's agent also offers the auth method `token`, and a
/// config option (the model).
#[tokio::test]
async fn the_typescript_sdk_agent_passes() {
    check_peer(
        Peer::Js,
        "typescript-sdk",
        &["--auth", "token"],
        &[
            "auth",
            "modes",
            "config-options",
            "tools",
            "permission",
            "fs",
        ],
    )
    .await;
}

/// The Python SDK's agent passes but for three JSON-RPC probes, recorded in
/// its baseline: the SDK answers no parse error, answers a method that is
/// not a string as an unknown method, and ends the connection on `null`.
#[tokio::test]
async fn the_python_sdk_agent_passes_but_for_its_baseline() {
    check_peer(
        Peer::Python,
        "python-sdk",
        &[],
        &["modes", "tools", "permission", "fs"],
    )
    .await;
}
