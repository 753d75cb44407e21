//! The login shapes real agents use, for `ACP_TEST_AGENT_AUTH=SHAPE`:
//!
//! | shape | imitates | methods | until logged in |
//! | ----- | -------- | ------- | --------------- |
//! | `terminal` | claude-agent-acp | `console-login`, a terminal login (`--login console`, env `TEST_LOGIN_MODE=console`), offered only when the client advertises `auth.terminal` or `_meta["terminal-auth"]` (which also gets the whole command in the method's `_meta["terminal-auth"]`) | `session/new` answers `auth_required` until the login ran |
//! | `env-hint` | qwen-code, gemini | `test-key`, an agent method whose description names `` `TEST_AGENT_API_KEY` `` and whose `_meta` names a terminal login (`--login key`) | `session/new` answers `auth_required` with the method in `data.authMethods`, unless `TEST_AGENT_API_KEY` is set |
//! | `error-data` | codex-acp | `test-api-key` (`type: env_var`, var `TEST_AGENT_API_KEY`) and `browser` (an agent method that always fails) | `authenticate test-api-key` fails with `data: "TEST_AGENT_API_KEY is not set"` while it is unset; `session/new` answers `auth_required` until `authenticate` succeeded |
//!
//! A terminal login is this program run with `--login MODE`: it asks for a
//! code on its terminal and, given `1234`, writes `logged-in` (with the mode
//! and `TEST_LOGIN_MODE`) into `ACP_TEST_AGENT_STATE` and exits 0; it
//! appends its arguments to `ACP_TEST_AGENT_STATE/login-args`.

use acp::schema::*;
use serde_json::json;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Which shape the agent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Terminal,
    EnvHint,
    ErrorData,
}

pub fn shape() -> Option<Shape> {
    match std::env::var("ACP_TEST_AGENT_AUTH").ok()?.as_str() {
        "terminal" => Some(Shape::Terminal),
        "env-hint" => Some(Shape::EnvHint),
        "error-data" => Some(Shape::ErrorData),
        _ => None,
    }
}

fn state_dir() -> Option<PathBuf> {
    std::env::var_os("ACP_TEST_AGENT_STATE").map(PathBuf::from)
}

fn logged_in() -> bool {
    state_dir().is_some_and(|d| d.join("logged-in").exists())
}

fn key_set() -> bool {
    std::env::var_os("TEST_AGENT_API_KEY").is_some_and(|v| !v.is_empty())
}

fn method(value: serde_json::Value) -> AuthMethod {
    serde_json::from_value(value).expect("a valid auth method")
}

/// The methods of `shape` for a client with these capabilities.
pub fn methods(shape: Shape, caps: &ClientCapabilities) -> Vec<AuthMethod> {
    match shape {
        Shape::Terminal => {
            let meta_flag = caps
                .meta
                .as_ref()
                .and_then(|m| m.get_as::<bool>("terminal-auth"))
                == Some(true);
            if !caps.auth.terminal && !meta_flag {
                return Vec::new();
            }
            let mut login = json!({
                "type": "terminal",
                "id": "console-login",
                "name": "Test Console",
                "description": "Log in to the test console",
                "args": ["--login", "console"],
                "env": {"TEST_LOGIN_MODE": "console"},
            });
            if meta_flag {
                let exe = std::env::current_exe().unwrap_or_default();
                login["_meta"] = json!({"terminal-auth": {
                    "command": exe.to_string_lossy(),
                    "args": ["--login", "console"],
                    "label": "Test Console Login",
                }});
            }
            vec![method(login)]
        }
        Shape::EnvHint => vec![method(hint_method())],
        Shape::ErrorData => vec![
            method(json!({
                "type": "env_var",
                "id": "test-api-key",
                "name": "Use TEST_AGENT_API_KEY",
                "vars": [{"name": "TEST_AGENT_API_KEY"}],
                "description": "Requires setting the `TEST_AGENT_API_KEY` environment variable.",
            })),
            method(json!({
                "id": "browser",
                "name": "Log in with a browser",
                "description": "Opens the login page in your browser",
            })),
        ],
    }
}

fn hint_method() -> serde_json::Value {
    json!({
        "id": "test-key",
        "name": "Use a test key",
        "description": "Requires setting the `TEST_AGENT_API_KEY` environment variable",
        "_meta": {"type": "terminal", "args": ["--login", "key"]},
    })
}

/// `authenticate`: `Ok(true)` once logged in.
pub fn authenticate(shape: Shape, id: &str) -> Result<bool, Error> {
    match (shape, id) {
        (Shape::ErrorData, "test-api-key") if key_set() => Ok(true),
        (Shape::ErrorData, "test-api-key") => {
            Err(Error::new(ErrorCode::INTERNAL_ERROR, "Internal error")
                .data("TEST_AGENT_API_KEY is not set"))
        }
        (Shape::ErrorData, "browser") => Err(Error::new(
            ErrorCode::INTERNAL_ERROR,
            "failed to open the browser: no opener found",
        )),
        (Shape::EnvHint, "test-key") if key_set() => Ok(true),
        (Shape::EnvHint, "test-key") => Err(Error::new(
            ErrorCode::AUTH_REQUIRED,
            "Authentication required: TEST_AGENT_API_KEY is missing",
        )),
        _ => Err(Error::new(ErrorCode::INVALID_PARAMS, "unknown auth method")),
    }
}

/// Whether `session/new` may go ahead.
pub fn check_session(shape: Shape, authenticated: bool) -> Result<(), Error> {
    match shape {
        Shape::Terminal if logged_in() => Ok(()),
        Shape::Terminal => Err(Error::auth_required()),
        Shape::EnvHint if key_set() || authenticated => Ok(()),
        Shape::EnvHint => Err(Error::new(
            ErrorCode::AUTH_REQUIRED,
            "Authentication required: Use the test CLI to authenticate first.",
        )
        .data(json!({"authMethods": [hint_method()]}))),
        Shape::ErrorData if authenticated => Ok(()),
        Shape::ErrorData => Err(Error::auth_required()),
    }
}

/// `--login MODE` (anywhere in the arguments): the terminal login. Never
/// returns.
pub fn login_main(args: &[String]) -> ! {
    let at = args.iter().position(|a| a == "--login").unwrap_or(0);
    let mode = args.get(at + 1).cloned().unwrap_or_default();
    if let Some(dir) = state_dir() {
        let _ = std::fs::create_dir_all(&dir);
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("login-args"))
        {
            let _ = writeln!(f, "{}", args[1..].join(" "));
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "Test login ({mode}). Code: ");
    let _ = out.flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    if line.trim() != "1234" {
        let _ = writeln!(out, "wrong code");
        std::process::exit(1);
    }
    let env = std::env::var("TEST_LOGIN_MODE").unwrap_or_default();
    if let Some(dir) = state_dir() {
        let _ = std::fs::write(dir.join("logged-in"), format!("{mode} {env}\n"));
    }
    let _ = writeln!(out, "logged in");
    std::process::exit(0);
}
