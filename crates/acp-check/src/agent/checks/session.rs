//! `session.new`, `session.unknown-rejected`, and the modes and config
//! options a new session answers (and setting them).

use super::shared::{Judged, On, Ready, call_failure, ready, strictly};
use crate::agent::cx::{AgentCx, GRACE, needs};
use crate::report::Outcome;
use crate::wire::Dir;
use serde_json::{Value, json};
use std::collections::HashSet;

pub(super) async fn session_new(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.authed().await {
        return needs("initialize", &e);
    }
    match cx.session().await {
        Err(e) => Outcome::fail(e.to_string()),
        Ok(s) if s.id.is_empty() => Outcome::fail("the session id is empty"),
        Ok(_) => {
            let seq = cx
                .log
                .all()
                .iter()
                .rev()
                .find(|e| {
                    e.wire == 0
                        && e.dir == Dir::In
                        && e.value
                            .as_ref()
                            .is_some_and(|v| v["result"].get("sessionId").is_some())
                })
                .map(|e| e.seq);
            strictly(cx, seq)
        }
    }
}

pub(super) async fn session_modes(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let Some(modes) = s.result.get("modes").filter(|m| !m.is_null()) else {
        return Outcome::skip("session/new answered no modes");
    };
    let available: Vec<&str> = modes["availableModes"]
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["id"].as_str()).collect())
        .unwrap_or_default();
    let distinct: HashSet<&&str> = available.iter().collect();
    if distinct.len() != available.len() {
        return Outcome::fail("two available modes share an id").with_message(&modes.to_string());
    }
    let current = modes["currentModeId"].as_str().unwrap_or("");
    if !available.contains(&current) {
        return Outcome::fail(format!(
            "the current mode {current:?} is not an available mode"
        ))
        .with_message(&modes.to_string());
    }
    Outcome::pass()
}

/// The values a select option offers (flat or grouped).
pub(super) fn select_values(option: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for o in option["options"].as_array().into_iter().flatten() {
        if let Some(v) = o["value"].as_str() {
            out.push(v.to_string());
        }
        for g in o["options"].as_array().into_iter().flatten() {
            if let Some(v) = g["value"].as_str() {
                out.push(v.to_string());
            }
        }
    }
    out
}

pub(super) async fn config_options(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let Some(options) = s.result["configOptions"]
        .as_array()
        .filter(|a| !a.is_empty())
    else {
        return Outcome::skip("session/new answered no config options");
    };
    let mut ids = HashSet::new();
    for o in options {
        let id = o["id"].as_str().unwrap_or("");
        if !ids.insert(id) {
            return Outcome::fail(format!("config option id {id} appears twice"));
        }
        if o["type"] == "select" {
            let current = o["currentValue"].as_str().unwrap_or("");
            if !select_values(o).iter().any(|v| v == current) {
                return Outcome::fail(format!(
                    "option {id}: the current value {current:?} is not one of its options"
                ))
                .with_message(&o.to_string());
            }
        }
    }
    Outcome::pass()
}

pub(super) async fn unknown_session(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.authed().await {
        return needs("initialize", &e);
    }
    let timeout = cx.opts.timeout;
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e.to_string()),
    };
    let params = json!({"sessionId": "acp-check-no-such-session", "prompt": [{"type": "text", "text": "hello"}]});
    let call = peer.wire.call("session/prompt", params, timeout).await;
    peer.wire.drain(GRACE).await;
    match (call.result(), call.error()) {
        (_, Some(_)) => Outcome::pass(),
        (Some(_), _) => Outcome::fail("a prompt to an unknown session was answered with success")
            .with_message(&call.describe()),
        _ => Outcome::fail(format!("no answer: {}", call.describe())),
    }
}

pub(super) async fn set_mode(cx: &mut AgentCx) -> Judged {
    let Ready {
        session: s,
        timeout,
        peer,
        ..
    } = ready(cx, On::Main).await?;
    let Some(modes) = s.result.get("modes").filter(|m| !m.is_null()) else {
        return Err(Outcome::skip("session/new answered no modes"));
    };
    let current = modes["currentModeId"].as_str().unwrap_or("").to_string();
    let ids: Vec<String> = modes["availableModes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let target = ids.iter().find(|m| **m != current).or(ids.first()).cloned();
    let Some(target) = target else {
        return Err(Outcome::skip("no available mode"));
    };
    let call = peer
        .wire
        .call(
            "session/set_mode",
            json!({"sessionId": s.id, "modeId": target}),
            timeout,
        )
        .await;
    peer.wire.drain(GRACE).await;
    if call.result().is_none() {
        return Err(call_failure(
            &format!("session/set_mode to {target}"),
            &call,
        ));
    }
    Ok(strictly(cx, call.seq()))
}

pub(super) async fn set_config_option(cx: &mut AgentCx) -> Judged {
    let Ready {
        session: s,
        timeout,
        peer,
        ..
    } = ready(cx, On::Main).await?;
    let options = s.result["configOptions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut choice = None;
    for o in &options {
        let id = o["id"].as_str().unwrap_or("").to_string();
        if o["type"] == "select" {
            let current = o["currentValue"].as_str().unwrap_or("");
            if let Some(v) = select_values(o).into_iter().find(|v| v != current) {
                choice = Some((
                    id,
                    json!(v),
                    json!({"sessionId": s.id, "configId": o["id"], "value": v}),
                ));
                break;
            }
        } else if o["type"] == "boolean" {
            let v = !o["currentValue"].as_bool().unwrap_or(false);
            choice = Some((
                id,
                json!(v),
                json!({"sessionId": s.id, "configId": o["id"], "type": "boolean", "value": v}),
            ));
            break;
        }
    }
    let Some((id, value, params)) = choice else {
        return Err(Outcome::skip("no config option with another value to set"));
    };
    let call = peer
        .wire
        .call("session/set_config_option", params, timeout)
        .await;
    peer.wire.drain(GRACE).await;
    let Some(result) = call.result() else {
        return Err(call_failure(
            &format!("session/set_config_option {id}"),
            &call,
        ));
    };
    let now = result["configOptions"]
        .as_array()
        .and_then(|a| a.iter().find(|o| o["id"] == json!(id)))
        .map(|o| o["currentValue"].clone());
    Ok(match now {
        Some(v) if v == value => strictly(cx, call.seq()),
        Some(v) => Outcome::fail(format!("set {id} to {value}, but the answer says {v}"))
            .with_message(&call.describe()),
        None => Outcome::fail(format!("the answer does not list option {id}"))
            .with_message(&call.describe()),
    })
}
