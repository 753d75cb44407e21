//! Terminals run by the client for the agent: start a command, read its output,
//! wait for it, kill it and release it. Needs the `terminal` client capability.

use crate::util::{id_type, setters, wire_struct};
use crate::{Meta, SessionId};

id_type!(
    /// Identifies a terminal created with `terminal/create`.
    TerminalId
);

wire_struct! {
    /// One environment variable for a command.
    pub struct EnvVariable {
        /// The variable's name.
        pub name: String = "name" (Req),
        /// Its value.
        pub value: String = "value" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl EnvVariable {
    /// The variable `name` set to `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        EnvVariable {
            name: name.into(),
            value: value.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(EnvVariable { opt { meta: Meta } });

wire_struct! {
    /// Params of `terminal/create`: start `command` in a new terminal.
    pub struct CreateTerminalRequest {
        /// The session asking.
        pub session_id: SessionId = "sessionId" (Req),
        /// The program to run.
        pub command: String = "command" (Req),
        /// Its arguments (omitted when empty; `null` reads as empty).
        pub args: Vec<String> = "args" (NullDfltNonEmpty),
        /// Extra environment variables (omitted when empty; `null` reads as empty).
        pub env: Vec<EnvVariable> = "env" (NullDfltNonEmpty),
        /// Absolute working directory.
        pub cwd: Option<String> = "cwd" (Opt),
        /// Most output bytes to keep; beyond it the client drops the oldest output,
        /// cutting at a character boundary.
        pub output_byte_limit: Option<u64> = "outputByteLimit" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
        }
    }
}

setters!(CreateTerminalRequest {
    set { args: Vec<String>, env: Vec<EnvVariable> }
    opt { cwd: String, output_byte_limit: u64, meta: Meta }
});

wire_struct! {
    /// Result of `terminal/create`.
    pub struct CreateTerminalResponse {
        /// The new terminal.
        pub terminal_id: TerminalId = "terminalId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CreateTerminalResponse {
    /// A response naming `terminal_id`.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        CreateTerminalResponse {
            terminal_id: terminal_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CreateTerminalResponse { opt { meta: Meta } });

/// Declares a request that names one terminal of one session.
macro_rules! terminal_request {
    ($(#[$attr:meta])* $name:ident) => {
        wire_struct! {
            $(#[$attr])*
            pub struct $name {
                /// The session asking.
                pub session_id: SessionId = "sessionId" (Req),
                /// The terminal.
                pub terminal_id: TerminalId = "terminalId" (Req),
                /// Extension metadata.
                pub meta: Option<Meta> = "_meta" (MetaField),
            }
        }

        impl $name {
            /// Names `terminal_id` in `session_id`.
            pub fn new(session_id: impl Into<SessionId>, terminal_id: impl Into<TerminalId>) -> Self {
                $name {
                    session_id: session_id.into(),
                    terminal_id: terminal_id.into(),
                    meta: None,
                    extra: Default::default(),
                }
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}

/// Declares a response with nothing but `_meta`.
macro_rules! empty_response {
    ($(#[$attr:meta])* $name:ident) => {
        wire_struct! {
            $(#[$attr])*
            #[derive(Default)]
            pub struct $name {
                /// Extension metadata.
                pub meta: Option<Meta> = "_meta" (MetaField),
            }
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

wire_struct! {
    /// Result of `terminal/output`.
    pub struct TerminalOutputResponse {
        /// The output kept so far.
        pub output: String = "output" (Req),
        /// Whether older output was dropped to stay within the byte limit.
        pub truncated: bool = "truncated" (Req),
        /// How the command ended, once it has.
        pub exit_status: Option<TerminalExitStatus> = "exitStatus" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TerminalOutputResponse {
    /// Output of a command still running.
    pub fn new(output: impl Into<String>, truncated: bool) -> Self {
        TerminalOutputResponse {
            output: output.into(),
            truncated,
            exit_status: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TerminalOutputResponse { opt { exit_status: TerminalExitStatus, meta: Meta } });

wire_struct! {
    /// How a command ended: an exit code, a signal, or (rarely) neither.
    #[derive(Default)]
    pub struct TerminalExitStatus {
        /// The exit code; absent when a signal ended the process.
        pub exit_code: Option<u32> = "exitCode" (Lenient),
        /// The signal that ended the process (`SIGTERM`); absent on a normal exit.
        pub signal: Option<String> = "signal" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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

wire_struct! {
    /// Result of `terminal/wait_for_exit`: the exit status fields, at the top level.
    #[derive(Default)]
    pub struct WaitForTerminalExitResponse {
        /// The exit code; absent when a signal ended the process.
        pub exit_code: Option<u32> = "exitCode" (Lenient),
        /// The signal that ended the process; absent on a normal exit.
        pub signal: Option<String> = "signal" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
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
            extra: Default::default(),
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
