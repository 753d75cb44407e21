//! Terminals run by the client for the agent: start a command, read its output,
//! wait for it, kill it and release it. Needs the `terminal` client capability.

use crate::util::{default_on_error, id_type, meta, setters};
use crate::{Meta, SessionId};
use serde::{Deserialize, Serialize};

id_type!(
    /// Identifies a terminal created with `terminal/create`.
    TerminalId
);

/// One environment variable for a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EnvVariable {
    /// The variable's name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl EnvVariable {
    /// The variable `name` set to `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        EnvVariable {
            name: name.into(),
            value: value.into(),
            meta: None,
        }
    }
}

setters!(EnvVariable { opt { meta: Meta } });

/// Params of `terminal/create`: start `command` in a new terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTerminalRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// The program to run.
    pub command: String,
    /// Its arguments (omitted when empty; `null` reads as empty).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::util::default_on_null"
    )]
    pub args: Vec<String>,
    /// Extra environment variables (omitted when empty; `null` reads as empty).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::util::default_on_null"
    )]
    pub env: Vec<EnvVariable>,
    /// Absolute working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Most output bytes to keep; beyond it the client drops the oldest output,
    /// cutting at a character boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_byte_limit: Option<u64>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CreateTerminalRequest {
    /// Runs `command` with no arguments.
    pub fn new(session_id: impl Into<SessionId>, command: impl Into<String>) -> Self {
        CreateTerminalRequest {
            session_id: session_id.into(),
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            output_byte_limit: None,
            meta: None,
        }
    }
}

setters!(CreateTerminalRequest {
    set { args: Vec<String>, env: Vec<EnvVariable> }
    opt { cwd: String, output_byte_limit: u64, meta: Meta }
});

/// Result of `terminal/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTerminalResponse {
    /// The new terminal.
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CreateTerminalResponse {
    /// A response naming `terminal_id`.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        CreateTerminalResponse {
            terminal_id: terminal_id.into(),
            meta: None,
        }
    }
}

setters!(CreateTerminalResponse { opt { meta: Meta } });

