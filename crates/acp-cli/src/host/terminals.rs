//! Chat: the output of the agent's terminals under their tool calls, as it
//! arrives and once the command has ended.

use super::CliClient;
use acp::schema::*;
use std::collections::HashMap;
use std::sync::PoisonError;

/// Chat: how often a running terminal's output is checked for new lines.
const LIVE_POLL: std::time::Duration = std::time::Duration::from_millis(100);

impl CliClient {
    /// Chat: notes which terminals a tool call shows, shows their output
    /// as it arrives, and the rest once the call has finished.
    pub(super) fn track_terminals(&self, update: &SessionUpdate) {
        let (id, content, status) = match update {
            SessionUpdate::ToolCall(call) => {
                (&call.tool_call_id, Some(&call.content), Some(&call.status))
            }
            SessionUpdate::ToolCallUpdate(u) => {
                (&u.tool_call_id, u.content.as_ref(), u.status.as_ref())
            }
            _ => return,
        };
        let mut map = self
            .shared
            .tool_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut new = Vec::new();
        for item in content.into_iter().flatten() {
            if let ToolCallContent::Terminal(t) = item {
                let list = map.entry(id.clone()).or_default();
                if !list.contains(&t.terminal_id) {
                    list.push(t.terminal_id.clone());
                    new.push(t.terminal_id.clone());
                }
            }
        }
        let done = if matches!(
            status,
            Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
        ) {
            map.remove(id)
        } else {
            None
        };
        drop(map);
        for terminal in new {
            self.start_live(terminal);
        }
        for terminal in done.into_iter().flatten() {
            self.show_terminal(&terminal);
        }
    }

    /// Chat: starts showing the output of a terminal this client runs as
    /// it arrives, polling its buffer until the command exits or the
    /// terminal is shown in full ([`CliClient::show_terminal`]).
    fn start_live(&self, id: TerminalId) {
        {
            let mut live = self.live();
            if live.contains_key(&id) || self.shown().contains(&id) {
                return;
            }
            if self.shared.terminals.output_since(&id, 0, false).is_err() {
                return;
            }
            live.insert(id.clone(), 0);
            self.with_view(|v| {
                if let Some(t) = v.transcript() {
                    t.terminal_start(&id);
                }
            });
        }
        if !self.pump_live(&id) {
            return;
        }
        let client = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(LIVE_POLL).await;
                if !client.pump_live(&id) {
                    break;
                }
            }
        });
    }

    /// Chat: shows a live terminal's new complete lines; once the command
    /// has exited, the rest and how it ended. False when the terminal is
    /// no longer live.
    fn pump_live(&self, id: &TerminalId) -> bool {
        let mut live = self.live();
        let Some(from) = live.get(id).copied() else {
            return false;
        };
        match self.shared.terminals.output_since(id, from, false) {
            Ok((since, None)) => {
                if !since.text.is_empty() || since.skipped {
                    self.with_view(|v| {
                        if let Some(t) = v.transcript() {
                            t.terminal_lines(&since.text, since.skipped);
                        }
                    });
                }
                live.insert(id.clone(), since.next);
                true
            }
            _ => {
                live.remove(id);
                self.shown().insert(id.clone());
                self.finish_live(id, from);
                false
            }
        }
    }

    /// Chat: shows the rest of a live terminal's output and how it ended.
    fn finish_live(&self, id: &TerminalId, from: usize) {
        let (since, exit) = match self.shared.terminals.output_since(id, from, true) {
            Ok((since, exit)) => (Some(since), exit.as_ref().map(exit_text)),
            Err(_) => (None, None),
        };
        self.with_view(|v| {
            if let Some(t) = v.transcript() {
                if let Some(since) = since
                    && (!since.text.is_empty() || since.skipped)
                {
                    t.terminal_lines(&since.text, since.skipped);
                }
                t.terminal_end(exit.as_deref());
            }
        });
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<TerminalId, usize>> {
        self.shared
            .live_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<TerminalId>> {
        self.shared
            .shown_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Chat: shows a terminal's output, once: the rest of it when it was
    /// shown live, else all of it.
    pub(super) fn show_terminal(&self, id: &TerminalId) {
        {
            let mut live = self.live();
            if let Some(from) = live.remove(id) {
                self.shown().insert(id.clone());
                self.finish_live(id, from);
                return;
            }
        }
        if !self
            .shared
            .shown_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone())
        {
            return;
        }
        if let Ok(output) = self.shared.terminals.output_of(id) {
            let exit = output.exit_status.as_ref().map(exit_text);
            self.with_view(|v| {
                if let Some(t) = v.transcript() {
                    t.terminal_output(id, &output.output, output.truncated, exit.as_deref());
                }
            });
        }
    }
}

/// How a terminal's command ended, for the transcript.
fn exit_text(status: &TerminalExitStatus) -> String {
    match (status.exit_code, &status.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "ended".to_owned(),
    }
}
