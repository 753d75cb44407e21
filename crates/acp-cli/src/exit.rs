//! Exit codes of `acp exec`, one per way a run can end.
//!
//! | code | meaning |
//! | ---- | ------- |
//! | 0    | the turn ended normally (`end_turn`) |
//! | 1    | the agent answered with an error, sent a malformed answer or a message over the size limit (64 MiB), speaks an unsupported protocol version, or needs authentication |
//! | 2    | usage error (bad arguments, empty prompt, bad config file) |
//! | 3    | the agent refused (`refusal`) |
//! | 4    | the agent hit a limit (`max_tokens` or `max_turn_requests`) |
//! | 5    | the turn ended, but a permission request was denied |
//! | 6    | the agent crashed or closed the connection during the run |
//! | 124  | the turn did not end within `--timeout` (it was cancelled, then the agent stopped) |
//! | 127  | the agent program was not found |
//! | 129  | `acp chat` ended because its terminal hung up (SIGHUP) or it was told to stop (SIGTERM) |
//! | 130  | the turn was cancelled (Ctrl-C / SIGINT) |

/// The turn ended normally (`end_turn`).
pub const OK: u8 = 0;
/// The agent answered with an error or broke the protocol.
pub const AGENT_ERROR: u8 = 1;
/// Bad command-line arguments, an empty prompt or a bad config file.
pub const USAGE: u8 = 2;
/// The agent refused to continue (`refusal`).
pub const REFUSAL: u8 = 3;
/// The agent hit a token or turn-request limit.
pub const LIMIT: u8 = 4;
/// The turn ended after at least one permission request was denied.
pub const PERMISSION_DENIED: u8 = 5;
/// The agent process died or closed the connection.
pub const AGENT_CRASHED: u8 = 6;
/// The turn did not end within `--timeout`.
pub const TIMEOUT: u8 = 124;
/// The agent program could not be found.
pub const AGENT_NOT_FOUND: u8 = 127;
/// `acp chat` was hung up on (SIGHUP) or told to stop (SIGTERM).
pub const HANGUP: u8 = 129;
/// The turn was cancelled.
pub const CANCELLED: u8 = 130;

/// The exit-code table as shown at the end of `acp exec --help`.
pub const HELP_TABLE: &str = "\
Exit codes:
    0    the turn ended normally (end_turn)
    1    agent error: error answer, malformed answer, message over 64 MiB, unsupported protocol version, authentication required
    2    usage error
    3    the agent refused (refusal)
    4    the agent hit a limit (max_tokens, max_turn_requests)
    5    the turn ended, but a permission request was denied
    6    the agent crashed or closed the connection
    124  the turn did not end within --timeout (cancelled, then the agent was stopped)
    127  the agent program was not found
    130  cancelled (Ctrl-C)";

/// An error that ends the program with a message and an exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The process exit code.
    pub code: u8,
    /// What to tell the user (may span several lines).
    pub message: String,
    /// The JSON-RPC error the agent answered with, when that is what
    /// failed; `acp exec --format json` reports it as it came.
    pub error: Option<Box<acp::schema::Error>>,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            error: None,
        }
    }

    /// The same failure, caused by the agent's error answer `error`.
    pub fn caused_by(mut self, error: acp::schema::Error) -> Self {
        self.error = Some(Box::new(error));
        self
    }

    /// The one JSON line that ends the output of `acp exec --format json`
    /// when the run fails: acp's message and exit code, the session when
    /// one was open, and the agent's JSON-RPC error (code, message, data)
    /// when there was one.
    pub fn json_line(&self, session: Option<&str>) -> String {
        let mut line = serde_json::Map::new();
        if let Some(error) = &self.error {
            let value = serde_json::to_value(error).unwrap_or(serde_json::Value::Null);
            line.insert("error".into(), value);
        }
        line.insert("exitCode".into(), self.code.into());
        line.insert("message".into(), self.message.clone().into());
        if let Some(session) = session {
            line.insert("sessionId".into(), session.into());
        }
        serde_json::Value::Object(line).to_string()
    }

    /// A usage error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(USAGE, message)
    }

    /// An agent error (exit code 1).
    pub fn agent(message: impl Into<String>) -> Self {
        Self::new(AGENT_ERROR, message)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}
