//! A session's life past its turns, each when advertised: `session/load`
//! (in the same and in a new process), `session/list`, `session/resume`,
//! `session/close`, `session/delete`.

use super::shared::{
    Judged, On, Ready, advertised, advertises, call_failure, capability, strictly,
};
use crate::agent::cx::{AgentCx, GRACE, needs};
use crate::agent::rules;
use crate::report::{Outcome, shorten};
use serde_json::{Value, json};

pub(super) async fn load_on(cx: &mut AgentCx, fresh: bool) -> Outcome {
    if let Err(o) = advertises(cx, "load").await {
        return o;
    }
    let turn = match cx.ordinary().await {
        Ok(t) => t,
        Err(e) => return needs("a turn", &e),
    };
    // In the same process, a session of its own with one turn: the main
    // session may still be busy with a turn that ignored its cancel.
    let turn = if fresh {
        turn
    } else {
        let (s, _) = match cx.new_session().await {
            Ok(s) => s,
            Err(e) => return needs("session/new", &e),
        };
        let text = cx.prompt_text(&cx.opts.prompts.first().cloned().unwrap_or_default());
        match cx
            .turn(&s.id, json!([{"type": "text", "text": text}]))
            .await
        {
            Ok(t) => t,
            Err(e) => return needs("a turn", &e),
        }
    };
    let params = json!({"sessionId": turn.session, "cwd": cx.workspace(), "mcpServers": []});
    let timeout = cx.opts.timeout;
    let (call, wire) = if fresh {
        let (mut peer, init) = match cx.fresh(1).await {
            Ok(x) => x,
            Err(e) => return Outcome::fail(e.to_string()),
        };
        if init.result().is_none() {
            cx.keep(peer);
            return call_failure("initialize of the new process", &init);
        }
        if let Some(method) = cx.opts.auth.clone() {
            peer.wire
                .call("authenticate", json!({"methodId": method}), timeout)
                .await;
        }
        let call = peer.wire.call("session/load", params, timeout).await;
        peer.wire.drain(GRACE).await;
        let id = peer.wire.id;
        cx.keep(peer);
        (call, id)
    } else {
        let peer = match cx.main().await {
            Ok(p) => p,
            Err(e) => return Outcome::fail(e.to_string()),
        };
        let call = peer.wire.call("session/load", params, timeout).await;
        peer.wire.drain(GRACE).await;
        (call, peer.wire.id)
    };
    let Some(answered) = call.seq().filter(|_| call.result().is_some()) else {
        return call_failure("session/load", &call);
    };
    let events = cx.log.since(call.sent);
    let replayed = events
        .iter()
        .filter(|e| e.wire == wire && e.seq < answered)
        .filter(|e| rules::update(e).is_some_and(|(s, _, _)| s == turn.session))
        .count();
    if replayed == 0 {
        return Outcome::fail("no history was replayed before the session/load response")
            .with_message(&call.describe());
    }
    let late = events.iter().find(|e| {
        e.wire == wire
            && e.seq > answered
            && rules::update(e).is_some_and(|(s, k, _)| {
                s == turn.session && (k.ends_with("_chunk") || k.starts_with("tool_call"))
            })
    });
    if let Some(e) = late {
        return Outcome::fail("history arrived after the session/load response")
            .with_message(&e.line);
    }
    strictly(cx, Some(answered))
}

pub(super) async fn session_load(cx: &mut AgentCx) -> Outcome {
    load_on(cx, false).await
}

pub(super) async fn session_load_fresh(cx: &mut AgentCx) -> Outcome {
    load_on(cx, true).await
}

/// Every session id `session/list` answers (following `nextCursor`).
pub(super) async fn list_all(cx: &mut AgentCx) -> Result<Vec<String>, Outcome> {
    let timeout = cx.opts.timeout;
    let peer = cx.main().await.map_err(|e| Outcome::fail(e.to_string()))?;
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let mut params = json!({});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let call = peer.wire.call("session/list", params, timeout).await;
        let Some(result) = call.result() else {
            return Err(call_failure("session/list", &call));
        };
        for s in result["sessions"].as_array().into_iter().flatten() {
            if let Some(id) = s["sessionId"].as_str() {
                ids.push(id.to_string());
            }
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_string()),
            _ => return Ok(ids),
        }
    }
    Err(Outcome::fail(
        "session/list kept answering a nextCursor (50 pages)",
    ))
}

pub(super) async fn session_list(cx: &mut AgentCx) -> Judged {
    let Ready { session: s, .. } = advertised(cx, "list", On::Main).await?;
    Ok(match list_all(cx).await {
        Err(o) => o,
        Ok(ids) if ids.contains(&s.id) => Outcome::pass(),
        // An agent may list only what it stored; worth knowing, not a failure.
        Ok(ids) => Outcome::pass().with_notes([format!(
            "the session {} opened here is not listed (listed: {})",
            s.id,
            shorten(&ids.join(", "), 200)
        )]),
    })
}

pub(super) async fn session_resume(cx: &mut AgentCx) -> Judged {
    let Ready {
        session: s,
        cwd,
        timeout,
        peer,
    } = advertised(cx, "resume", On::Main).await?;
    let params = json!({"sessionId": s.id, "cwd": cwd, "mcpServers": []});
    let call = peer.wire.call("session/resume", params, timeout).await;
    peer.wire.drain(GRACE).await;
    if call.result().is_none() {
        return Err(call_failure("session/resume", &call));
    }
    Ok(strictly(cx, call.seq()))
}

pub(super) async fn session_close(cx: &mut AgentCx) -> Judged {
    let Ready {
        session: s,
        timeout,
        peer,
        ..
    } = advertised(cx, "close", On::New).await?;
    let call = peer
        .wire
        .call("session/close", json!({"sessionId": s.id}), timeout)
        .await;
    if call.result().is_none() {
        return Err(call_failure("session/close", &call));
    }
    let prompt = json!({"sessionId": s.id, "prompt": [{"type": "text", "text": "hello"}]});
    let after = peer.wire.call("session/prompt", prompt, timeout).await;
    peer.wire.drain(GRACE).await;
    if after.error().is_none() {
        return Err(
            Outcome::fail("a prompt to the closed session was not refused")
                .with_message(&after.describe()),
        );
    }
    Ok(strictly(cx, call.seq()))
}

pub(super) async fn session_delete(cx: &mut AgentCx) -> Judged {
    let Ready {
        session: s,
        timeout,
        peer,
        ..
    } = advertised(cx, "delete", On::New).await?;
    let call = peer
        .wire
        .call("session/delete", json!({"sessionId": s.id}), timeout)
        .await;
    if call.result().is_none() {
        return Err(call_failure("session/delete", &call));
    }
    if capability(cx, "list").await == Ok(true) && list_all(cx).await?.contains(&s.id) {
        return Err(Outcome::fail(format!(
            "the deleted session {} is still listed",
            s.id
        )));
    }
    Ok(strictly(cx, call.seq()))
}
