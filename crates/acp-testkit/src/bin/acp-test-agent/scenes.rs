//! Prompt words for the chat's live transcript, permission review, login
//! and progress reports (see the table at the top of `main.rs`).
//!
//! "The gate" is the file `ACP_TEST_AGENT_GATE` names: a scene that waits
//! at the gate goes on once the file exists, so a test can look at the
//! screen while the turn is known to be still running.

use super::TestAgent;
use acp::CancellationToken;
use acp::schema::*;
use serde_json::json;
use std::time::Duration;

/// Waits until the gate file exists; false if the turn is cancelled first.
async fn gate(cancel: &CancellationToken) -> bool {
    let Some(path) = std::env::var_os("ACP_TEST_AGENT_GATE") else {
        return !cancel.is_cancelled();
    };
    loop {
        if std::path::Path::new(&path).exists() {
            return true;
        }
        tokio::select! {
            _ = cancel.cancelled() => return false,
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
}

fn options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("always", "Always allow", PermissionOptionKind::AllowAlways),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
    ]
}

impl TestAgent {
    /// Plays the scene the prompt's first word names, if it is one of
    /// these.
    pub(crate) async fn scene(
        &self,
        s: &SessionId,
        words: &[&str],
        cancel: &CancellationToken,
    ) -> Option<Result<StopReason, Error>> {
        let result = match words.first().copied().unwrap_or("") {
            "slow-stream" => self.slow_stream(s, cancel).await,
            "words" => self.words(s, &words[1..], cancel).await,
            "silent" => self.silent(s, cancel).await,
            "usage-live" => self.usage_live(s, cancel).await,
            "retry" => self.retry(s, cancel).await,
            "markdown" => self.markdown(s).await,
            "run-permission" => self.run_permission(s, &words[1..]).await,
            "edit-permission" => self.edit_permission(s, &words[1..]).await,
            "tool-progress" => self.tool_progress(s, cancel).await,
            "plan-live" => self.plan_live(s, cancel).await,
            _ => return None,
        };
        Some(result)
    }

    async fn slow_stream(
        &self,
        s: &SessionId,
        cancel: &CancellationToken,
    ) -> Result<StopReason, Error> {
        for word in ["The", " quick", " brown", " fox"] {
            self.say(s, word).await?;
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        if !gate(cancel).await {
            return Ok(StopReason::Cancelled);
        }
        self.say(s, " jumps over the lazy dog.\n").await?;
        self.say(s, "Second line.\n").await?;
        Ok(StopReason::EndTurn)
    }

    /// `words N [MS]`: a long turn whose every word is known, for tests
    /// that break the link mid-turn and count what arrived.
    async fn words(
        &self,
        s: &SessionId,
        args: &[&str],
        cancel: &CancellationToken,
    ) -> Result<StopReason, Error> {
        let count: u32 = args.first().and_then(|n| n.parse().ok()).unwrap_or(10);
        let pause = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(15);
        for n in 1..=count {
            let end = if n == count { "\n" } else { " " };
            self.say(s, &format!("w{n}{end}")).await?;
            tokio::select! {
                _ = cancel.cancelled() => return Ok(StopReason::Cancelled),
                _ = tokio::time::sleep(Duration::from_millis(pause)) => {}
            }
        }
        Ok(StopReason::EndTurn)
    }

    async fn silent(&self, s: &SessionId, cancel: &CancellationToken) -> Result<StopReason, Error> {
        if !gate(cancel).await {
            return Ok(StopReason::Cancelled);
        }
        self.say(s, "done\n").await?;
        Ok(StopReason::EndTurn)
    }

    async fn usage_live(
        &self,
        s: &SessionId,
        cancel: &CancellationToken,
    ) -> Result<StopReason, Error> {
        let usage = UsageUpdate::new(1234, 200_000).cost(Cost::new(0.05, "USD"));
        self.send(s, SessionUpdate::UsageUpdate(usage)).await?;
        if !gate(cancel).await {
            return Ok(StopReason::Cancelled);
        }
        self.say(s, "done\n").await?;
        Ok(StopReason::EndTurn)
    }

    /// Retries forever, saying so: a notice, then a status in the `_meta`
    /// of a `session_info_update` every 200 ms. Honours `session/cancel`.
    async fn retry(&self, s: &SessionId, cancel: &CancellationToken) -> Result<StopReason, Error> {
        let notice =
            Notice::new(NoticeSeverity::Warning, "Stream disconnected").description("retrying");
        self.send(s, SessionUpdate::Notice(notice)).await?;
        for attempt in 1.. {
            let mut meta = serde_json::Map::new();
            meta.insert(
                "status".into(),
                json!(format!("Reconnecting... {attempt}/5")),
            );
            let update = SessionInfoUpdate::new().meta(meta);
            self.send(s, SessionUpdate::SessionInfoUpdate(update))
                .await?;
            tokio::select! {
                _ = cancel.cancelled() => return Ok(StopReason::Cancelled),
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        }
        Ok(StopReason::EndTurn)
    }

    async fn markdown(&self, s: &SessionId) -> Result<StopReason, Error> {
        let text = "## Results\n\
                    \n\
                    | name | size |\n\
                    |------|-----:|\n\
                    | alpha | 1 |\n\
                    | beta gamma | 22 |\n\
                    \n\
                    1. first step\n\
                    2. second step\n\
                    \n\
                    See [the docs](https://example.test/docs) for more.\n";
        // Split mid-row, as a model streams.
        let (a, b) = text.split_at(40);
        self.say(s, a).await?;
        self.say(s, b).await?;
        Ok(StopReason::EndTurn)
    }

    async fn ask(
        &self,
        s: &SessionId,
        call: ToolCallUpdate,
        id: &str,
    ) -> Result<StopReason, Error> {
        let request = RequestPermissionRequest::new(s.clone(), call, options());
        let answer = self.conn.request_permission(request).await?;
        let said = match answer.outcome.selected_option() {
            Some(o) => format!("selected {}", o.as_str()),
            None => "cancelled".to_owned(),
        };
        let allowed = said == "selected allow" || said == "selected always";
        let status = if allowed {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        };
        self.send(
            s,
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id).status(status)),
        )
        .await?;
        self.say(s, &format!("permission: {said}\n")).await?;
        Ok(StopReason::EndTurn)
    }

