//! `acp mock --script FILE`: a hand-written agent, one command a line.
//!
//! ```text
//! # Lines starting with # are comments; blank lines are skipped.
//! expect initialize
//! reply {"protocolVersion":1,"agentCapabilities":{}}
//! expect session/new
//! reply {"sessionId":"s1"}
//! expect session/prompt {"prompt":[{"type":"text","text":"hello"}]}
//! send update {"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi!"}}
//! request session/request_permission {"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}
//! answered {"outcome":{"outcome":"selected","optionId":"ok"}}
//! sleep 100ms
//! reply {"stopReason":"end_turn"}
//! ```
//!
//! | command | what it does |
//! | ------- | ------------ |
//! | `expect METHOD [PARAMS]` | waits for the client's request or notification METHOD; its params must contain PARAMS (loosely: every field given, equal; more fields are fine). Anything else that comes first is a difference (a request is answered with an error). |
//! | `reply RESULT` | answers the latest expected request not yet answered with RESULT. A `sessionId` in it becomes the session of `send update`. |
//! | `fail CODE [MESSAGE…]` | answers that request with an error. |
//! | `send update UPDATE` | sends `session/update` with UPDATE for the current session (the last `sessionId` replied, or seen in the client's params). |
//! | `send METHOD [PARAMS]` | sends any notification. |
//! | `request METHOD PARAMS` | sends a request (ids `0`, `1`, …) and waits for its answer. What the client sends meanwhile is kept for the next `expect`s. |
//! | `answered RESULT` / `answered error [CODE]` | the answer to the last `request` must contain RESULT / be an error (with CODE). |
//! | `sleep DURATION` | waits: `250ms`, `2s`, or a number of milliseconds. |
//! | `exit [CODE]` | exits at once with CODE (default 0), as a crashing agent would. |
//!
//! JSON arguments take the rest of the line and must be one JSON value on
//! that line. After the last command the mock waits for the client to
//! close the connection; anything the client sends then is a difference.

use super::compare::differences;
use super::{Stop, Wire, describe};
use crate::exit::Failure;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// One command of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `expect METHOD [PARAMS]`.
    Expect {
        /// The method.
        method: String,
        /// What the params must contain.
        pattern: Option<Value>,
    },
    /// `reply RESULT`.
    Reply(Value),
    /// `fail CODE [MESSAGE]`.
    Fail {
        /// The error code.
        code: i64,
        /// The message.
        message: String,
    },
    /// `send update UPDATE`.
    Update(Value),
    /// `send METHOD [PARAMS]`.
    Send {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
    /// `request METHOD PARAMS`.
    Request {
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
    /// `answered RESULT`.
    Answered(Value),
    /// `answered error [CODE]`.
    AnsweredError(Option<i64>),
    /// `sleep DURATION`.
    Sleep(Duration),
    /// `exit [CODE]`.
    Exit(i32),
}

/// A parsed script: its commands with their line numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// `(line number, command)`, in order.
    pub commands: Vec<(usize, Command)>,
}

fn json_arg(text: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{what} is not one JSON value: {e}"))
}

fn optional_json(text: &str, what: &str) -> Result<Option<Value>, String> {
    if text.is_empty() {
        Ok(None)
    } else {
        json_arg(text, what).map(Some)
    }
}

fn duration(text: &str) -> Result<Duration, String> {
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 1e-3)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else {
        (text, 1e-3)
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n >= 0.0 && n.is_finite() && n * scale < 86_400.0 => {
            Ok(Duration::from_secs_f64(n * scale))
        }
        _ => Err(format!("{text:?} is not a duration (like 250ms or 2s)")),
    }
}

fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], text[at..].trim()),
        None => (text, ""),
    }
}

/// Parses one non-blank, non-comment line.
fn command(line: &str) -> Result<Command, String> {
    let (verb, rest) = split_word(line);
    let need = |what: &str| {
        if rest.is_empty() {
            Err(format!("{verb} needs {what}"))
        } else {
            Ok(())
        }
    };
    Ok(match verb {
        "expect" => {
            need("a method")?;
            let (method, pattern) = split_word(rest);
            Command::Expect {
                method: method.to_owned(),
                pattern: optional_json(pattern, "the params pattern")?,
            }
        }
        "reply" => {
            need("a result")?;
            Command::Reply(json_arg(rest, "the result")?)
        }
        "fail" => {
            need("an error code")?;
            let (code, message) = split_word(rest);
            let code = code
                .parse()
                .map_err(|_| format!("{code:?} is not an error code"))?;
            Command::Fail {
                code,
                message: message.to_owned(),
            }
        }
        "send" => {
            need("`update UPDATE` or a method")?;
            let (method, params) = split_word(rest);
            if method == "update" {
                if params.is_empty() {
                    return Err("send update needs the update".to_owned());
                }
                Command::Update(json_arg(params, "the update")?)
            } else {
                Command::Send {
                    method: method.to_owned(),
                    params: optional_json(params, "the params")?,
                }
            }
        }
        "request" => {
            need("a method and params")?;
            let (method, params) = split_word(rest);
            if params.is_empty() {
                return Err("request needs params".to_owned());
            }
            Command::Request {
                method: method.to_owned(),
                params: json_arg(params, "the params")?,
            }
        }
        "answered" => {
            need("a result pattern or `error`")?;
            let (word, code) = split_word(rest);
            if word == "error" {
                let code = match code {
                    "" => None,
                    code => Some(
                        code.parse()
                            .map_err(|_| format!("{code:?} is not an error code"))?,
                    ),
                };
                Command::AnsweredError(code)
            } else {
                Command::Answered(json_arg(rest, "the result pattern")?)
            }
        }
        "sleep" => {
            need("a duration")?;
            Command::Sleep(duration(rest)?)
        }
        "exit" => Command::Exit(match rest {
            "" => 0,
            code => code
                .parse()
                .map_err(|_| format!("{code:?} is not an exit code"))?,
        }),
        other => {
            return Err(format!(
                "unknown command {other:?} (expected expect, reply, fail, send, request, answered, sleep or exit)"
            ));
        }
    })
}

