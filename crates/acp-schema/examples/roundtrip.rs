//! Decodes and re-encodes ACP params and results, one JSON line at a time.
//!
//! Each input line is `{"method": M, "kind": "params" | "result", "value": V}`.
//! `V` is decoded as the params (`"params"`) or the successful result (`"result"`)
//! of method `M`, re-encoded, and written back as exactly one line:
//! `{"ok":true,"value":<re-encoded>}` or `{"ok":false,"error":"<message>"}`, where
//! the message names the offending field path. `_`-prefixed extension methods keep
//! `V` byte for byte. Output is flushed after every line, so the program works as
//! a co-process on a pipe.
//!
//! ```text
//! $ echo '{"method":"session/cancel","kind":"params","value":{"sessionId":"s"}}' \
//!     | cargo run -q -p acp-schema --example roundtrip
//! {"ok":true,"value":{"sessionId":"s"}}
//! ```

use acp_schema::{
    AgentNotification, AgentRequest, AgentResponse, CancelRequestNotification, ClientNotification,
    ClientRequest, ClientResponse, MethodEnum, MethodKind, Notification, ParamsError, Side,
    method_info,
};
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("roundtrip: cannot read stdin: {e}");
                std::process::exit(1);
            }
        }
        let reply = match std::str::from_utf8(&line) {
            Ok(text) => reply(text.trim_end_matches(['\n', '\r'])),
            Err(_) => failure("the line is not valid UTF-8"),
        };
        let mut out = stdout.lock();
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            // The reader went away: nothing left to do.
            break;
        }
    }
}

/// The output line for one input line.
fn reply(line: &str) -> String {
    match process(line) {
        Ok(value) => format!("{{\"ok\":true,\"value\":{value}}}"),
        Err(message) => failure(&message),
    }
}

fn failure(message: &str) -> String {
    let message = serde_json::Value::from(message);
    format!("{{\"ok\":false,\"error\":{message}}}")
}

/// Whether the line asks for params or a successful result.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Params,
    Result,
}

fn process(line: &str) -> Result<String, String> {
    if line.trim().is_empty() {
        return Err("empty line: expected {\"method\": …, \"kind\": …, \"value\": …}".into());
    }
    let fields: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(line).map_err(|e| format!("the line is not a JSON object: {e}"))?;
    let field = |name: &str| {
        fields
            .get(name)
            .ok_or_else(|| format!("the line has no `{name}`"))
    };
    let method: String = serde_json::from_str(field("method")?.get())
        .map_err(|_| "`method` must be a string".to_string())?;
    let kind: String = serde_json::from_str(field("kind")?.get())
        .map_err(|_| "`kind` must be a string".to_string())?;
    let kind = match kind.as_str() {
        "params" => Kind::Params,
        "result" => Kind::Result,
        other => {
            return Err(format!(
                "`kind` must be \"params\" or \"result\", not {other:?}"
            ));
        }
    };
    let value = field("value")?;

    if method.starts_with('_') {
        // Extension methods: the value is opaque and kept exactly.
        return Ok(value.get().to_string());
    }
    if method == CancelRequestNotification::METHOD {
        return match kind {
            Kind::Params => {
                let params: CancelRequestNotification =
                    acp_schema::decode(acp_schema::params_text(Some(value)))
                        .map_err(|e| e.to_string())?;
                encode(&params)
            }
            Kind::Result => Err(format!("`{method}` is a notification: it has no result")),
        };
    }
    let info = method_info(&method).ok_or_else(|| format!("unknown method `{method}`"))?;
    let value = Some(&**value);
    match (kind, info.kind, info.handled_by) {
        (Kind::Params, MethodKind::Request, Side::Agent) => {
            decoded(ClientRequest::decode(&method, value))
        }
        (Kind::Params, MethodKind::Request, _) => decoded(AgentRequest::decode(&method, value)),
        (Kind::Params, MethodKind::Notification, Side::Agent) => {
            decoded(ClientNotification::decode(&method, value))
        }
        (Kind::Params, MethodKind::Notification, _) => {
            decoded(AgentNotification::decode(&method, value))
        }
        (Kind::Result, MethodKind::Request, Side::Agent) => {
            decoded(AgentResponse::decode(&method, value))
        }
        (Kind::Result, MethodKind::Request, _) => decoded(ClientResponse::decode(&method, value)),
        (Kind::Result, MethodKind::Notification, _) => {
            Err(format!("`{method}` is a notification: it has no result"))
        }
    }
}

/// Re-encodes a decoded value, or describes why decoding failed.
fn decoded<T: Serialize>(result: Result<T, ParamsError>) -> Result<String, String> {
    match result {
        Ok(value) => encode(&value),
        Err(ParamsError::Invalid(e)) => Err(e.to_string()),
        Err(e @ ParamsError::UnknownMethod(_)) => Err(e.to_string()),
    }
}

fn encode<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| format!("cannot encode the value: {e}"))
}
