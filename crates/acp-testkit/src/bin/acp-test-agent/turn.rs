//! The scripted prompt turn: what each prompt word makes the agent do (see the
//! table at the top of `main.rs`).

use super::{HUNG_UP, TOO_LONG, TestAgent, action_name, describe, write_raw};
use acp::CancellationToken;
use acp::schema::*;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl TestAgent {
    pub(super) async fn turn(
        &self,
        s: &SessionId,
        req: &PromptRequest,
        cancel: &CancellationToken,
    ) -> Result<StopReason, Error> {
        let text = req
            .prompt
            .iter()
            .find_map(|b| b.as_text())
            .unwrap_or("")
            .to_owned();
        let words: Vec<&str> = text.split_whitespace().collect();
        if let Some(result) = self.scene(s, &words, cancel).await {
            return result;
        }
        let arg = |i: usize| words.get(i).copied().unwrap_or("");
        match arg(0) {
            "stream" => {
                for chunk in ["Hello", ", ", "world", "!"] {
                    self.say(s, chunk).await?;
                }
            }
            "thought" => {
                self.send(s, SessionUpdate::agent_thought("Let me think. "))
                    .await?;
                self.send(s, SessionUpdate::agent_thought("Done thinking."))
                    .await?;
                self.say(s, "Thought about it.\n").await?;
            }
            "plan" => {
                let entries = |done: usize| {
                    ["Read the code", "Change it", "Run the tests"]
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let status = if i < done {
                                PlanEntryStatus::Completed
                            } else if i == done {
                                PlanEntryStatus::InProgress
                            } else {
                                PlanEntryStatus::Pending
                            };
                            PlanEntry::new(*c, PlanEntryPriority::Medium, status)
                        })
                        .collect::<Vec<_>>()
                };
                self.send(s, SessionUpdate::Plan(Plan::new(entries(0))))
                    .await?;
                self.send(s, SessionUpdate::Plan(Plan::new(entries(2))))
                    .await?;
                self.say(s, "Planned.\n").await?;
            }
            "tool" => {
                let path = format!("{}/notes.txt", self.cwd(s));
                let call = ToolCall::new("call-1", "Edit notes.txt")
                    .kind(ToolKind::Edit)
                    .status(ToolCallStatus::Pending)
                    .locations(vec![ToolCallLocation::new(path.clone()).line(2u32)])
                    .content(vec![ToolCallContent::from(Diff::new(
                        path,
                        Some("one\ntwo\nthree\n".to_owned()),
                        "one\n2\nthree\nfour\n",
                    ))]);
                self.send(s, SessionUpdate::ToolCall(call)).await?;
                let update = ToolCallUpdate::new("call-1").status(ToolCallStatus::InProgress);
                self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
                let update = ToolCallUpdate::new("call-1").status(ToolCallStatus::Completed);
                self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
                self.say(s, "Edited.\n").await?;
            }
            "permission" => {
                let kind = ToolKind::from(if arg(1).is_empty() { "edit" } else { arg(1) });
                let call = ToolCall::new("call-p", "Remove build/")
                    .kind(kind)
                    .status(ToolCallStatus::Pending);
                self.send(s, SessionUpdate::ToolCall(call)).await?;
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new(
                        "always",
                        "Always allow",
                        PermissionOptionKind::AllowAlways,
                    ),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                    PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
                ];
                let request = RequestPermissionRequest::new(
                    s.clone(),
                    ToolCallUpdate::new("call-p"),
                    options,
                );
                let answer = self.conn.request_permission(request).await?;
                let (status, said) = match answer
                    .outcome
                    .selected_option()
                    .map(|o| o.as_str().to_owned())
                {
                    Some(id) if id == "allow" || id == "always" => {
                        (ToolCallStatus::Completed, format!("selected {id}"))
                    }
                    Some(id) => (ToolCallStatus::Failed, format!("selected {id}")),
                    None => (ToolCallStatus::Failed, "cancelled".to_owned()),
                };
                self.send(
                    s,
                    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new("call-p").status(status)),
                )
                .await?;
                self.say(s, &format!("permission: {said}\n")).await?;
            }
            "read" => {
                let mut request = ReadTextFileRequest::new(s.clone(), arg(1));
                if let Ok(line) = arg(2).parse::<u32>() {
                    request = request.line(line);
                }
                if let Ok(limit) = arg(3).parse::<u32>() {
                    request = request.limit(limit);
                }
                match self.conn.read_text_file(request).await {
                    Ok(r) => self.say(s, &r.content).await?,
                    Err(e) => self.say(s, &format!("error: {}\n", describe(&e))).await?,
                }
            }
            "write" => {
                let content = words.get(2..).map(|w| w.join(" ")).unwrap_or_default();
                let request = WriteTextFileRequest::new(s.clone(), arg(1), content);
                match self.conn.write_text_file(request).await {
                    Ok(_) => self.say(s, &format!("wrote {}\n", arg(1))).await?,
                    Err(e) => self.say(s, &format!("error: {}\n", describe(&e))).await?,
                }
            }
            "terminal" => {
                let (limit, start) = if arg(1) == "--limit" {
                    (arg(2).parse::<u64>().ok(), 3)
                } else {
                    (None, 1)
                };
                let script = words.get(start..).map(|w| w.join(" ")).unwrap_or_default();
                let mut request =
                    CreateTerminalRequest::new(s.clone(), "sh").args(vec!["-c".to_owned(), script]);
                if let Some(limit) = limit {
                    request = request.output_byte_limit(limit);
                }
                let id = self.conn.create_terminal(request).await?.terminal_id;
                // The terminal is embedded in a tool call, so a client can
                // show its output as it arrives.
                let call = ToolCall::new("call-t", "Run the command")
                    .kind(ToolKind::Execute)
                    .status(ToolCallStatus::InProgress)
                    .content(vec![ToolCallContent::Terminal(Terminal::new(id.clone()))]);
                self.send(s, SessionUpdate::ToolCall(call)).await?;
                let exit = self
                    .conn
                    .wait_for_terminal_exit(WaitForTerminalExitRequest::new(s.clone(), id.clone()))
                    .await?;
                let output = self
                    .conn
                    .terminal_output(TerminalOutputRequest::new(s.clone(), id.clone()))
                    .await?;
                self.conn
                    .release_terminal(ReleaseTerminalRequest::new(s.clone(), id))
                    .await?;
                let update = ToolCallUpdate::new("call-t").status(ToolCallStatus::Completed);
                self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
                let code = exit
                    .exit_code
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "none".into());
                self.say(
                    s,
                    &format!(
                        "exit: {code}\ntruncated: {}\noutput:\n{}",
                        output.truncated, output.output
                    ),
                )
                .await?;
            }
            "slow" => {
                for tick in 1..=300 {
                    self.say(s, &format!("tick {tick}\n")).await?;
                    tokio::select! {
                        _ = cancel.cancelled() => return Ok(StopReason::Cancelled),
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    }
                }
            }
            "crash" => {
                self.say(s, "about to crash\n").await?;
                tokio::time::sleep(Duration::from_millis(50)).await;
                eprintln!("test-agent: something went wrong");
                eprintln!("test-agent: fatal: simulated crash");
                std::process::exit(3);
            }
            "refuse" => return Ok(StopReason::Refusal),
            "max-tokens" => return Ok(StopReason::MaxTokens),
            "error" => return Err(Error::new(ErrorCode::INTERNAL_ERROR, "simulated failure")),
            "blocks" => {
                let mut text = String::new();
                for block in &req.prompt {
                    let line = match block {
                        ContentBlock::Text(t) => format!("text: {}", t.text),
                        ContentBlock::ResourceLink(l) => {
                            format!("resource_link: {} {}", l.name, l.uri)
                        }
                        ContentBlock::Resource(r) => match &r.resource {
                            EmbeddedResourceResource::Text(t) => {
                                format!("resource: {} {:?}", t.uri, t.text)
                            }
                            _ => "resource: blob".to_owned(),
                        },
                        _ => "other".to_owned(),
                    };
                    text.push_str(&line);
                    text.push('\n');
                }
                self.say(s, &text).await?;
            }
            "elicit" => {
                let request = CreateElicitationRequest::form(
                    "Your name?",
                    ElicitationSessionScope::new(s.clone()),
                    ElicitationSchema::new(),
                );
                let answer = self.conn.create_elicitation(request).await?;
                let action = action_name(&answer.action);
                self.say(s, &format!("elicitation: {action}\n")).await?;
            }
            "url-elicit" => {
                let url = match arg(1) {
                    "" => "https://example.test/auth?x=1",
                    url => url,
                };
                let request = CreateElicitationRequest::url(
                    "Sign in to Example",
                    ElicitationSessionScope::new(s.clone()),
                    "elic-1",
                    url,
                );
                let answer = self.conn.create_elicitation(request).await?;
                let action = action_name(&answer.action);
                self.say(s, &format!("elicitation: {action}\n")).await?;
                if action == "accept" {
                    self.conn
                        .complete_elicitation(CompleteElicitationNotification::new("elic-1"))
                        .await?;
                }
            }
            "later" => {
                let delay = Duration::from_millis(100 * arg(1).parse::<u64>().unwrap_or(1));
                self.say(s, "see you later\n").await?;
                let (conn, session) = (self.conn.clone(), s.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let update = SessionUpdate::agent_message("late news\n");
                    let _ = conn
                        .session_notification(SessionNotification::new(session, update))
                        .await;
                });
            }
            "garbage" => {
                write_raw(b"this is not json");
                self.say(s, "still here\n").await?;
            }
            "stubborn" => {
                for tick in 1..=300 {
                    self.say(s, &format!("tick {tick}\n")).await?;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            "bad-update" => {
                let line = serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": s.to_string(),
                        "update": {"sessionUpdate": "agent_message_chunk", "content": 42},
                    },
                });
                write_raw(line.to_string().as_bytes());
                self.say(s, "still here\n").await?;
            }
            "huge" => {
                let size = arg(1).parse::<usize>().unwrap_or(1 << 20);
                self.say(s, &format!("{}\n", "x".repeat(size))).await?;
            }
            "too-long" => {
                let head = format!(
                    r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":""#
                );
                let mut line = Vec::with_capacity(TOO_LONG + 64);
                line.extend_from_slice(head.as_bytes());
                line.resize(TOO_LONG, b'x');
                line.extend_from_slice(br#""}}}}"#);
                write_raw(&line);
                self.say(s, "still here\n").await?;
            }
            "hangup" => {
                self.say(s, "hanging up\n").await?;
                tokio::time::sleep(Duration::from_millis(50)).await;
                eprintln!("test-agent: closing stdout");
                // Close the connection and fd 1 (the runtime writes through
                // its own descriptor of the pipe, so both must go before the
                // client sees the end), and stay alive but silent: `main`
                // waits instead of exiting.
                HUNG_UP.store(true, Ordering::SeqCst);
                self.conn.close();
                if let Ok(null) = std::fs::File::open("/dev/null") {
                    let _ = nix::unistd::dup2_stdout(&null);
                }
                std::future::pending::<()>().await;
            }
            "which-model" => {
                let model = self.extras.lock().unwrap().model.clone();
                self.say(s, &format!("Running on {model}\n")).await?;
            }
            _ => self.say(s, &format!("You said: {text}\n")).await?,
        }
        Ok(StopReason::EndTurn)
    }
}