impl Script {
    /// Reads and checks a script file.
    pub fn load(path: &Path) -> Result<Script, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
        Script::parse(&text).map_err(|e| Failure::usage(format!("{}:{e}", path.display())))
    }

    /// Parses a script; an error reads `LINE: why`.
    pub fn parse(text: &str) -> Result<Script, String> {
        let mut commands = Vec::new();
        let (mut expects, mut requests) = (0, 0);
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let command = command(line).map_err(|e| format!("{number}: {e}"))?;
            match &command {
                Command::Expect { .. } => expects += 1,
                Command::Request { .. } => requests += 1,
                Command::Reply(_) | Command::Fail { .. } if expects == 0 => {
                    return Err(format!(
                        "{number}: nothing to answer yet (expect a request first)"
                    ));
                }
                Command::Answered(_) | Command::AnsweredError(_) if requests == 0 => {
                    return Err(format!("{number}: no request was sent yet"));
                }
                _ => {}
            }
            commands.push((number, command));
        }
        Ok(Script { commands })
    }

    /// Runs the script; see the module docs.
    pub fn play(self, wire: &mut Wire) -> Result<(), Stop> {
        let mut state = State::default();
        for (line, command) in &self.commands {
            state.step(wire, *line, command)?;
        }
        for (line, method, _) in &state.unanswered {
            eprintln!("acp mock: note: the {method} expected on line {line} was never answered");
        }
        Ok(())
    }
}

#[derive(Default)]
struct State {
    /// Expected requests not answered yet: (script line, method, id).
    unanswered: Vec<(usize, String, Value)>,
    /// The answer to the last `request`.
    answer: Option<Value>,
    /// The session of `send update`.
    session: Option<String>,
}

