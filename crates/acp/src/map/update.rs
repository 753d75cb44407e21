//! `session/update` between the versions, one session update at a time; each
//! direction remembers what it needs per session.
//!
//! v1 → v2 ([`UpdatesToV2`]): message chunks keep their `messageId`; a chunk
//! without one gets an id of the bridge's (`bridge-msg-N`), the same for the
//! chunks that follow it until the kind of message changes or a tool call
//! comes between (v1 draws no other line, so two v1 messages of the same kind
//! in a row become one). `plan` becomes `plan_update` of the plan `plan` ([`PLAN_ID`]: a
//! v1 session has one). Commands get `type: command` and their input `type:
//! text`. `current_mode_update` becomes a `config_option_update` of the mode
//! option (see [`super::session`]). Unknown kinds pass as they are.
//!
//! v2 → v1 ([`UpdatesToV1`]): chunks keep their ids. A whole message
//! (`user_message`, `agent_message`, `agent_thought`) becomes one chunk per
//! block: v1 has no replacement, so a message replaced after chunks shows
//! twice, and one cleared (`null`, `[]`) is not cleared. State updates have
//! no v1 form (the bridge ends the v1 prompt on idle, and drops the user
//! message that acknowledges it: the v1 client has its prompt already). Tool calls and terminals as [`super::tool_call`]
//! says. Only `items` plans exist in v1, one per session (the last update of
//! any plan wins); an entry `cancelled` is shown `completed`. A command of an
//! unknown type is dropped. A change of the mode option also sends
//! `current_mode_update`.

use super::content::{block_to_v1, block_to_v2, blocks_to_v1, blocks_to_v2, raw_object};
use super::session::{config_option_to_v1, config_options_to_v2, mode_option_id};
use super::tool_call::{ToolCalls, tool_call_to_v2, tool_call_update_to_v2};
use acp_schema::{self as v1, MessageId, SessionId, v2};
use std::collections::HashMap;

/// The kinds of v1 message chunks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Agent,
    Thought,
}

/// What v1 → v2 remembers of a session.
#[derive(Default)]
struct ToV2Session {
    /// The message the last chunk without an id went to, and its kind.
    open: Option<(Kind, MessageId)>,
    /// The agent's config options and modes, to show a mode change.
    options: Vec<v1::SessionConfigOption>,
    modes: Option<v1::SessionModeState>,
}

/// Turns a v1 agent's session updates into v2's.
#[derive(Default)]
pub(crate) struct UpdatesToV2 {
    sessions: HashMap<SessionId, ToV2Session>,
    next_id: u64,
}

impl UpdatesToV2 {
    /// Remembers a session's config options and modes (from `session/new`,
    /// `session/load`, `session/resume`).
    pub(crate) fn set_config(
        &mut self,
        session: &SessionId,
        options: Vec<v1::SessionConfigOption>,
        modes: Option<v1::SessionModeState>,
    ) {
        let s = self.sessions.entry(session.clone()).or_default();
        s.options = options;
        s.modes = modes;
    }

    /// The session's config options as v2 shows them.
    pub(crate) fn config_options(&self, session: &SessionId) -> Vec<v2::SessionConfigOption> {
        match self.sessions.get(session) {
            Some(s) => config_options_to_v2(s.options.clone(), s.modes.as_ref()),
            None => Vec::new(),
        }
    }

    /// Whether the session's modes are shown as the bridge's mode option.
    pub(crate) fn has_mode_option(&self, session: &SessionId) -> bool {
        self.sessions.get(session).is_some_and(|s| {
            s.modes.is_some()
                && !s
                    .options
                    .iter()
                    .any(|o| o.category == Some(v1::SessionConfigOptionCategory::Mode))
        })
    }

    /// Records the mode the agent switched to.
    pub(crate) fn set_mode(&mut self, session: &SessionId, mode: v1::SessionModeId) {
        if let Some(modes) = self
            .sessions
            .get_mut(session)
            .and_then(|s| s.modes.as_mut())
        {
            modes.current_mode_id = mode;
        }
    }

    /// Forgets a session.
    pub(crate) fn forget(&mut self, session: &SessionId) {
        self.sessions.remove(session);
    }

