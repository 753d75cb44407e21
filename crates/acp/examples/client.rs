//! A minimal ACP client (editor side): starts an agent, sends it one prompt and
//! prints the answer as it streams in.
//!
//! ```text
//! client <agent command line> [-- <prompt words>...]
//! ```
//!
//! - `<agent command line>` is ONE argument, parsed like a shell would split
//!   it (quotes and backslashes, no expansion), e.g. `"npx -y my-agent --flag"`.
//! - The words after `--` are joined with spaces into the prompt; without
//!   them the prompt is `Hello!`.
//!
//! The agent's message text goes to standard output as it arrives; the stop
//! reason and the agent's own standard error go to standard error. Ctrl-C
//! cancels the turn (`session/cancel`); the agent then ends it with
//! `cancelled`.
//!
//! ```text
//! cargo run -q -p acp --example client -- "cargo run -q -p acp --example echo_agent" -- hello world
//! ```
//!
//! Policy, kept deliberately simple:
//!
//! - Permission requests are answered with the first option that allows
//!   (`allow_once` or `allow_always`); if there is none, with the first option
//!   that rejects; with no options at all, as cancelled. A real editor asks
//!   the user.
//! - File system requests are refused: this client does not advertise the
//!   `fs` capability, so a well-behaved agent does not send them.

use std::io::Write;
use std::process::ExitCode;

use acp::schema::{
    CancelNotification, ClientCapabilities, ClientSide, Error, Implementation, InitializeRequest,
    NewSessionRequest, PermissionOptionKind, PromptRequest, ProtocolVersion, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionRequest, RequestPermissionResponse, SessionNotification,
    SessionUpdate, WriteTextFileRequest, WriteTextFileResponse,
};
use acp::{AgentCommand, Client, ConnectionOptions, NotificationContext, RequestContext};

const USAGE: &str = "usage: client <agent command line> [-- <prompt words>...]";

/// How our side answers the agent's calls.
struct PrintingClient;

impl Client for PrintingClient {
    async fn session_notification(
        &self,
        notification: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        // Only the agent's message text is shown; thoughts, tool calls, plans
        // and the rest are ignored by this minimal client.
        if let SessionUpdate::AgentMessageChunk(chunk) = notification.update {
            if let Some(text) = chunk.content.as_text() {
                let mut out = std::io::stdout().lock();
                // Flush each chunk so the text appears as it streams in.
                let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            }
        }
        Ok(())
    }

    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        let allows = |kind: &PermissionOptionKind| {
            matches!(
                kind,
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
            )
        };
        let rejects = |kind: &PermissionOptionKind| {
            matches!(
                kind,
                PermissionOptionKind::RejectOnce | PermissionOptionKind::RejectAlways
            )
        };
        let chosen = (request.options.iter().find(|o| allows(&o.kind)))
            .or_else(|| request.options.iter().find(|o| rejects(&o.kind)));
        Ok(match chosen {
            Some(option) => {
                eprintln!("[permission: answering {:?}]", option.name);
                RequestPermissionResponse::selected(option.option_id.clone())
            }
            None => RequestPermissionResponse::cancelled(),
        })
    }

    async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        Err(refuse_fs("read", &request.path))
    }

    async fn write_text_file(
        &self,
        request: WriteTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WriteTextFileResponse, Error> {
        Err(refuse_fs("write", &request.path))
    }
}

fn refuse_fs(what: &str, path: &str) -> Error {
    Error::invalid_request().data(format!(
        "this client gives no file system access (refused to {what} {path})"
    ))
}

/// The agent command line and the prompt, from our arguments.
fn parse_args() -> Result<(AgentCommand, String), String> {
    let mut args = std::env::args().skip(1);
    let command_line = args.next().ok_or(USAGE)?;
    let command = AgentCommand::parse(&command_line).map_err(|e| format!("{e}\n{USAGE}"))?;
    let prompt = match args.next().as_deref() {
        None => "Hello!".to_owned(),
        Some("--") => args.collect::<Vec<_>>().join(" "),
        Some(other) => {
            return Err(format!(
                "unexpected argument {other:?}: quote the agent command line as one argument\n{USAGE}"
            ));
        }
    };
    Ok((command, prompt))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (command, prompt) = match parse_args() {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(command, prompt).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: AgentCommand, prompt: String) -> Result<(), Box<dyn std::error::Error>> {
    // Start the agent and connect to it; show what it writes to its
    // standard error. `agent` owns the process and is the connection.
    let mut agent = command
        .on_stderr(|line| eprintln!("[agent] {line}"))
        .connect(ConnectionOptions::default(), |_| PrintingClient)?;

    let init = InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(ClientCapabilities::new())
        .client_info(Implementation::new(
            "acp-example-client",
            env!("CARGO_PKG_VERSION"),
        ));
    let init = agent.initialize(init).await?;
    if init.protocol_version != ProtocolVersion::V1 {
        return Err(format!(
            "the agent speaks protocol version {}, we speak 1",
            init.protocol_version
        )
        .into());
    }
    if !init.auth_methods.is_empty() {
        eprintln!("[the agent offers authentication; this client does not authenticate]");
    }

    let cwd = std::env::current_dir()?;
    let session = agent
        .new_session(NewSessionRequest::new(cwd.to_string_lossy()))
        .await?
        .session_id;

    // Run the turn; on Ctrl-C, ask the agent to cancel it and keep waiting for
    // its answer (which should then be `cancelled`).
    let reply = {
        let turn = agent.prompt(PromptRequest::new(session.clone(), vec![prompt.into()]));
        tokio::pin!(turn);
        tokio::select! {
            reply = &mut turn => reply?,
            _ = tokio::signal::ctrl_c() => {
                agent.cancel(CancelNotification::new(session)).await?;
                turn.await?
            }
        }
    };
    println!();
    eprintln!("stop reason: {}", reply.stop_reason);

    // Closes the agent's standard input, which tells it to exit, and stops
    // it if it does not.
    agent.shutdown().await?;
    Ok(())
}
