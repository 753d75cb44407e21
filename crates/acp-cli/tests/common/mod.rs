//! Helpers shared by the integration tests: run the built `acp` against the
//! `acp-test-agent` fixture in a sandbox (temp HOME/XDG dirs, cleared
//! environment except PATH).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const ACP: &str = env!("CARGO_BIN_EXE_acp");
pub const AGENT: &str = env!("CARGO_BIN_EXE_acp-test-agent");

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
        let mut full = vec!["exec", "--agent", AGENT];
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
            .replace(AGENT, "$AGENT")
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
