//! Tool calls and the plan in the chat transcript: running in the live
//! area, committed above it as one block each when they end.

use super::Transcript;
use crate::view::diff::unified_diff;
use crate::view::store::{Change, Store};
use acp::schema::*;

/// How the transcript shows a tool call (what the call is, its kind, title
/// and status, is in the store).
#[derive(Debug, Default)]
pub(super) struct Shown {
    /// Details (locations, diffs, content) not committed yet: held while
    /// the call runs in the live area.
    held: Vec<String>,
    /// Whether the call was committed (shown above the live area, or
    /// announced without one).
    shown: bool,
}

fn ended(status: &ToolCallStatus) -> bool {
    matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed)
}

impl Transcript {
    /// A `tool_call`: a repeated one for a running call updates it; one
    /// for a call that ended starts it again.
    pub(super) fn tool_call(&mut self, call: &ToolCall, store: &Store, change: &Change) {
        self.break_line();
        let running = matches!(change, Change::Tool { before: Some(s) } if !ended(s));
        let known = self
            .tools
            .insert(call.tool_call_id.clone(), Shown::default());
        if let (Some(old), Some(new)) = (known, self.tools.get_mut(&call.tool_call_id))
            && running
        {
            new.held = old.held;
            new.shown = old.shown;
        }
        let details = self.tool_details(&call.locations, &call.content);
        self.tool_changed(store, &call.tool_call_id, true, details);
    }

    /// A `tool_call_update` (of a call the agent announced, or not).
    pub(super) fn tool_call_update(&mut self, u: &ToolCallUpdate, store: &Store) {
        self.break_line();
        self.tools.entry(u.tool_call_id.clone()).or_default();
        let details = self.tool_details(
            u.locations.as_deref().unwrap_or_default(),
            u.content.as_deref().unwrap_or_default(),
        );
        let changed = u.status.is_some() || u.title.is_some();
        self.tool_changed(store, &u.tool_call_id, changed, details);
    }

    /// A plan: shown when it changed, in the live area during a turn
    /// (committed when the turn ends), else as a checklist.
    pub(super) fn plan(&mut self, plan: &Plan, change: &Change) {
        if *change == (Change::Plan { changed: false }) {
            return;
        }
        if self.is_live()
            && let Some(live) = self.live.clone()
        {
            // Updated in place; committed when the turn ends.
            self.break_line();
            let rows = plain_plan(plan);
            live.live(|l| l.plan = rows);
            self.plan_held = true;
            return;
        }
        let text = self.plan_text(plan);
        self.line(&text);
    }

    /// Puts the running tool calls into the live area (drawn at once, or
    /// with what is committed next).
    fn sync_tools(&mut self, store: &Store, draw: bool) {
        let Some(live) = &self.live else { return };
        let rows: Vec<String> = self
            .open_tools
            .iter()
            .filter_map(|id| store.tool_call(id))
            .map(|t| self.tool_head(&t.kind, &t.title, &t.status))
            .collect();
        if draw {
            live.live(|l| l.tools = rows);
        } else {
            live.stage(|l| l.tools = rows);
        }
    }

    /// Commits the tool calls still running (the turn is over), with the
    /// status they last had.
    pub fn end_turn(&mut self, store: &Store) {
        self.break_line();
        let open = std::mem::take(&mut self.open_tools);
        self.sync_tools(store, false);
        for id in open {
            self.commit_tool(store, &id);
        }
        if std::mem::take(&mut self.plan_held)
            && let Some(plan) = store.plan()
        {
            if let Some(live) = &self.live {
                live.stage(|l| l.plan.clear());
            }
            let text = self.plan_text(plan);
            self.line(&text);
        }
        if let Some(live) = &self.live {
            live.live(|l| l.agent_status = None);
        }
    }

    /// The plan as committed: a bold heading, then `[x]` done (green),
    /// `[~]` in progress (yellow), `[ ]` pending.
    fn plan_text(&self, plan: &Plan) -> String {
        let mut text = self.style.bold("Plan:");
        for entry in &plan.entries {
            let content = &entry.content;
            let item = match entry.status {
                PlanEntryStatus::Completed => self.style.green(&format!("[x] {content}")),
                PlanEntryStatus::InProgress => self.style.yellow(&format!("[~] {content}")),
                _ => format!("[ ] {content}"),
            };
            text.push_str(&format!("\n  {item}"));
        }
        text
    }

