//! How a session is shown: one [`View`] over one [`Store`].
//!
//! Every session update goes to [`View::update`], which first records it
//! in the store (what the tool calls, the plan, the usage, the mode *are*)
//! and then has the screen show it:
//!
//! - plain (`acp exec`): the reply as plain text on standard output, tool
//!   calls, plans and permission decisions summarised on standard error;
//! - JSON lines (`acp exec --format json`): every update as one JSON line;
//! - chat (`acp chat`): a scrolling transcript with a live area during a
//!   turn ([`chat`]).
//!
//! The notes the screens share (a notice, a mode switch, what the agent
//! says of its progress) are written here once ([`notes`]), and so is
//! every text of token usage ([`usage`]) and every diff ([`diff`]); the
//! screens only lay out what is theirs.
//!
//! The view is the lowest layer that knows the protocol: it uses only the
//! leaf helpers ([`crate::style`]), and the client ([`crate::host`]), the
//! session and the commands above it show everything through it. A new way
//! to show a session is a `Screen` variant with a file here; a new kind of
//! update is recorded in the [`Store`] and laid out by each screen.

pub mod chat;
pub mod diff;
mod json;
pub mod markdown;
pub mod notes;
mod plain;
pub mod store;
pub mod usage;

use chat::Transcript;
use chat::output::ChatOutput;
use json::JsonLines;
use plain::Plain;
use std::io::Write;
pub use store::{Commands, Store};

use acp::schema::*;

/// Shows a session: the store of what its updates said, and the screen.
pub struct View {
    store: Store,
    screen: Screen,
    /// While a loaded session replays its history, the plain and chat
    /// screens show nothing (JSON lines show it all).
    replaying: bool,
}

/// Where and how updates are shown.
enum Screen {
    /// `acp exec`, text.
    Plain(Plain),
    /// `acp exec --format json`.
    Json(JsonLines),
    /// `acp chat`.
    Chat(Box<Transcript>),
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let screen = match self.screen {
            Screen::Plain(_) => "plain",
            Screen::Json(_) => "json",
            Screen::Chat(_) => "chat",
        };
        f.debug_struct("View")
            .field("screen", &screen)
            .finish_non_exhaustive()
    }
}

impl View {
    fn with(screen: Screen, commands: Commands) -> Self {
        View {
            store: Store::new(commands),
            screen,
            replaying: false,
        }
    }

    /// The plain view of `acp exec`: the reply to `out`, notes to `err`.
    pub fn plain(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        Self::with(Screen::Plain(Plain::new(out, err)), Commands::default())
    }

    /// The JSON lines view of `acp exec --format json`: updates and the
    /// result to `out`, notes to `err`.
    pub fn json_lines(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        Self::with(Screen::Json(JsonLines::new(out, err)), Commands::default())
    }

    /// The plain view (or with `json` the JSON lines view) on standard
    /// output and standard error.
    pub fn stdio(json: bool) -> Self {
        let (out, err) = (Box::new(std::io::stdout()), Box::new(std::io::stderr()));
        if json {
            Self::json_lines(out, err)
        } else {
            Self::plain(out, err)
        }
    }

    /// The view of `acp chat`: a transcript written to `out` (standard
    /// output, or above the line editor's prompt: [`chat::output`]); the
    /// agent's slash commands go to `commands`.
    pub fn chat(color: bool, commands: Commands, out: Box<dyn Write + Send>) -> Self {
        Self::with(
            Screen::Chat(Box::new(Transcript::new(out, color))),
            commands,
        )
    }

    /// What the session's updates said.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// What the session's updates said, to change (chat: a mode or an
    /// option set by a command, the state of a session response).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The chat transcript, when this is the chat view.
    pub fn transcript(&mut self) -> Option<&mut Transcript> {
        match &mut self.screen {
            Screen::Chat(t) => Some(t),
            _ => None,
        }
    }

    /// The owner of chat's live area, when this is the chat view.
    pub fn live_output(&self) -> Option<ChatOutput> {
        match &self.screen {
            Screen::Chat(t) => t.live_output(),
            _ => None,
        }
    }

    /// Whether output is coloured.
    pub fn color(&self) -> bool {
        matches!(&self.screen, Screen::Chat(t) if t.style().enabled())
    }

    /// Ends a partly printed line of streamed text, so that a question or
    /// a message starts on a line of its own.
    pub fn break_line(&mut self) {
        match &mut self.screen {
            Screen::Plain(p) => p.break_line(),
            Screen::Json(_) => {}
            Screen::Chat(t) => t.break_line(),
        }
    }

