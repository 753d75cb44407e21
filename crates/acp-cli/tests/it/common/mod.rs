//! Helpers shared by the integration tests: run the built `acp` against the
//! `acp-test-agent` fixture in a sandbox (temp HOME/XDG dirs, cleared
//! environment except PATH).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub mod proxy;
pub mod served;

pub const ACP: &str = env!("CARGO_BIN_EXE_acp");

/// The path of the `acp-test-agent` fixture (crate acp-testkit).
pub fn test_agent() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    fixture(&PATH, "acp-test-agent")
}

/// The path of the `acp-hostile-agent` fixture (crate acp-testkit).
pub fn hostile_agent() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    fixture(&PATH, "acp-hostile-agent")
}

fn fixture(path: &'static OnceLock<String>, name: &str) -> &'static str {
    path.get_or_init(|| {
        let path = acp_testkit::bin(name);
        path.to_str()
            .unwrap_or_else(|| panic!("{} is not UTF-8", path.display()))
            .to_owned()
    })
}

/// A sandbox: a temp dir holding `home/`, `config/` and the session `work/` dir.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "config", "work"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Sandbox {
            dir,
            env: Vec::new(),
        }
    }

    pub fn work(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("work")).unwrap()
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn config_file(&self) -> PathBuf {
        self.dir.path().join("config/acp/config.toml")
    }

    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// `acp` with the sandbox environment, run in the work dir.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(ACP);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .current_dir(self.work())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command
    }

    /// `acp exec --agent <test agent> ARGS…`.
    pub fn exec(&self, args: &[&str]) -> Output {
        let mut full = vec!["exec", "--agent", test_agent()];
        full.extend_from_slice(args);
        self.run(&full)
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let out = self.command(args).output().unwrap();
        self.output(out)
    }

    pub fn output(&self, out: std::process::Output) -> Output {
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: self.scrub(&String::from_utf8_lossy(&out.stdout)),
            stderr: self.scrub(&String::from_utf8_lossy(&out.stderr)),
        }
    }

    /// Replaces the sandbox paths with `$WORK` / `$ROOT` for stable goldens.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.work().display().to_string(), "$WORK")
            .replace(&self.root().display().to_string(), "$ROOT")
            .replace(test_agent(), "$AGENT")
            .replace(hostile_agent(), "$HOSTILE")
    }
}

/// Asserts an exit code, showing both streams on failure.
pub fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.code, code,
        "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout, out.stderr
    );
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The folder of the golden files: `tests/golden/`.
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Whether `BLESS=1` asks for the golden files to be rewritten.
pub fn bless_requested() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` (already scrubbed of sandbox paths) with the golden
/// file `tests/golden/NAME`, byte for byte. With `BLESS=1` a missing or
/// different file is rewritten, and the test fails all the same: a run
/// that blessed anything never passes, so CI cannot pass by blessing.
pub fn assert_golden(name: &str, actual: &str) {
    if let Err(message) = check_golden(&golden_dir().join(name), actual, bless_requested()) {
        panic!("{message}");
    }
}

/// Checks `actual` against the golden file at `path`; `bless` rewrites a
/// missing or different file (and still returns an error).
pub fn check_golden(path: &Path, actual: &str, bless: bool) -> Result<(), String> {
    let expected = match std::fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read golden file {}: {e}", path.display())),
    };
    if expected.as_deref() == Some(actual.as_bytes()) {
        return Ok(());
    }
    let shown = path.display();
    if bless {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(path, actual).map_err(|e| format!("cannot write {shown}: {e}"))?;
        let was = if expected.is_some() {
            "different"
        } else {
            "missing"
        };
        return Err(format!(
            "golden file {shown} was {was}; BLESS=1 rewrote it. Review it (git diff), then run the \
             tests again without BLESS: a run that blesses always fails."
        ));
    }
    match expected {
        None => Err(format!(
            "golden file {shown} is missing; run the tests with BLESS=1 to write it, then review it.\n\
             --- actual output\n{actual}"
        )),
        Some(bytes) => {
            let expected = String::from_utf8_lossy(&bytes);
            let diff = similar::TextDiff::from_lines(expected.as_ref(), actual)
                .unified_diff()
                .header("expected (golden file)", "actual")
                .to_string();
            Err(format!(
                "output differs from golden file {shown}:\n{diff}\
                 If the change is intended, run the tests with BLESS=1 and review the diff."
            ))
        }
    }
}

/// Compares a run's standard output and standard error with the golden
/// files `NAME.stdout.txt` and `NAME.stderr.txt` (both are checked, and
/// blessed, before a failure is reported).
pub fn assert_golden_run(name: &str, out: &Output) {
    let bless = bless_requested();
    let failures: Vec<String> = [("stdout", &out.stdout), ("stderr", &out.stderr)]
        .into_iter()
        .filter_map(|(stream, text)| {
            check_golden(
                &golden_dir().join(format!("{name}.{stream}.txt")),
                text,
                bless,
            )
            .err()
        })
        .collect();
    if !failures.is_empty() {
        panic!("{}", failures.join("\n\n"));
    }
}

/// Compares JSON-lines output with the golden file `NAME.jsonl`, after
/// checking that every line is a JSON object.
pub fn assert_golden_jsonl(name: &str, stdout: &str) {
    assert!(
        stdout.ends_with('\n'),
        "JSON lines end with a newline: {stdout:?}"
    );
    for line in stdout.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(value.is_object(), "not a JSON object: {line}");
    }
    assert_golden(&format!("{name}.jsonl"), stdout);
}

/// Types a line and Enter into a pty as a terminal does: Enter is a
/// carriage return. (expectrl's `send_line` ends with a line feed, which is
/// Ctrl-J: chat's line editor takes it as a new line in the prompt.)
pub trait TypeLine {
    /// Sends `line` then `\r`.
    fn type_line(&mut self, line: impl AsRef<str>) -> Result<(), expectrl::Error>;
}

impl<T: expectrl::Expect> TypeLine for T {
    fn type_line(&mut self, line: impl AsRef<str>) -> Result<(), expectrl::Error> {
        self.send(format!("{}\r", line.as_ref()))
    }
}
