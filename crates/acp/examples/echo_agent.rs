//! A complete, minimal ACP agent: it echoes the user's prompt back, word by word.
//!
//! The agent speaks newline-delimited JSON-RPC on its standard input and
//! output, so an editor (or this crate's `client` example) runs it as a child
//! process:
//!
//! ```text
//! cargo run -q -p acp --example client -- "cargo run -q -p acp --example echo_agent" -- hello world
//! ```
//!
//! What it implements:
//!
//! - `initialize`: protocol version 1, no authentication methods.
//! - `session/new`: hands out session ids `echo-1`, `echo-2`, …
//! - `session/prompt`: streams the prompt's text back as several
//!   `agent_message_chunk` updates (one per word, with a short pause so the
//!   streaming is visible), then ends the turn with `end_turn`. A prompt for
//!   a session it did not create is refused with "resource not found".
//! - `session/cancel`: stops streaming and ends the turn with `cancelled`.
//!
//! Standard output belongs to the protocol: log to standard error only.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp::schema::{
    AgentSide, ContentBlock, Error, Implementation, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, ProtocolVersion,
    SessionId, SessionNotification, SessionUpdate, StopReason,
};
use acp::{Agent, AgentSideConnection, RequestContext, Transport};

/// The pause between two streamed words.
const WORD_DELAY: Duration = Duration::from_millis(30);

#[derive(Default)]
struct EchoAgent {
    /// The last session number handed out.
    last_session: AtomicU64,
    /// The sessions this agent created; prompts name one of them.
    sessions: Mutex<HashSet<SessionId>>,
}

impl Agent for EchoAgent {
    async fn initialize(
        &self,
        request: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        eprintln!(
            "echo_agent: client speaks protocol version {}",
            request.protocol_version
        );
        // We only speak version 1. A client that wanted another version reads
        // ours and decides whether to go on. `InitializeResponse::new` lists no
        // authentication methods, so no `authenticate` call is needed.
        Ok(InitializeResponse::new(ProtocolVersion::V1)
            .agent_info(Implementation::new("echo_agent", env!("CARGO_PKG_VERSION"))))
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        let n = self.last_session.fetch_add(1, Ordering::Relaxed) + 1;
        let id = SessionId::new(format!("echo-{n}"));
        eprintln!("echo_agent: session {id} in {}", request.cwd);
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(id.clone());
        Ok(NewSessionResponse::new(id))
    }

    async fn prompt(
        &self,
        request: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let known = self
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(&request.session_id);
        if !known {
            return Err(Error::resource_not_found(None)
                .data(format!("no session {} on this agent", request.session_id)));
        }

        // The text of the prompt; images and other blocks are ignored.
        let text: Vec<&str> = request
            .prompt
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        let text = text.join("\n");

        // One chunk per word, keeping the whitespace that follows it, so the
        // chunks put together are the prompt's text exactly.
        for word in text.split_inclusive(char::is_whitespace) {
            tokio::select! {
                // Cancelled by the runtime when the client sends
                // `session/cancel` for this session.
                _ = cx.cancelled() => {
                    // A cancelled turn must still be answered, with `cancelled`.
                    return Ok(PromptResponse::new(StopReason::Cancelled));
                }
                _ = tokio::time::sleep(WORD_DELAY) => {}
            }
            send_chunk(cx.peer(), &request.session_id, word).await?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    // `session/cancel` needs no method of its own here: the runtime cancels
    // the prompt's context (see `prompt`) before calling `Agent::cancel`,
    // whose default does nothing else.
}

/// Streams one piece of the agent's answer to the client.
async fn send_chunk(
    client: &AgentSideConnection,
    session: &SessionId,
    text: &str,
) -> Result<(), Error> {
    let update = SessionUpdate::agent_message(text);
    client
        .session_notification(SessionNotification::new(session.clone(), update))
        .await?; // Fails only if the client went away.
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Serve until the client closes our standard input.
    AgentSideConnection::serve(Transport::stdio(), |_| EchoAgent::default()).await?;
    Ok(())
}