    /// Marks the start or end of a history replay (`session/load`).
    pub fn set_replaying(&mut self, replaying: bool) {
        self.replaying = replaying;
    }

    /// Writes a note: a line on standard error, or a dimmed line of the
    /// transcript.
    pub fn note(&mut self, line: &str) {
        match &mut self.screen {
            Screen::Plain(p) => p.note(line),
            Screen::Json(j) => j.note(line),
            Screen::Chat(t) => t.note(line),
        }
    }

    /// Records and shows one session update.
    pub fn update(&mut self, notification: &SessionNotification) {
        let update = &notification.update;
        let change = self.store.apply(update);
        match &mut self.screen {
            // JSON lines show every update, history replays included.
            Screen::Json(j) => {
                j.update(notification);
                return;
            }
            _ if self.replaying => return,
            Screen::Plain(_) | Screen::Chat(_) => {}
        }
        match update {
            SessionUpdate::Notice(notice) => self.note(&notes::notice(notice)),
            SessionUpdate::CurrentModeUpdate(m) => {
                self.note(&format!("[mode] {}", m.current_mode_id))
            }
            _ => match &mut self.screen {
                Screen::Plain(p) => p.show(update, &self.store),
                Screen::Chat(t) => t.show(update, &self.store, &change),
                Screen::Json(_) => {}
            },
        }
        if let Some(status) = notes::agent_status(notification) {
            self.status(&status);
        }
    }

    /// What happens to the link to a remote agent: a note when it breaks
    /// and when it is resumed (every attempt in the plain and JSON views).
    /// In chat the status line says "reconnecting…" meanwhile, and the line
    /// the agent is writing stays open.
    pub fn link(&mut self, event: &acp::remote::LinkEvent) {
        use acp::remote::LinkEvent;
        let Some(note) = notes::link(event) else {
            return;
        };
        match (&mut self.screen, event) {
            (Screen::Chat(t), LinkEvent::Reconnecting { attempt, .. }) => {
                t.live_status(&notes::reconnecting_status(*attempt));
                if *attempt == 1 {
                    t.note_aside(&note);
                }
            }
            (Screen::Chat(t), _) => {
                t.clear_live_status();
                t.note_aside(&note);
            }
            _ => self.note(&note),
        }
    }

    /// What the agent last said about its own progress (a retry, …): in
    /// the status line of chat's live area, else a note.
    fn status(&mut self, text: &str) {
        if let Screen::Chat(t) = &mut self.screen
            && t.live_status(text)
        {
            return;
        }
        self.note(&format!("[status] {text}"));
    }

    /// Chat: the turn (or the replay of a loaded session) is over: what
    /// it left running in the live area is committed.
    pub fn end_turn(&mut self) {
        if let Screen::Chat(t) = &mut self.screen {
            t.end_turn(&self.store);
        }
    }

    /// Ends the output of a turn that `response` answered: in text a final
    /// newline if the reply did not end with one (and the stop reason), in
    /// JSON lines the result line, in chat the status line.
    pub fn finish(&mut self, session_id: &SessionId, response: &PromptResponse) {
        // The unstable `usage` field, or the same object under `_meta.usage`
        // (where agents that keep to the stable schema, acp-agent among
        // them, put it).
        self.store.turn_usage = response
            .usage
            .clone()
            .or_else(|| response.meta.as_ref().and_then(|meta| meta.get_as("usage")));
        let stop = &response.stop_reason;
        match &mut self.screen {
            Screen::Plain(p) => p.finish(stop),
            Screen::Json(j) => j.finish(session_id, stop),
            Screen::Chat(t) => t.status_line(&self.store, Some(stop)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(response: &str) -> Option<Usage> {
        let mut view = View::plain(Box::new(std::io::sink()), Box::new(std::io::sink()));
        let response: PromptResponse = acp::schema::decode(response).unwrap();
        view.finish(&SessionId::new("s"), &response);
        view.store().turn_usage.clone()
    }

    #[test]
    fn the_turns_usage_is_read_from_the_result_or_its_meta() {
        let usage = Usage::new(150, 120, 30);
        let top = r#"{"stopReason":"end_turn","usage":{"totalTokens":150,"inputTokens":120,"outputTokens":30}}"#;
        assert_eq!(finished(top), Some(usage.clone()));
        let meta = r#"{"stopReason":"end_turn","_meta":{"usage":{"totalTokens":150,"inputTokens":120,"outputTokens":30}}}"#;
        assert_eq!(finished(meta), Some(usage));
        assert_eq!(
            finished(r#"{"stopReason":"end_turn","_meta":{"usage":7}}"#),
            None
        );
    }
}