    /// An `execute` tool call for the command, then a permission request
    /// naming it (title and `rawInput.command`).
    async fn run_permission(&self, s: &SessionId, command: &[&str]) -> Result<StopReason, Error> {
        let command = command.join(" ");
        let id = format!("run-{}", command.replace(' ', "-"));
        let call = ToolCall::new(id.as_str(), format!("`{command}`"))
            .kind(ToolKind::Execute)
            .status(ToolCallStatus::Pending)
            .raw_input(json!({"command": command, "cwd": self.cwd(s)}));
        self.send(s, SessionUpdate::ToolCall(call)).await?;
        let update = ToolCallUpdate::new(id.as_str())
            .title(format!("`{command}`"))
            .kind(ToolKind::Execute)
            .raw_input(json!({"command": command, "cwd": self.cwd(s)}));
        self.ask(s, update, &id).await
    }

    /// An `edit` tool call for PATH whose permission request carries the
    /// diff (200 changed lines with `long`).
    async fn edit_permission(&self, s: &SessionId, args: &[&str]) -> Result<StopReason, Error> {
        let path = format!(
            "{}/{}",
            self.cwd(s),
            args.first().copied().unwrap_or("notes.txt")
        );
        let (old, new) = if args.get(1) == Some(&"long") {
            let old: String = (1..=200).map(|i| format!("line {i}\n")).collect();
            let new: String = (1..=200).map(|i| format!("LINE {i}\n")).collect();
            (old, new)
        } else {
            (
                "one\ntwo\nthree\n".to_owned(),
                "one\n2\nthree\nfour\n".to_owned(),
            )
        };
        let id = format!("edit-{}", args.first().copied().unwrap_or("notes.txt"));
        let diff = ToolCallContent::from(Diff::new(path.clone(), Some(old), new));
        let call = ToolCall::new(
            id.as_str(),
            format!("Edit {}", args.first().copied().unwrap_or("notes.txt")),
        )
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::Pending)
        .locations(vec![ToolCallLocation::new(path.clone())]);
        self.send(s, SessionUpdate::ToolCall(call)).await?;
        let update = ToolCallUpdate::new(id.as_str())
            .kind(ToolKind::Edit)
            .locations(vec![ToolCallLocation::new(path)])
            .content(vec![diff]);
        self.ask(s, update, &id).await
    }

    /// A tool call that goes pending, in progress, (the gate), completed.
    async fn tool_progress(
        &self,
        s: &SessionId,
        cancel: &CancellationToken,
    ) -> Result<StopReason, Error> {
        let call = ToolCall::new("call-x", "Search the code")
            .kind(ToolKind::Search)
            .status(ToolCallStatus::Pending);
        self.send(s, SessionUpdate::ToolCall(call)).await?;
        let update = ToolCallUpdate::new("call-x").status(ToolCallStatus::InProgress);
        self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
        if !gate(cancel).await {
            return Ok(StopReason::Cancelled);
        }
        let found = ToolCallContent::from(ContentBlock::from("3 matches"));
        let update = ToolCallUpdate::new("call-x")
            .status(ToolCallStatus::Completed)
            .content(vec![found]);
        self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
        self.say(s, "Searched.\n").await?;
        Ok(StopReason::EndTurn)
    }

    /// A plan, "Reading.", (the gate), the plan with progress, "Planned.".
    async fn plan_live(
        &self,
        s: &SessionId,
        cancel: &CancellationToken,
    ) -> Result<StopReason, Error> {
        let plan = |done: usize| {
            let entries = ["Read the code", "Change it", "Run the tests"]
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let status = match i.cmp(&done) {
                        std::cmp::Ordering::Less => PlanEntryStatus::Completed,
                        std::cmp::Ordering::Equal => PlanEntryStatus::InProgress,
                        std::cmp::Ordering::Greater => PlanEntryStatus::Pending,
                    };
                    PlanEntry::new(*c, PlanEntryPriority::Medium, status)
                })
                .collect();
            SessionUpdate::Plan(Plan::new(entries))
        };
        self.send(s, plan(0)).await?;
        self.say(s, "Reading.\n").await?;
        if !gate(cancel).await {
            return Ok(StopReason::Cancelled);
        }
        self.send(s, plan(2)).await?;
        self.say(s, "Planned.\n").await?;
        Ok(StopReason::EndTurn)
    }
}
