//! The client's life, run once before the checks are read: start it in
//! the workspace, wait for it to start the checking agent (the relay),
//! serve `initialize` and `session/new`, run the prompt turn
//! ([`super::turn`]), end, and judge the wire.

use super::checks;
use super::child::ClientProcess;
use super::cx::{ClientCx, GRACE, Session};
use super::options::{PLACEHOLDER, shell_quote, substitute};
use super::turn;
use crate::report::Outcome;
use crate::strict::{Envelope, Handler};
use crate::wire::Wire;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Runs the client's life once: start it, wait for the agent, serve
/// initialize and session/new, run the turn, end; the outcomes are
/// recorded in `cx` for [`ClientCx::judged`].
pub(super) async fn live(cx: &mut ClientCx) {
    if cx.lived {
        return;
    }
    cx.lived = true;
    if let Err(why) = start(cx).await {
        cx.stop(why);
        finish(cx).await;
        fail_missing_step(cx);
        return;
    }
    serve(cx).await;
    finish(cx).await;
    fail_missing_step(cx);
    checks::judge_wire(cx);
}

/// Fails the first step of the life that did not happen (the client
/// must initialize, open a session and prompt once); the checks after it
/// are skipped as not reached.
fn fail_missing_step(cx: &mut ClientCx) {
    let why = cx.stopped.clone().unwrap_or_default();
    let step = if cx.init.is_none() {
        "initialize.request"
    } else if cx.new_session.is_none() {
        "session.new"
    } else if cx.prompt.is_none() {
        "session.prompt"
    } else {
        return;
    };
    let mut o = Outcome::fail(why);
    if step == "session.prompt" {
        o = o.with_notes([
            "acp check client needs the client to send one prompt: give a \
             headless client one on its command line, or type one"
                .to_string(),
        ]);
    }
    cx.record(step, o);
}

pub(super) async fn start(cx: &mut ClientCx) -> Result<(), String> {
    write_agent_script(cx).map_err(|e| format!("cannot write the agent script: {e}"))?;
    let listener = tokio::net::UnixListener::bind(cx.socket_path())
        .map_err(|e| format!("cannot listen on {}: {e}", cx.socket_path().display()))?;
    let argv = substitute(&cx.opts.command, &cx.agent_path().display().to_string())
        .map_err(|e| e.to_string())?;
    let client = ClientProcess::spawn(&argv, &cx.workspace()).map_err(|e| e.to_string())?;
    cx.client = Some(client);
    let deadline = tokio::time::Instant::now() + cx.opts.timeout;
    let stream = loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let exited = cx.client.as_mut().unwrap().child.try_wait().ok().flatten();
        if let Some(status) = exited {
            // What it said last, once its stderr has been read to the end.
            if let Some(read) = cx.client.as_mut().unwrap().stderr_read.take() {
                let _ = tokio::time::timeout(Duration::from_secs(1), read).await;
            }
            return Err(format!(
                "the client exited ({status}) without starting the agent{}",
                cx.client_said()
            ));
        }
        if left.is_zero() {
            return Err(format!(
                "the client did not start the agent ({PLACEHOLDER}) within {} s{}",
                cx.opts.timeout.as_secs(),
                cx.client_said()
            ));
        }
        let step = left.min(Duration::from_millis(200));
        if let Ok(Ok((stream, _))) = tokio::time::timeout(step, listener.accept()).await {
            break stream;
        }
    };
    // Later starts of the agent are told to go away (closed at once).
    let extra = cx.extra_agents.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            *extra.lock().unwrap() += 1;
            drop(stream);
        }
    });
    let (read, write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut hello = String::new();
    let got = tokio::time::timeout(cx.opts.timeout, read.read_line(&mut hello)).await;
    let ok = matches!(got, Ok(Ok(n)) if n > 0)
        && serde_json::from_str::<Value>(&hello).is_ok_and(|v| v["acpCheckRelay"] == 1);
    if !ok {
        return Err("the checking agent's relay did not introduce itself".into());
    }
    let mut wire = Wire::new(0, cx.log.clone(), Handler::Client, read, write);
    wire.answer_manually();
    cx.wire = Some(wire);
    Ok(())
}

/// Serves the client until its first prompt turn is over.
async fn serve(cx: &mut ClientCx) {
    let wait = cx.opts.timeout;
    loop {
        let Some(got) = cx.next(wait).await else {
            let why = if cx.wire().is_closed() {
                format!("the client closed the agent's stdin{}", cx.client_said())
            } else {
                format!("the client sent nothing for {} s", wait.as_secs())
            };
            let step = if cx.init.is_none() {
                "initialize"
            } else if cx.session.is_none() {
                "session/new"
            } else {
                "session/prompt"
            };
            cx.stop(format!("{why} before its {step}"));
            return;
        };
        let Some(Envelope::Request { id, method }) = got.envelope.clone() else {
            continue;
        };
        match method.as_str() {
            "initialize" => {
                if cx.init.is_none() {
                    cx.init = Some(got.clone());
                }
                // The one version there is: a client asking for a later
                // one is answered 1, as the protocol says.
                let result = json!({
                    "protocolVersion": 1,
                    "agentCapabilities": {
                        "loadSession": false,
                        "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                    },
                    "authMethods": [],
                    "agentInfo": agent_info(),
                });
                cx.wire().respond(&id, Ok(result));
            }
            "authenticate" => {
                cx.wire().respond(&id, Ok(json!({})));
            }
            "session/new" if cx.session.is_none() => {
                cx.new_session = Some(got.clone());
                let cwd = got
                    .value
                    .as_ref()
                    .and_then(|v| v["params"]["cwd"].as_str())
                    .unwrap_or("")
                    .to_string();
                let session = Session {
                    id: "acp-check-session-1".into(),
                    cwd: PathBuf::from(cwd),
                };
                let result = json!({"sessionId": session.id});
                cx.session = Some(session);
                cx.wire().respond(&id, Ok(result));
            }
            "session/prompt" if cx.session.is_some() && cx.prompt.is_none() => {
                cx.prompt = Some(got.clone());
                let stop = turn::run(cx).await;
                cx.wire().respond(&id, Ok(json!({"stopReason": stop})));
                return;
            }
            _ => cx.refuse(&id, &method),
        }
    }
}

/// Ends the life: a moment for late messages, then the agent's stdout
/// closes and the client has a few seconds to exit before it is killed.
pub(super) async fn finish(cx: &mut ClientCx) {
    if cx.wire.is_some() {
        let deadline = tokio::time::Instant::now() + GRACE;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            let Some(got) = cx.next(left).await else {
                break;
            };
            if let Some(Envelope::Request { id, method }) = &got.envelope {
                let (id, method) = (id.clone(), method.clone());
                cx.refuse(&id, &method);
            }
        }
        cx.wire().close_input();
    }
    if let Some(client) = &mut cx.client {
        client.end(Duration::from_secs(5)).await;
    }
}

fn agent_info() -> Value {
    json!({"name": "acp-check", "title": "acp check client", "version": env!("CARGO_PKG_VERSION")})
}

fn write_agent_script(cx: &ClientCx) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut words: Vec<String> = cx.opts.relay.iter().map(|w| shell_quote(w)).collect();
    words.push(shell_quote(&cx.socket_path().display().to_string()));
    let script = format!(
        "#!/bin/sh\n# The checking agent of acp check client: a relay to the judge.\ntrap '' INT\nexec {}\n",
        words.join(" ")
    );
    let path = cx.agent_path();
    std::fs::write(&path, script)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
}