    fn message_id(
        &mut self,
        session: &SessionId,
        kind: Kind,
        given: Option<MessageId>,
    ) -> MessageId {
        let s = self.sessions.entry(session.clone()).or_default();
        if let Some(id) = given {
            s.open = None;
            return id;
        }
        match &s.open {
            Some((k, id)) if *k == kind => id.clone(),
            _ => {
                self.next_id += 1;
                let id = MessageId::new(format!("bridge-msg-{}", self.next_id));
                s.open = Some((kind, id.clone()));
                id
            }
        }
    }

    fn chunk(&mut self, session: &SessionId, kind: Kind, c: v1::ContentChunk) -> v2::ContentChunk {
        let id = self.message_id(session, kind, c.message_id);
        let mut out = v2::ContentChunk::new(id, block_to_v2(c.content));
        out.meta = c.meta;
        out.extra = c.extra;
        out
    }

    /// The v2 updates for one v1 update (none, one, or more).
    pub(crate) fn translate(
        &mut self,
        session: &SessionId,
        update: v1::SessionUpdate,
    ) -> Vec<v2::SessionUpdate> {
        let one = |u: v2::SessionUpdate| vec![u];
        match update {
            v1::SessionUpdate::UserMessageChunk(c) => one(v2::SessionUpdate::UserMessageChunk(
                self.chunk(session, Kind::User, c),
            )),
            v1::SessionUpdate::AgentMessageChunk(c) => one(v2::SessionUpdate::AgentMessageChunk(
                self.chunk(session, Kind::Agent, c),
            )),
            v1::SessionUpdate::AgentThoughtChunk(c) => one(v2::SessionUpdate::AgentThoughtChunk(
                self.chunk(session, Kind::Thought, c),
            )),
            v1::SessionUpdate::ToolCall(call) => {
                self.close_message(session);
                one(v2::SessionUpdate::ToolCallUpdate(tool_call_to_v2(call)))
            }
            v1::SessionUpdate::ToolCallUpdate(update) => {
                self.close_message(session);
                one(v2::SessionUpdate::ToolCallUpdate(tool_call_update_to_v2(
                    update,
                )))
            }
            v1::SessionUpdate::Plan(plan) => one(v2::SessionUpdate::PlanUpdate(plan_to_v2(plan))),
            v1::SessionUpdate::AvailableCommandsUpdate(u) => {
                let commands = u
                    .available_commands
                    .into_iter()
                    .map(command_to_v2)
                    .collect();
                let mut out = v2::AvailableCommandsUpdate::new(commands);
                out.meta = u.meta;
                one(v2::SessionUpdate::AvailableCommandsUpdate(out))
            }
            v1::SessionUpdate::CurrentModeUpdate(m) => {
                if !self.has_mode_option(session) {
                    return Vec::new();
                }
                self.set_mode(session, m.current_mode_id);
                one(v2::SessionUpdate::ConfigOptionUpdate(
                    v2::ConfigOptionUpdate::new(self.config_options(session)),
                ))
            }
            v1::SessionUpdate::ConfigOptionUpdate(u) => {
                let s = self.sessions.entry(session.clone()).or_default();
                s.options = u.config_options;
                let mut out = v2::ConfigOptionUpdate::new(self.config_options(session));
                out.meta = u.meta;
                one(v2::SessionUpdate::ConfigOptionUpdate(out))
            }
            v1::SessionUpdate::SessionInfoUpdate(u) => one(v2::SessionUpdate::SessionInfoUpdate(u)),
            v1::SessionUpdate::UsageUpdate(u) => one(v2::SessionUpdate::UsageUpdate(u)),
            v1::SessionUpdate::Notice(n) => one(v2::SessionUpdate::Notice(n)),
            v1::SessionUpdate::CompactionUpdate(c) => {
                let mut out = v2::CompactionUpdate::new(c.compaction_id, c.status);
                out.summary = c.summary.map(|s| s.map(blocks_to_v2));
                out.error = c.error;
                out.meta = c.meta;
                one(v2::SessionUpdate::CompactionUpdate(out))
            }
            v1::SessionUpdate::CompactionSummaryChunk(c) => {
                let mut out =
                    v2::CompactionSummaryChunk::new(c.compaction_id, block_to_v2(c.content));
                out.meta = c.meta;
                one(v2::SessionUpdate::CompactionSummaryChunk(out))
            }
            v1::SessionUpdate::Other(raw) => one(v2::SessionUpdate::Other(raw)),
            other => one(v2::SessionUpdate::Other(raw_object(&other))),
        }
    }

