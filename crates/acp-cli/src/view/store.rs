//! What the session's updates said, kept once: the [`Store`].
//!
//! [`super::View`] applies every update here before any screen shows
//! it; the screens then read what they draw from here (a tool call's
//! kind, title and status, the plan to commit, the usage of the status
//! line), and so do the permission questions (what a tool call asked for)
//! and chat's commands (`/mode`, `/config`, `/model`, the completion of
//! the agent's slash commands). How a screen lays a thing out (which
//! lines it still holds back, what it has committed) stays with that
//! screen; what the thing *is* is only here.

use acp::schema::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The agent's slash commands, shared with the line editor's completion.
pub type Commands = Arc<Mutex<Vec<AvailableCommand>>>;

/// What the session's updates (and its session response) said.
#[derive(Debug, Default)]
pub struct Store {
    /// Every tool call seen, as its updates left it.
    tool_calls: HashMap<ToolCallId, Seen>,
    /// The plan, as last sent.
    plan: Option<Plan>,
    /// The last `usage_update`.
    pub usage: Option<UsageUpdate>,
    /// The token usage of the last turn, from its prompt result.
    pub turn_usage: Option<Usage>,
    /// The agent's slash commands.
    pub commands: Commands,
    /// The current mode, when the agent has modes.
    pub current_mode: Option<SessionModeId>,
    /// The session's modes (from the session response).
    pub modes: Vec<SessionMode>,
    /// The session's config options.
    pub config_options: Vec<SessionConfigOption>,
    /// The session model selector, when the agent offers one.
    pub models: Option<SessionModelState>,
}

/// A tool call and whether the agent announced it (`tool_call`) or acp
/// only saw updates of it.
#[derive(Debug)]
struct Seen {
    call: ToolCall,
    announced: bool,
}

/// What an update changed, for the screens to draw.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A tool call appeared or changed; its status before the update
    /// (`None` when it was not known).
    Tool {
        /// The status it had.
        before: Option<ToolCallStatus>,
    },
    /// A plan came; whether its entries (text and status) differ from the
    /// last plan's.
    Plan {
        /// They differ.
        changed: bool,
    },
    /// Anything else.
    Other,
}

fn entries(plan: &Plan) -> impl Iterator<Item = (&str, &PlanEntryStatus)> {
    plan.entries.iter().map(|e| (e.content.as_str(), &e.status))
}

impl Store {
    /// An empty store whose slash commands are `commands`.
    pub fn new(commands: Commands) -> Self {
        Store {
            commands,
            ..Store::default()
        }
    }

    /// Records what `update` says, and says what it changed.
    ///
    /// An update of a tool call the agent never announced makes one: a
    /// pending call of kind `other` titled by its id, then changed by the
    /// update.
    pub fn apply(&mut self, update: &SessionUpdate) -> Change {
        match update {
            SessionUpdate::ToolCall(call) => {
                let seen = Seen {
                    call: call.clone(),
                    announced: true,
                };
                let before = self.tool_calls.insert(call.tool_call_id.clone(), seen);
                Change::Tool {
                    before: before.map(|s| s.call.status),
                }
            }
            SessionUpdate::ToolCallUpdate(u) => {
                let seen = self.tool_calls.entry(u.tool_call_id.clone());
                let before = match &seen {
                    std::collections::hash_map::Entry::Occupied(o) => {
                        Some(o.get().call.status.clone())
                    }
                    std::collections::hash_map::Entry::Vacant(_) => None,
                };
                let seen = seen.or_insert_with(|| Seen {
                    call: ToolCall::new(u.tool_call_id.clone(), u.tool_call_id.to_string()),
                    announced: false,
                });
                seen.call.apply(u);
                Change::Tool { before }
            }
            SessionUpdate::Plan(plan) => {
                let changed = self
                    .plan
                    .as_ref()
                    .is_none_or(|old| !entries(old).eq(entries(plan)));
                self.plan = Some(plan.clone());
                Change::Plan { changed }
            }
            SessionUpdate::AvailableCommandsUpdate(u) => {
                *self.commands.lock().unwrap_or_else(PoisonError::into_inner) =
                    u.available_commands.clone();
                Change::Other
            }
            SessionUpdate::CurrentModeUpdate(m) => {
                self.current_mode = Some(m.current_mode_id.clone());
                Change::Other
            }
            SessionUpdate::ConfigOptionUpdate(u) => {
                self.config_options = u.config_options.clone();
                Change::Other
            }
            SessionUpdate::UsageUpdate(u) => {
                self.usage = Some(u.clone());
                Change::Other
            }
            _ => Change::Other,
        }
    }

    /// Takes the modes, config options and model selector of a session
    /// response (`session/new`, `load`, `resume`). The model selector is
    /// replaced; modes and options only when the response has them.
    pub fn adopt(
        &mut self,
        modes: Option<SessionModeState>,
        options: Option<Vec<SessionConfigOption>>,
        models: Option<SessionModelState>,
    ) {
        self.models = models;
        if let Some(modes) = modes {
            self.current_mode = Some(modes.current_mode_id);
            self.modes = modes.available_modes;
        }
        if let Some(options) = options {
            self.config_options = options;
        }
    }

    /// A tool call as its updates left it.
    pub fn tool_call(&self, id: &ToolCallId) -> Option<&ToolCall> {
        self.tool_calls.get(id).map(|s| &s.call)
    }

    /// A tool call the agent announced (`tool_call`), as its updates left
    /// it: what a permission request about it is known to ask.
    pub fn announced(&self, id: &ToolCallId) -> Option<&ToolCall> {
        self.tool_calls
            .get(id)
            .filter(|s| s.announced)
            .map(|s| &s.call)
    }

    /// The plan, as last sent.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_are_kept_as_their_updates_left_them() {
        let mut store = Store::default();
        let id = ToolCallId::new("t1");
        let call = ToolCall::new("t1", "Read a.txt").kind(ToolKind::Read);
        assert_eq!(
            store.apply(&SessionUpdate::ToolCall(call)),
            Change::Tool { before: None }
        );
        let done = ToolCallUpdate::new("t1").status(ToolCallStatus::Completed);
        assert_eq!(
            store.apply(&SessionUpdate::ToolCallUpdate(done)),
            Change::Tool {
                before: Some(ToolCallStatus::Pending)
            }
        );
        let call = store.announced(&id).unwrap();
        assert_eq!(
            (call.title.as_str(), &call.kind, &call.status),
            ("Read a.txt", &ToolKind::Read, &ToolCallStatus::Completed)
        );
        // Only updated, never announced: kept for the screen, titled by
        // its id, but not taken as what a permission request asks.
        let stray = ToolCallUpdate::new("t2").status(ToolCallStatus::InProgress);
        store.apply(&SessionUpdate::ToolCallUpdate(stray));
        let t2 = ToolCallId::new("t2");
        assert_eq!(store.tool_call(&t2).unwrap().title, "t2");
        assert!(store.announced(&t2).is_none());
    }

    #[test]
    fn a_plan_changes_when_its_entries_do() {
        let mut store = Store::default();
        let plan = |status| {
            SessionUpdate::Plan(Plan::new(vec![PlanEntry::new(
                "a",
                PlanEntryPriority::Low,
                status,
            )]))
        };
        let changed = |c| Change::Plan { changed: c };
        assert_eq!(store.apply(&plan(PlanEntryStatus::Pending)), changed(true));
        assert_eq!(store.apply(&plan(PlanEntryStatus::Pending)), changed(false));
        assert_eq!(
            store.apply(&plan(PlanEntryStatus::Completed)),
            changed(true)
        );
    }
}
