//! `initialize.*` and `auth.*`: the version exchange and authentication.

use super::shared::{call_failure, strictly};
use crate::agent::cx::{AgentCx, needs};
use crate::report::Outcome;
use crate::wire::Dir;
use serde_json::json;
use std::collections::HashSet;

pub(super) async fn initialize_response(cx: &mut AgentCx) -> Outcome {
    match cx.init().await {
        Err(e) => Outcome::fail(e.to_string()),
        Ok(_) => {
            let seq = cx
                .log
                .all()
                .iter()
                .find(|e| {
                    e.wire == 0
                        && e.dir == Dir::In
                        && e.value.as_ref().is_some_and(|v| v.get("result").is_some())
                })
                .map(|e| e.seq);
            strictly(cx, seq)
        }
    }
}

pub(super) async fn initialize_version(cx: &mut AgentCx) -> Outcome {
    let init = match cx.init().await {
        Ok(i) => i,
        Err(e) => return needs("initialize", &e),
    };
    match init.result.get("protocolVersion") {
        Some(v) if *v == json!(1) => Outcome::pass(),
        Some(v) => Outcome::fail(format!("asked for version 1, answered {v}")),
        None => Outcome::fail("no protocolVersion in the answer"),
    }
}

pub(super) async fn unsupported_version(cx: &mut AgentCx) -> Outcome {
    let (peer, call) = match cx.fresh(65535).await {
        Ok(x) => x,
        Err(e) => return Outcome::fail(e.to_string()),
    };
    cx.keep(peer);
    match call.result().map(|r| r.get("protocolVersion")) {
        None => call_failure("initialize with version 65535", &call),
        Some(Some(v)) if *v == json!(65535) => {
            Outcome::fail("answered version 65535: it cannot support a version that does not exist")
                .with_message(&call.describe())
        }
        Some(Some(v)) if v.is_u64() => Outcome::pass(),
        Some(_) => Outcome::fail("no protocolVersion in the answer").with_message(&call.describe()),
    }
}

pub(super) async fn auth_methods(cx: &mut AgentCx) -> Outcome {
    let init = match cx.init().await {
        Ok(i) => i,
        Err(e) => return needs("initialize", &e),
    };
    let methods = init.result["authMethods"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut ids = HashSet::new();
    for m in &methods {
        let id = m["id"].as_str().unwrap_or("");
        if id.is_empty() || m["name"].as_str().is_none_or(str::is_empty) {
            return Outcome::fail("an auth method without an id or a name")
                .with_message(&m.to_string());
        }
        if !ids.insert(id.to_string()) {
            return Outcome::fail(format!("auth method id {id} appears twice"));
        }
    }
    Outcome::pass()
}

pub(super) async fn authenticate(cx: &mut AgentCx) -> Outcome {
    let init = match cx.init().await {
        Ok(i) => i,
        Err(e) => return needs("initialize", &e),
    };
    let ids: Vec<String> = init.result["authMethods"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let Some(method) = cx.opts.auth.clone() else {
        return Outcome::skip(if ids.is_empty() {
            "the agent offers no auth methods".to_string()
        } else {
            format!(
                "the agent offers {}; pass --auth METHOD to check authentication",
                ids.join(", ")
            )
        });
    };
    if !ids.contains(&method) {
        return Outcome::fail(format!(
            "--auth {method} is not among the methods the agent offers ({})",
            ids.join(", ")
        ));
    }
    match cx.authed().await {
        Ok(()) => Outcome::pass(),
        Err(e) => Outcome::fail(e.to_string()),
    }
}