impl State {
    fn step(&mut self, wire: &mut Wire, line: usize, command: &Command) -> Result<(), Stop> {
        let script_error = |why: String| Stop::Script(format!("script line {line}: {why}"));
        match command {
            Command::Expect { method, pattern } => {
                let waiting = format!("the {method} of script line {line}");
                loop {
                    let message = wire.next(&waiting)?;
                    if message.get("method").and_then(Value::as_str) != Some(method.as_str()) {
                        wire.differ(format!(
                            "script line {line}: the client sent a {} instead of {method}",
                            describe(&message)
                        ));
                        wire.refuse(&message, &format!("expected {method}"))?;
                        continue;
                    }
                    let params = message.get("params").cloned().unwrap_or(Value::Null);
                    if let Some(pattern) = pattern {
                        for d in differences(pattern, &params, &[]) {
                            wire.differ(format!("script line {line}, {method}: params.{d}"));
                        }
                    }
                    if let Some(session) = params.get("sessionId").and_then(Value::as_str) {
                        self.session = Some(session.to_owned());
                    }
                    if let Some(id) = message.get("id").filter(|id| !id.is_null()) {
                        self.unanswered.push((line, method.clone(), id.clone()));
                    }
                    return Ok(());
                }
            }
            Command::Reply(_) | Command::Fail { .. } => {
                let Some((_, _, id)) = self.unanswered.pop() else {
                    return Err(script_error(
                        "there is no request to answer (the last one expected was a notification, or was answered)"
                            .to_owned(),
                    ));
                };
                let message = match command {
                    Command::Fail { code, message } => json!({
                        "jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message},
                    }),
                    Command::Reply(result) => {
                        if let Some(session) = result.get("sessionId").and_then(Value::as_str) {
                            self.session = Some(session.to_owned());
                        }
                        json!({"jsonrpc": "2.0", "id": id, "result": result})
                    }
                    _ => unreachable!("only reply and fail get here"),
                };
                wire.send(&message)
            }
            Command::Update(update) => {
                let Some(session) = &self.session else {
                    return Err(script_error(
                        "send update: no session yet (reply to session/new with a sessionId first, or use send session/update with the full params)"
                            .to_owned(),
                    ));
                };
                wire.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": session, "update": update},
                }))
            }
            Command::Send { method, params } => {
                let mut message = json!({"jsonrpc": "2.0", "method": method});
                if let Some(params) = params {
                    message["params"] = params.clone();
                }
                wire.send(&message)
            }
            Command::Request { method, params } => {
                let id = wire.new_id();
                wire.send(
                    &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
                )?;
                let waiting = format!("the answer to the {method} of script line {line}");
                let mut meanwhile = Vec::new();
                let answer = loop {
                    let message = wire.next(&waiting)?;
                    let is_answer = message.get("method").is_none()
                        && message.get("id").and_then(Value::as_i64) == Some(id);
                    if is_answer {
                        break message;
                    }
                    meanwhile.push(message);
                };
                for message in meanwhile {
                    wire.stash(message);
                }
                self.answer = Some(answer);
                Ok(())
            }
            Command::Answered(pattern) => {
                let answer = self.answer.clone().unwrap_or(Value::Null);
                match answer.get("result") {
                    Some(result) => {
                        for d in differences(pattern, result, &[]) {
                            wire.differ(format!("script line {line}, the answer: result.{d}"));
                        }
                    }
                    None => wire.differ(format!(
                        "script line {line}: the answer is an error ({}), not a result",
                        answer
                            .get("error")
                            .map(Value::to_string)
                            .unwrap_or_default()
                    )),
                }
                Ok(())
            }
            Command::AnsweredError(code) => {
                let answer = self.answer.clone().unwrap_or(Value::Null);
                match (answer.get("error"), code) {
                    (None, _) => wire.differ(format!(
                        "script line {line}: the answer is a result, not an error"
                    )),
                    (Some(error), Some(code))
                        if error.get("code").and_then(Value::as_i64) != Some(*code) =>
                    {
                        wire.differ(format!(
                            "script line {line}: the answer's error code is {}, expected {code}",
                            error.get("code").map(Value::to_string).unwrap_or_default()
                        ));
                    }
                    _ => {}
                }
                Ok(())
            }
            Command::Sleep(duration) => {
                std::thread::sleep(*duration);
                Ok(())
            }
            Command::Exit(code) => Err(Stop::Exit(*code)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_parses() {
        let script = Script::parse(
            "# a comment\n\
             expect initialize\n\
             expect session/prompt {\"prompt\":[]}\n\
             reply {\"protocolVersion\":1}\n\
             fail -32603 it broke badly\n\
             \n\
             send update {\"sessionUpdate\":\"plan\",\"entries\":[]}\n\
             send session/cancelled\n\
             send x/y {\"a\":1}\n\
             request fs/read_text_file {\"path\":\"/a\"}\n\
             answered {\"content\":\"\"}\n\
             answered error\n\
             answered error -32602\n\
             sleep 250ms\n\
             sleep 1.5s\n\
             sleep 20\n\
             exit\n\
             exit 3\n",
        )
        .unwrap();
        let commands: Vec<Command> = script.commands.into_iter().map(|(_, c)| c).collect();
        assert_eq!(
            commands,
            vec![
                Command::Expect {
                    method: "initialize".into(),
                    pattern: None
                },
                Command::Expect {
                    method: "session/prompt".into(),
                    pattern: Some(json!({"prompt": []}))
                },
                Command::Reply(json!({"protocolVersion": 1})),
                Command::Fail {
                    code: -32603,
                    message: "it broke badly".into()
                },
                Command::Update(json!({"sessionUpdate": "plan", "entries": []})),
                Command::Send {
                    method: "session/cancelled".into(),
                    params: None
                },
                Command::Send {
                    method: "x/y".into(),
                    params: Some(json!({"a": 1}))
                },
                Command::Request {
                    method: "fs/read_text_file".into(),
                    params: json!({"path": "/a"})
                },
                Command::Answered(json!({"content": ""})),
                Command::AnsweredError(None),
                Command::AnsweredError(Some(-32602)),
                Command::Sleep(Duration::from_millis(250)),
                Command::Sleep(Duration::from_millis(1500)),
                Command::Sleep(Duration::from_millis(20)),
                Command::Exit(0),
                Command::Exit(3),
            ]
        );
    }

    #[test]
    fn mistakes_name_their_line() {
        let error = |text: &str| Script::parse(text).unwrap_err();
        assert_eq!(
            error("expect initialize\nfrobnicate\n"),
            "2: unknown command \"frobnicate\" (expected expect, reply, fail, send, request, answered, sleep or exit)"
        );
        assert!(
            error("expect a {bad json}").starts_with("1: the params pattern is not one JSON value")
        );
        assert_eq!(
            error("reply {}"),
            "1: nothing to answer yet (expect a request first)"
        );
        assert_eq!(error("answered {}"), "1: no request was sent yet");
        assert_eq!(
            error("sleep soon"),
            "1: \"soon\" is not a duration (like 250ms or 2s)"
        );
        assert_eq!(error("expect"), "1: expect needs a method");
        assert_eq!(
            error("expect x\nfail abc"),
            "2: \"abc\" is not an error code"
        );
        assert_eq!(error("send update"), "1: send update needs the update");
        assert_eq!(error("request x"), "1: request needs params");
    }
}
