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
//! | 127  | the agent program was not found |
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
/// The agent program could not be found.
pub const AGENT_NOT_FOUND: u8 = 127;
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
    127  the agent program was not found
    130  cancelled (Ctrl-C)";

/// An error that ends the program with a message and an exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process exit code.
    pub code: u8,
    /// What to tell the user (may span several lines).
    pub message: String,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
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