/// Declares a request that names one terminal of one session.
macro_rules! terminal_request {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[non_exhaustive]
        pub struct $name {
            /// The session asking.
            pub session_id: SessionId,
            /// The terminal.
            pub terminal_id: TerminalId,
            /// Extension metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "meta")]
            pub meta: Option<Meta>,
        }

        impl $name {
            /// Names `terminal_id` in `session_id`.
            pub fn new(session_id: impl Into<SessionId>, terminal_id: impl Into<TerminalId>) -> Self {
                $name {
                    session_id: session_id.into(),
                    terminal_id: terminal_id.into(),
                    meta: None,
                }
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}

/// Declares a response with nothing but `_meta`.
macro_rules! empty_response {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[non_exhaustive]
        pub struct $name {
            /// Extension metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "meta")]
            pub meta: Option<Meta>,
        }

        impl $name {
            /// An empty response.
            pub fn new() -> Self {
                Self::default()
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}

terminal_request!(
    /// Params of `terminal/output`: the output so far, without waiting.
    TerminalOutputRequest
);

/// Result of `terminal/output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalOutputResponse {
    /// The output kept so far.
    pub output: String,
    /// Whether older output was dropped to stay within the byte limit.
    pub truncated: bool,
    /// How the command ended, once it has.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub exit_status: Option<TerminalExitStatus>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl TerminalOutputResponse {
    /// Output of a command still running.
    pub fn new(output: impl Into<String>, truncated: bool) -> Self {
        TerminalOutputResponse {
            output: output.into(),
            truncated,
            exit_status: None,
            meta: None,
        }
    }
}

setters!(TerminalOutputResponse { opt { exit_status: TerminalExitStatus, meta: Meta } });

/// How a command ended: an exit code, a signal, or (rarely) neither.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TerminalExitStatus {
    /// The exit code; absent when a signal ended the process.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub exit_code: Option<u32>,
    /// The signal that ended the process (`SIGTERM`); absent on a normal exit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub signal: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl TerminalExitStatus {
    /// A normal exit with `code`.
    pub fn exited(code: u32) -> Self {
        TerminalExitStatus {
            exit_code: Some(code),
            ..Self::default()
        }
    }

    /// Ended by `signal`.
    pub fn signaled(signal: impl Into<String>) -> Self {
        TerminalExitStatus {
            signal: Some(signal.into()),
            ..Self::default()
        }
    }
}

setters!(TerminalExitStatus { opt { exit_code: u32, signal: String, meta: Meta } });

terminal_request!(
    /// Params of `terminal/wait_for_exit`: answered once the command has ended.
    WaitForTerminalExitRequest
);

/// Result of `terminal/wait_for_exit`: the exit status fields, at the top level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WaitForTerminalExitResponse {
    /// The exit code; absent when a signal ended the process.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub exit_code: Option<u32>,
    /// The signal that ended the process; absent on a normal exit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub signal: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl WaitForTerminalExitResponse {
    /// A response with neither exit code nor signal; use the setters or `From<TerminalExitStatus>`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The exit code and signal as a [`TerminalExitStatus`] (without `_meta`).
    pub fn exit_status(&self) -> TerminalExitStatus {
        TerminalExitStatus {
            exit_code: self.exit_code,
            signal: self.signal.clone(),
            meta: None,
        }
    }
}

setters!(WaitForTerminalExitResponse { opt { exit_code: u32, signal: String, meta: Meta } });

impl From<TerminalExitStatus> for WaitForTerminalExitResponse {
    /// Copies the exit code and signal; the status's `_meta` is not carried over.
    fn from(status: TerminalExitStatus) -> Self {
        WaitForTerminalExitResponse {
            exit_code: status.exit_code,
            signal: status.signal,
            meta: None,
        }
    }
}

terminal_request!(
    /// Params of `terminal/kill`: stop the command but keep the terminal (and its output).
    KillTerminalRequest
);

empty_response!(
    /// Result of `terminal/kill`.
    KillTerminalResponse
);

/// The schema's former name of [`KillTerminalRequest`].
pub type KillTerminalCommandRequest = KillTerminalRequest;

/// The schema's former name of [`KillTerminalResponse`].
pub type KillTerminalCommandResponse = KillTerminalResponse;

terminal_request!(
    /// Params of `terminal/release`: kill the command if still running and free the
    /// terminal; its id is invalid afterwards.
    ReleaseTerminalRequest
);

empty_response!(
    /// Result of `terminal/release`.
    ReleaseTerminalResponse
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    #[test]
    fn create_defaults_and_nulls() {
        let req: CreateTerminalRequest =
            decode(r#"{"sessionId":"s","command":"ls","args":null,"env":null,"cwd":null}"#)
                .unwrap();
        assert!(req.args.is_empty() && req.env.is_empty() && req.cwd.is_none());
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"sessionId":"s","command":"ls"}"#
        );
        let err = decode::<CreateTerminalRequest>(r#"{"sessionId":"s","command":"ls","args":[1]}"#)
            .unwrap_err();
        assert_eq!(err.path, "args[0]");

        let raw = r#"{"sessionId":"s","command":"npm","args":["test"],"env":[{"name":"CI","value":"1"}],"cwd":"/p","outputByteLimit":1048576}"#;
        let req: CreateTerminalRequest = decode(raw).unwrap();
        assert_eq!(serde_json::to_string(&req).unwrap(), raw);
    }

    #[test]
    fn exit_status_lenient() {
        let r: TerminalOutputResponse = decode(
            r#"{"output":"x","truncated":false,"exitStatus":{"exitCode":-1,"signal":"SIGKILL"}}"#,
        )
        .unwrap();
        assert_eq!(r.exit_status, Some(TerminalExitStatus::signaled("SIGKILL")));
        let r: TerminalOutputResponse =
            decode(r#"{"output":"x","truncated":true,"exitStatus":7}"#).unwrap();
        assert_eq!(r.exit_status, None);
        let w: WaitForTerminalExitResponse = decode(r#"{"exitCode":0,"signal":null}"#).unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), r#"{"exitCode":0}"#);
        assert_eq!(w.exit_status(), TerminalExitStatus::exited(0));
    }
}