    fn close_message(&mut self, session: &SessionId) {
        if let Some(s) = self.sessions.get_mut(session) {
            s.open = None;
        }
    }
}

/// The id of the plan a v1 session's plan is in v2 (a v1 session has one).
pub const PLAN_ID: &str = "plan";

/// v1's `plan` as v2's `plan_update` of the plan [`PLAN_ID`] (its entries and
/// `_meta`).
pub fn plan_to_v2(plan: v1::Plan) -> v2::PlanUpdate {
    let entries = plan
        .entries
        .into_iter()
        .map(|e| {
            let mut out = v2::PlanEntry::new(
                e.content,
                e.priority,
                v2::PlanEntryStatus::from(e.status.as_str()),
            );
            out.meta = e.meta;
            out
        })
        .collect();
    let mut out = v2::PlanUpdate::new(v2::PlanItems::new(PLAN_ID, entries));
    out.meta = plan.meta;
    out
}

/// A v1 available command as v2's (`type: command`; free-text input becomes
/// `type: text`, any other input is kept as it is).
pub fn command_to_v2(c: v1::AvailableCommand) -> v2::AvailableCommand {
    let mut out = v2::Command::new(c.name, c.description);
    out.input = c.input.map(|i| match i {
        v1::AvailableCommandInput::Unstructured(u) => {
            let mut t = v2::TextCommandInput::new(u.hint);
            t.meta = u.meta;
            v2::AvailableCommandInput::Text(t)
        }
        other => v2::AvailableCommandInput::Other(raw_object(&other)),
    });
    out.meta = c.meta;
    v2::AvailableCommand::Command(out)
}

/// What v2 → v1 remembers of a session.
#[derive(Default)]
struct ToV1Session {
    /// The agent's config options, to see its mode change.
    options: Vec<v2::SessionConfigOption>,
}

/// Turns a v2 agent's session updates into v1's.
#[derive(Default)]
pub(crate) struct UpdatesToV1 {
    sessions: HashMap<SessionId, ToV1Session>,
    tool_calls: ToolCalls,
}

impl UpdatesToV1 {
    /// Remembers a session's config options.
    pub(crate) fn set_config(
        &mut self,
        session: &SessionId,
        options: Vec<v2::SessionConfigOption>,
    ) {
        self.sessions.entry(session.clone()).or_default().options = options;
    }

    /// The `configId` of the session's mode option.
    pub(crate) fn mode_option(&self, session: &SessionId) -> Option<v1::SessionConfigId> {
        self.sessions
            .get(session)
            .and_then(|s| mode_option_id(&s.options))
    }

    /// Forgets a session.
    pub(crate) fn forget(&mut self, session: &SessionId) {
        self.sessions.remove(session);
        self.tool_calls.forget(session);
    }