    /// Commits a tool call's header (with its status now) and what it held.
    fn commit_tool(&mut self, store: &Store, id: &ToolCallId) {
        let (Some(tool), Some(call)) = (self.tools.get_mut(id), store.tool_call(id)) else {
            return;
        };
        tool.shown = true;
        let held = std::mem::take(&mut tool.held);
        let head = self.tool_head(&call.kind, &call.title, &call.status);
        self.line(&head);
        for text in held {
            self.line(&text);
        }
    }

    /// A tool call appeared or changed: `status_changed` when this update
    /// set its status, `details` what the update carried.
    fn tool_changed(
        &mut self,
        store: &Store,
        id: &ToolCallId,
        status_changed: bool,
        details: Vec<String>,
    ) {
        let live = self.is_live();
        let (Some(tool), Some(call)) = (self.tools.get_mut(id), store.tool_call(id)) else {
            return;
        };
        let done = ended(&call.status);
        let open = self.open_tools.contains(id);
        if live && !done && !tool.shown {
            // Runs in the live area; its details wait for its end.
            tool.held.extend(details);
            if !open {
                self.open_tools.push(id.clone());
            }
            self.sync_tools(store, true);
            return;
        }
        if open && done {
            tool.held.extend(details);
            self.open_tools.retain(|t| t != id);
            // Out of the live area as it is committed above it.
            self.sync_tools(store, false);
            self.commit_tool(store, id);
            return;
        }
        // No live area, or the call was committed already: a header when
        // it starts and when it ends, details as they come.
        let first = !tool.shown;
        tool.shown = true;
        if first || (status_changed && done) {
            let head = self.tool_head(&call.kind, &call.title, &call.status);
            self.line(&head);
        }
        for text in details {
            self.line(&text);
        }
    }

    fn tool_head(&self, kind: &ToolKind, title: &str, status: &ToolCallStatus) -> String {
        let status_text = match status {
            ToolCallStatus::Completed => self.style.green(&status.to_string()),
            ToolCallStatus::Failed => self.style.red(&status.to_string()),
            _ => self.style.yellow(&status.to_string()),
        };
        format!(
            "{} {} {title} · {status_text}",
            self.style.magenta("⏺"),
            self.style.dim(&format!("[{kind}]"))
        )
    }

    /// The lines that show a tool call's locations and content.
    fn tool_details(
        &self,
        locations: &[ToolCallLocation],
        content: &[ToolCallContent],
    ) -> Vec<String> {
        let style = self.style;
        let mut out = Vec::new();
        for location in locations {
            let at = match location.line {
                Some(line) => format!("  ↳ {}:{line}", location.path),
                None => format!("  ↳ {}", location.path),
            };
            out.push(style.dim(&at));
        }
        for item in content {
            match item {
                ToolCallContent::Diff(diff) => {
                    let text = unified_diff(
                        &diff.path,
                        diff.old_text.as_deref().unwrap_or(""),
                        &diff.new_text,
                        style,
                    );
                    out.push(text.trim_end_matches('\n').to_owned());
                }
                ToolCallContent::Content(c) => {
                    if let ContentBlock::Text(t) = &c.content {
                        for line in t.text.lines() {
                            out.push(style.dim(&format!("    {line}")));
                        }
                    }
                }
                ToolCallContent::Terminal(t) => {
                    out.push(style.dim(&format!("  terminal {}", t.terminal_id)))
                }
                _ => {}
            }
        }
        out
    }
}

/// The plan's rows in the live area, without colour.
fn plain_plan(plan: &Plan) -> Vec<String> {
    let mut rows = vec!["Plan:".to_owned()];
    for entry in &plan.entries {
        let mark = match entry.status {
            PlanEntryStatus::Completed => "[x]",
            PlanEntryStatus::InProgress => "[~]",
            _ => "[ ]",
        };
        let content = entry
            .content
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        rows.push(format!("  {mark} {content}"));
    }
    rows
}
