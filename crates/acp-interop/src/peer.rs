//! The two peers, implementations others wrote: which one a test runs
//! against ([`Peer`]), and its programs under `interop/` ([`Programs`]),
//! installed on first use.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Once, OnceLock};

use crate::{install_lock, repo_root, target_dir};

/// An implementation of ACP others wrote, on which we wrote an agent and a
/// client (`interop/js`, `interop/python`). A scenario that runs against
/// both takes the peer as a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The official TypeScript SDK, `@agentclientprotocol/sdk`, run with
    /// Node.js: `interop/js`.
    Js,
    /// The Python SDK, `agent-client-protocol`, run in a virtual
    /// environment: `interop/python`.
    Python,
}

impl Peer {
    /// The SDK's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Js => "TypeScript SDK",
            Peer::Python => "Python SDK",
        }
    }

    /// The peer's programs, installed first if needed: `npm ci` in
    /// `interop/js` when `node_modules` is missing or out of date; the
    /// virtual environment `interop/python/.venv` made and
    /// `requirements.txt` installed in it when a pinned package is missing.
    ///
    /// Panics (failing the test) when the peer cannot be installed, with the
    /// tool's output. A test calls [`Peer::available`] first, which skips
    /// it when the peer's runtime is missing.
    pub fn programs(self) -> &'static Programs {
        static JS: OnceLock<Result<Programs, String>> = OnceLock::new();
        static PYTHON: OnceLock<Result<Programs, String>> = OnceLock::new();
        let installed = match self {
            Peer::Js => JS.get_or_init(install_js),
            Peer::Python => PYTHON.get_or_init(install_python),
        };
        match installed {
            Ok(p) => p,
            Err(e) => panic!("the {} peer is not available: {e}", self.name()),
        }
    }

    /// Whether a test against this peer can run here. When the peer's
    /// runtime is missing (`node` or `npm` for the TypeScript SDK, `python3`
    /// for the Python SDK), this prints one line saying so on standard error
    /// (once per test process, past the test harness's capture) and returns
    /// `false`, so the test returns early; with `ACP_INTEROP=require` (CI
    /// sets it) a missing runtime fails the test instead. A test against a
    /// peer starts with `if !peer.available() { return; }`.
    pub fn available(self) -> bool {
        static JS: OnceLock<Option<String>> = OnceLock::new();
        static PYTHON: OnceLock<Option<String>> = OnceLock::new();
        let missing = match self {
            Peer::Js => JS.get_or_init(|| js_runtime_missing(&repo_root().join("interop/js"))),
            Peer::Python => PYTHON.get_or_init(python_runtime_missing),
        };
        let Some(missing) = missing else {
            return true;
        };
        match mode() {
            Mode::Require => panic!(
                "the {} interop tests cannot run: {missing}, and {MODE_VAR}=require makes that a failure",
                self.name()
            ),
            Mode::SkipMissing => {
                static SAID_JS: Once = Once::new();
                static SAID_PYTHON: Once = Once::new();
                let said = match self {
                    Peer::Js => &SAID_JS,
                    Peer::Python => &SAID_PYTHON,
                };
                said.call_once(|| {
                    // Straight to the stream: the harness captures eprintln!.
                    let _ = writeln!(
                        std::io::stderr(),
                        "acp-interop: SKIPPED the {} interop tests: {missing} (set {MODE_VAR}=require to make this a failure)",
                        self.name()
                    );
                });
                false
            }
        }
    }
}

/// The environment variable that makes a missing peer runtime a failure.
pub const MODE_VAR: &str = "ACP_INTEROP";

/// What to do when a peer's runtime is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Skip the peer's tests, saying so (`ACP_INTEROP` unset or empty).
    SkipMissing,
    /// Fail them (`ACP_INTEROP=require`).
    Require,
}

pub(crate) fn mode() -> Mode {
    match std::env::var(MODE_VAR).as_deref() {
        Err(_) | Ok("") => Mode::SkipMissing,
        Ok("require") => Mode::Require,
        Ok(other) => panic!("{MODE_VAR}={other:?}: the only value it takes is `require`"),
    }
}

/// Whether `program --version` runs; `Err` says why not.
pub(crate) fn runs(program: &str) -> Result<String, String> {
    match Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => Err(format!("`{program} --version` failed ({})", out.status)),
        Err(e) => Err(format!("`{program}` was not found on PATH ({e})")),
    }
}

/// What is missing to run the TypeScript SDK peer: `node`, and `npm` when
/// the pinned packages still have to be installed.
fn js_runtime_missing(dir: &Path) -> Option<String> {
    if let Err(e) = runs("node") {
        return Some(e);
    }
    let installed = js_missing(dir).is_ok_and(|missing| missing.is_empty());
    if installed {
        return None;
    }
    runs("npm")
        .err()
        .map(|e| format!("{e}, and interop/js/node_modules is not installed"))
}

/// What is missing to run the Python SDK peer: `python3`, 3.10 or newer.
fn python_runtime_missing() -> Option<String> {
    let version = match runs("python3") {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    // "Python 3.11.7"
    let number = version.trim().trim_start_matches("Python ").to_owned();
    let mut parts = number.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) < (3, 10) {
        return Some(format!(
            "python3 is {number}, and the Python SDK needs 3.10 or newer"
        ));
    }
    None
}