    /// The v1 updates for one v2 update (none, one, or more).
    pub(crate) fn translate(
        &mut self,
        session: &SessionId,
        update: v2::SessionUpdate,
    ) -> Vec<v1::SessionUpdate> {
        let one = |u: v1::SessionUpdate| vec![u];
        let chunk = |c: v2::ContentChunk| {
            let mut out = v1::ContentChunk::new(block_to_v1(c.content)).message_id(c.message_id);
            out.meta = c.meta;
            out.extra = c.extra;
            out
        };
        let whole = |m: v2::MessageUpdate, make: fn(v1::ContentChunk) -> v1::SessionUpdate| {
            let id = m.message_id;
            m.content
                .flatten()
                .unwrap_or_default()
                .into_iter()
                .map(|b| make(v1::ContentChunk::new(block_to_v1(b)).message_id(id.clone())))
                .collect::<Vec<_>>()
        };
        match update {
            v2::SessionUpdate::UserMessageChunk(c) => {
                one(v1::SessionUpdate::UserMessageChunk(chunk(c)))
            }
            v2::SessionUpdate::AgentMessageChunk(c) => {
                one(v1::SessionUpdate::AgentMessageChunk(chunk(c)))
            }
            v2::SessionUpdate::AgentThoughtChunk(c) => {
                one(v1::SessionUpdate::AgentThoughtChunk(chunk(c)))
            }
            v2::SessionUpdate::UserMessage(m) => whole(m, v1::SessionUpdate::UserMessageChunk),
            v2::SessionUpdate::AgentMessage(m) => whole(m, v1::SessionUpdate::AgentMessageChunk),
            v2::SessionUpdate::AgentThought(m) => whole(m, v1::SessionUpdate::AgentThoughtChunk),
            v2::SessionUpdate::StateUpdate(_) => Vec::new(),
            v2::SessionUpdate::ToolCallUpdate(u) => one(self.tool_calls.update(session, u)),
            v2::SessionUpdate::ToolCallContentChunk(c) => {
                one(self.tool_calls.content_chunk(session, c))
            }
            v2::SessionUpdate::TerminalUpdate(t) => self.tool_calls.terminal_update(session, t),
            v2::SessionUpdate::TerminalOutputChunk(c) => self.tool_calls.terminal_chunk(session, c),
            v2::SessionUpdate::PlanUpdate(p) => match p.plan {
                v2::PlanUpdateContent::Items(items) => {
                    let entries = items
                        .entries
                        .into_iter()
                        .map(|e| {
                            let status = match e.status {
                                v2::PlanEntryStatus::Cancelled => v1::PlanEntryStatus::Completed,
                                other => v1::PlanEntryStatus::from(other.as_str()),
                            };
                            let mut out = v1::PlanEntry::new(e.content, e.priority, status);
                            out.meta = e.meta;
                            out
                        })
                        .collect::<Vec<_>>();
                    let mut plan = v1::Plan::new(entries);
                    plan.meta = p.meta;
                    one(v1::SessionUpdate::Plan(plan))
                }
                _ => Vec::new(),
            },
            v2::SessionUpdate::AvailableCommandsUpdate(u) => {
                let commands = u
                    .available_commands
                    .into_iter()
                    .filter_map(|c| match c {
                        v2::AvailableCommand::Command(c) => {
                            let mut out = v1::AvailableCommand::new(c.name, c.description);
                            out.input = c.input.and_then(|i| match i {
                                v2::AvailableCommandInput::Text(t) => {
                                    let mut u = v1::UnstructuredCommandInput::new(t.hint);
                                    u.meta = t.meta;
                                    Some(v1::AvailableCommandInput::Unstructured(u))
                                }
                                _ => None,
                            });
                            out.meta = c.meta;
                            Some(out)
                        }
                        _ => None,
                    })
                    .collect::<Vec<_>>();
                let mut out = v1::AvailableCommandsUpdate::new(commands);
                out.meta = u.meta;
                one(v1::SessionUpdate::AvailableCommandsUpdate(out))
            }
            v2::SessionUpdate::ConfigOptionUpdate(u) => {
                let s = self.sessions.entry(session.clone()).or_default();
                let before = super::session::modes_to_v1(&s.options).map(|m| m.current_mode_id);
                s.options = u.config_options.clone();
                let after = super::session::modes_to_v1(&s.options).map(|m| m.current_mode_id);
                let mut out = v1::ConfigOptionUpdate::new(
                    u.config_options
                        .into_iter()
                        .map(config_option_to_v1)
                        .collect::<Vec<_>>(),
                );
                out.meta = u.meta;
                let mut all = vec![v1::SessionUpdate::ConfigOptionUpdate(out)];
                if let (Some(mode), true) = (after.clone(), before != after) {
                    all.push(v1::SessionUpdate::CurrentModeUpdate(
                        v1::CurrentModeUpdate::new(mode),
                    ));
                }
                all
            }
            v2::SessionUpdate::SessionInfoUpdate(u) => one(v1::SessionUpdate::SessionInfoUpdate(u)),
            v2::SessionUpdate::UsageUpdate(u) => one(v1::SessionUpdate::UsageUpdate(u)),
            v2::SessionUpdate::Notice(n) => one(v1::SessionUpdate::Notice(n)),
            v2::SessionUpdate::CompactionUpdate(c) => {
                let mut out = v1::CompactionUpdate::new(c.compaction_id, c.status);
                out.summary = c.summary.map(|s| s.map(blocks_to_v1));
                out.error = c.error;
                out.meta = c.meta;
                one(v1::SessionUpdate::CompactionUpdate(out))
            }
            v2::SessionUpdate::CompactionSummaryChunk(c) => {
                let mut out =
                    v1::CompactionSummaryChunk::new(c.compaction_id, block_to_v1(c.content));
                out.meta = c.meta;
                one(v1::SessionUpdate::CompactionSummaryChunk(out))
            }
            v2::SessionUpdate::Other(raw) => one(v1::SessionUpdate::Other(raw)),
            other => one(v1::SessionUpdate::Other(raw_object(&other))),
        }
    }
}