/// A peer's installed programs: an interpreter and the directory of our
/// programs written on that peer's SDK.
#[derive(Debug)]
pub struct Programs {
    /// The interpreter (`node`, or the virtual environment's `python`).
    pub interpreter: PathBuf,
    /// `interop/js` or `interop/python`.
    pub dir: PathBuf,
    /// The agent program, relative to `dir`.
    agent: &'static str,
    /// The client program, relative to `dir`.
    client: &'static str,
}

impl Programs {
    /// The command line that runs the peer's agent: interpreter and script.
    pub fn agent_command(&self) -> Vec<String> {
        vec![
            self.interpreter.display().to_string(),
            self.dir.join(self.agent).display().to_string(),
        ]
    }

    /// The peer's agent as one `--agent` value for `acp` (quoted words).
    pub fn agent_command_line(&self) -> String {
        self.agent_command()
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The client program's path.
    pub fn client_script(&self) -> PathBuf {
        self.dir.join(self.client)
    }
}

pub(crate) fn run_install_step(command: &mut Command, what: &str) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The exact versions `package.json` pins that are not installed in
/// `node_modules`.
fn js_missing(dir: &Path) -> Result<Vec<String>, String> {
    let manifest = std::fs::read_to_string(dir.join("package.json"))
        .map_err(|e| format!("cannot read interop/js/package.json: {e}"))?;
    let manifest: serde_json::Value =
        serde_json::from_str(&manifest).map_err(|e| format!("bad package.json: {e}"))?;
    let mut missing = Vec::new();
    for (name, version) in manifest["dependencies"].as_object().into_iter().flatten() {
        let installed =
            std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok());
        let installed = installed.as_ref().and_then(|v| v["version"].as_str());
        if installed != version.as_str() {
            missing.push(format!("{name}@{}", version.as_str().unwrap_or("?")));
        }
    }
    Ok(missing)
}

fn install_js() -> Result<Programs, String> {
    let dir = repo_root().join("interop/js");
    let node = PathBuf::from("node");
    let out = Command::new(&node).arg("--version").output().map_err(|e| {
        format!("Node.js is needed for the TypeScript SDK interop tests (`node` on PATH): {e}")
    })?;
    if !out.status.success() {
        return Err("`node --version` failed".into());
    }
    let _lock = install_lock(&target_dir()?)?;
    let missing = js_missing(&dir)?;
    if !missing.is_empty() {
        eprintln!(
            "acp-interop: running `npm ci` in {} (missing: {})",
            dir.display(),
            missing.join(", ")
        );
        run_install_step(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir),
            "`npm ci --no-audit --no-fund` in interop/js",
        )?;
        let missing = js_missing(&dir)?;
        if !missing.is_empty() {
            return Err(format!(
                "after `npm ci`, still missing: {}",
                missing.join(", ")
            ));
        }
    }
    Ok(Programs {
        interpreter: node,
        dir,
        agent: "agent.mjs",
        client: "client.mjs",
    })
}

/// Package names compare without case and with `-`, `_` and `.` alike.
fn normalize_package(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// The `name==version` lines of `requirements.txt` not installed in `.venv`.
fn python_missing(dir: &Path) -> Result<Vec<String>, String> {
    let requirements = std::fs::read_to_string(dir.join("requirements.txt"))
        .map_err(|e| format!("cannot read interop/python/requirements.txt: {e}"))?;
    let mut installed = Vec::new();
    if let Ok(libs) = std::fs::read_dir(dir.join(".venv/lib")) {
        for lib in libs.flatten() {
            if let Ok(entries) = std::fs::read_dir(lib.path().join("site-packages")) {
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if let Some(stem) = name.strip_suffix(".dist-info") {
                        installed.push(normalize_package(stem));
                    }
                }
            }
        }
    }
    let mut missing = Vec::new();
    for line in requirements.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((name, version)) = line.split_once("==") else {
            return Err(format!(
                "requirements.txt must pin exact versions (name==version): {line:?}"
            ));
        };
        let wanted = normalize_package(&format!("{}-{}", name.trim(), version.trim()));
        if !installed.contains(&wanted) {
            missing.push(line.to_owned());
        }
    }
    Ok(missing)
}

fn install_python() -> Result<Programs, String> {
    let dir = repo_root().join("interop/python");
    let venv_python = dir.join(".venv/bin/python");
    let _lock = install_lock(&target_dir()?)?;
    let missing = python_missing(&dir)?;
    if !missing.is_empty() || !venv_python.exists() {
        eprintln!(
            "acp-interop: installing interop/python/requirements.txt into interop/python/.venv (missing: {})",
            missing.join(", ")
        );
        if !venv_python.exists() {
            run_install_step(
                Command::new("python3")
                    .args(["-m", "venv", ".venv"])
                    .current_dir(&dir),
                "`python3 -m venv .venv` in interop/python (Python 3.10 or newer is needed)",
            )?;
        }
        run_install_step(
            Command::new(&venv_python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    "--quiet",
                    "-r",
                    "requirements.txt",
                ])
                .current_dir(&dir),
            "`pip install -r requirements.txt` in interop/python/.venv",
        )?;
        let missing = python_missing(&dir)?;
        if !missing.is_empty() {
            return Err(format!(
                "after pip install, still missing: {}",
                missing.join(", ")
            ));
        }
    }
    Ok(Programs {
        interpreter: venv_python,
        dir,
        agent: "agent.py",
        client: "client.py",
    })
}

/// Quotes `word` for a POSIX shell-like command line (as `acp --agent` parses it).
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
