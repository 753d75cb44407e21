//! The method tables and routing enums of `method.rs` against the schemas:
//! every `x-method` definition of latest and npm is in the tables with the same
//! method, side, params type and response type; every method of `meta.json`
//! (seed and latest) is listed; no method appears twice; the routing enums decode
//! every method, reject unknown ones, keep `_` extension params byte for byte and
//! read absent or `null` params as `{}`.

use crate::common;

use acp_schema::{
    AGENT_METHODS, AgentNotification, AgentRequest, AgentResponse, CLIENT_METHODS,
    ClientNotification, ClientRequest, ClientResponse, MethodEnum, MethodInfo, MethodKind,
    PROTOCOL_METHODS, ParamsError, Side, method_info,
};
use common::*;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet};

fn all_methods() -> impl Iterator<Item = &'static MethodInfo> {
    AGENT_METHODS
        .iter()
        .chain(CLIENT_METHODS)
        .chain(PROTOCOL_METHODS)
}

/// The unstable methods: the cargo feature that adds each to the tables, and
/// the unstable schema that defines it.
const UNSTABLE_METHODS: &[(&str, &str, SchemaFile)] = &[
    (
        "session/set_model",
        "unstable-session-model",
        SchemaFile::SeedUnstable,
    ),
    (
        "session/fork",
        "unstable-session-fork",
        SchemaFile::NpmUnstable,
    ),
    (
        "session/set_title",
        "unstable-session-title",
        SchemaFile::NpmUnstable,
    ),
    (
        "providers/list",
        "unstable-providers",
        SchemaFile::NpmUnstable,
    ),
    (
        "providers/set",
        "unstable-providers",
        SchemaFile::NpmUnstable,
    ),
    (
        "providers/disable",
        "unstable-providers",
        SchemaFile::NpmUnstable,
    ),
    (
        "mcp/message",
        "unstable-mcp-over-acp",
        SchemaFile::NpmUnstable,
    ),
];

/// The methods the unstable schemas define on both sides: `mcp/message` is a
/// request the client handles and a notification the agent handles.
const TWO_SIDED: &[&str] = &["mcp/message"];

fn unstable_method(method: &str) -> Option<&'static (&'static str, &'static str, SchemaFile)> {
    UNSTABLE_METHODS.iter().find(|(m, _, _)| *m == method)
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).expect("valid JSON")
}

/// What a schema says about one method: side, params def, response def.
#[derive(Debug, Default)]
struct SchemaMethod {
    side: String,
    params: Option<String>,
    response: Option<String>,
}

fn schema_methods(file: SchemaFile) -> BTreeMap<String, SchemaMethod> {
    let mut out: BTreeMap<String, SchemaMethod> = BTreeMap::new();
    for (name, d) in defs(file) {
        let Some(method) = d.get("x-method").and_then(Value::as_str) else {
            continue;
        };
        let side = d.get("x-side").and_then(Value::as_str).unwrap_or_default();
        let entry = out.entry(method.to_string()).or_default();
        assert!(
            entry.side.is_empty() || entry.side == side,
            "{}: {method} has two sides",
            file.label()
        );
        entry.side = side.to_string();
        let slot = if name.ends_with("Response") {
            &mut entry.response
        } else {
            &mut entry.params
        };
        assert!(
            slot.is_none(),
            "{}: {method} has two {name}-like definitions",
            file.label()
        );
        *slot = Some(name.clone());
    }
    out
}

#[test]
fn tables_match_the_schemas() {
    let mut problems = Vec::new();
    for file in [SchemaFile::Latest, SchemaFile::Npm] {
        let label = file.label();
        let methods = schema_methods(file);
        for (method, sm) in &methods {
            let Some(info) = method_info(method) else {
                problems.push(format!("{label}: {method} is missing from the tables"));
                continue;
            };
            if info.handled_by.as_str() != sm.side {
                problems.push(format!(
                    "{label}: {method} is handled by {} in the table, {} in the schema",
                    info.handled_by.as_str(),
                    sm.side
                ));
            }
            let table = match info.handled_by {
                Side::Agent => AGENT_METHODS,
                Side::Client => CLIENT_METHODS,
                Side::Protocol => PROTOCOL_METHODS,
            };
            if !table.iter().any(|m| m.method == method.as_str()) {
                problems.push(format!("{label}: {method} is in the wrong table"));
            }
            if Some(info.params) != sm.params.as_deref() {
                problems.push(format!(
                    "{label}: {method} params {} vs schema {:?}",
                    info.params, sm.params
                ));
            }
            if info.response != sm.response.as_deref() {
                problems.push(format!(
                    "{label}: {method} response {:?} vs schema {:?}",
                    info.response, sm.response
                ));
            }
            let expected_kind = if sm.response.is_some() {
                MethodKind::Request
            } else {
                MethodKind::Notification
            };
            if info.kind != expected_kind {
                problems.push(format!("{label}: {method} kind {:?}", info.kind));
            }
        }
        // And nothing in the tables that the schema lacks (but the unstable
        // methods of the features this build has; see the next test).
        for info in all_methods() {
            if let Some((_, feature, _)) = unstable_method(info.method) {
                assert!(
                    feature_enabled(feature),
                    "{} is in the tables without `{feature}`",
                    info.method
                );
                continue;
            }
            if !methods.contains_key(info.method) {
                problems.push(format!(
                    "{label}: the tables list {} which the schema lacks",
                    info.method
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "method tables disagree with the schemas:\n  {}",
        problems.join("\n  ")
    );
}

/// What an unstable schema says about a method on one side, as a request or
/// as a notification: params and response definitions (a method may be
/// defined on both sides, or as both kinds).
fn sided_schema_methods(file: SchemaFile) -> BTreeMap<(String, String, bool), SchemaMethod> {
    let mut out: BTreeMap<(String, String, bool), SchemaMethod> = BTreeMap::new();
    for (name, d) in defs(file) {
        let Some(method) = d.get("x-method").and_then(Value::as_str) else {
            continue;
        };
        let side = d.get("x-side").and_then(Value::as_str).unwrap_or_default();
        let notification = name.ends_with("Notification");
        let entry = out
            .entry((method.to_string(), side.to_string(), notification))
            .or_default();
        entry.side = side.to_string();
        let slot = if name.ends_with("Response") {
            &mut entry.response
        } else {
            &mut entry.params
        };
        assert!(slot.is_none(), "{}: {method} ({side}) twice", file.label());
        *slot = Some(name.clone());
    }
    out
}

#[test]
fn unstable_tables_match_the_unstable_schemas() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (method, feature, file) in UNSTABLE_METHODS {
        let schema = sided_schema_methods(*file);
        let listed: Vec<&MethodInfo> = all_methods().filter(|m| m.method == *method).collect();
        if !feature_enabled(feature) {
            if !listed.is_empty() {
                problems.push(format!("{method} is listed without `{feature}`"));
            }
            continue;
        }
        let sides: Vec<&SchemaMethod> = schema
            .iter()
            .filter(|((m, _, _), _)| m == method)
            .map(|(_, sm)| sm)
            .collect();
        if sides.is_empty() {
            problems.push(format!("{}: no {method}", file.label()));
        }
        if sides.len() != listed.len() {
            problems.push(format!(
                "{method}: {} sides in {}, {} lines in the tables",
                sides.len(),
                file.label(),
                listed.len()
            ));
        }
        for info in listed {
            checked += 1;
            let key = (
                method.to_string(),
                info.handled_by.as_str().to_string(),
                info.kind == MethodKind::Notification,
            );
            let Some(sm) = schema.get(&key) else {
                problems.push(format!(
                    "{method}: handled by {} in the table, not in {}",
                    info.handled_by.as_str(),
                    file.label()
                ));
                continue;
            };
            if Some(info.params) != sm.params.as_deref() || info.response != sm.response.as_deref()
            {
                problems.push(format!(
                    "{method}: {} => {:?} in the table, {:?} => {:?} in {}",
                    info.params,
                    info.response,
                    sm.params,
                    sm.response,
                    file.label()
                ));
            }
            let kind = if sm.response.is_some() {
                MethodKind::Request
            } else {
                MethodKind::Notification
            };
            if info.kind != kind {
                problems.push(format!("{method}: kind {:?}", info.kind));
            }
        }
    }
    // Every method of the features' unstable schema files is one of these, or
    // a method of an area this crate does not type.
    eprintln!("{checked} unstable table lines checked");
    assert!(
        problems.is_empty(),
        "unstable method tables disagree with the schemas:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_meta_json_method_is_listed() {
    let mut problems = Vec::new();
    for file in [SchemaFile::Seed, SchemaFile::Latest] {
        let meta = meta_json(file);
        assert_eq!(meta["version"], 1, "{}: protocol version", file.label());
        for (group, side) in [
            ("agentMethods", Side::Agent),
            ("clientMethods", Side::Client),
            ("protocolMethods", Side::Protocol),
        ] {
            let Some(map) = meta.get(group).and_then(Value::as_object) else {
                assert!(
                    file == SchemaFile::Seed && group == "protocolMethods",
                    "{}: meta.json lacks {group}",
                    file.label()
                );
                continue;
            };
            for method in map.values().filter_map(Value::as_str) {
                match method_info(method) {
                    None => problems.push(format!(
                        "{}: {method} ({group}) is not listed",
                        file.label()
                    )),
                    Some(info) if info.handled_by != side => problems.push(format!(
                        "{}: {method} ({group}) is handled by {:?}",
                        file.label(),
                        info.handled_by
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_method_is_listed_twice() {
    let mut seen = BTreeSet::new();
    let mut twice = 0;
    for info in all_methods() {
        if TWO_SIDED.contains(&info.method) && seen.contains(info.method) {
            // Defined by the schema on both sides: once per table.
            twice += 1;
            continue;
        }
        assert!(seen.insert(info.method), "{} is listed twice", info.method);
        assert!(
            !info.method.starts_with('_'),
            "{} looks like an extension",
            info.method
        );
    }
    assert_eq!(
        seen.len() + twice,
        AGENT_METHODS.len() + CLIENT_METHODS.len() + PROTOCOL_METHODS.len()
    );
    assert_eq!(PROTOCOL_METHODS.len(), 1);
    assert_eq!(
        method_info("$/cancel_request").map(|m| m.handled_by),
        Some(Side::Protocol)
    );
    assert_eq!(
        method_info("session/fork").is_some(),
        feature_enabled("unstable-session-fork"),
        "unstable methods stay out of the tables without their feature"
    );
}

/// The first exact (non-lenient, non-normalising) corpus example of `def`
/// (the unstable corpus holds those of the unstable methods).
fn sample(def: &str) -> String {
    corpus()
        .iter()
        .chain(unstable_corpus())
        .find(|ex| ex.def == def && ex.lenient == Lenient::No && ex.expect.is_none())
        .map(|ex| ex.input_text())
        .unwrap_or_else(|| panic!("no exact corpus example of {def}"))
}

fn check_decode<E: MethodEnum + std::fmt::Debug>(method: &str, def: &str) -> Result<(), String> {
    let params = sample(def);
    let decoded = E::decode(method, Some(&raw(&params))).map_err(|e| format!("{method}: {e}"))?;
    if decoded.method() != method {
        return Err(format!("{method}: decoded as {}", decoded.method()));
    }
    let out = serde_json::to_string(&decoded).map_err(|e| e.to_string())?;
    if out != params {
        return Err(format!("{method}: re-encoded\n    {params}\n as {out}"));
    }
    Ok(())
}

fn check_result<F>(method: &str, def: &str, decode: F) -> Result<(), String>
where
    F: Fn(&str, Option<&RawValue>) -> Result<String, ParamsError>,
{
    let result = sample(def);
    let out = decode(method, Some(&raw(&result))).map_err(|e| format!("{method} result: {e}"))?;
    if out != result {
        return Err(format!(
            "{method}: result re-encoded\n    {result}\n as {out}"
        ));
    }
    Ok(())
}

fn encode<T: serde::Serialize>(value: T) -> String {
    serde_json::to_string(&value).expect("serialises")
}

#[test]
fn routing_enums_decode_every_method() {
    let mut problems = Vec::new();
    for info in all_methods() {
        let r = match (info.handled_by, info.kind) {
            (Side::Agent, MethodKind::Request) => {
                check_decode::<ClientRequest>(info.method, info.params)
            }
            (Side::Agent, MethodKind::Notification) => {
                check_decode::<ClientNotification>(info.method, info.params)
            }
            (Side::Client, MethodKind::Request) => {
                check_decode::<AgentRequest>(info.method, info.params)
            }
            (Side::Client, MethodKind::Notification) => {
                check_decode::<AgentNotification>(info.method, info.params)
            }
            (Side::Protocol, _) => {
                let params = sample(info.params);
                acp_schema::decode::<acp_schema::CancelRequestNotification>(&params)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        };
        if let Err(e) = r {
            problems.push(e);
        }
        if let Some(response) = info.response {
            let r = match info.handled_by {
                Side::Agent => check_result(info.method, response, |m, r| {
                    AgentResponse::decode(m, r).map(encode)
                }),
                _ => check_result(info.method, response, |m, r| {
                    ClientResponse::decode(m, r).map(encode)
                }),
            };
            if let Err(e) = r {
                problems.push(e);
            }
        }
        // A method is routed by one side only (the two-sided ones: as a
        // request by one, as a notification by the other).
        let (other_request, other_notification) = match info.handled_by {
            Side::Agent => (
                AgentRequest::decode(info.method, None).is_ok(),
                AgentNotification::decode(info.method, None).is_ok(),
            ),
            Side::Client => (
                ClientRequest::decode(info.method, None).is_ok(),
                ClientNotification::decode(info.method, None).is_ok(),
            ),
            Side::Protocol => (false, false),
        };
        let other_side_knows = if TWO_SIDED.contains(&info.method) {
            match info.kind {
                MethodKind::Request => other_request,
                MethodKind::Notification => other_notification,
            }
        } else {
            other_request || other_notification
        };
        if other_side_knows {
            problems.push(format!("{} is also routed by the other side", info.method));
        }
    }
    assert!(
        problems.is_empty(),
        "routing problems:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn unknown_methods_are_rejected() {
    let p = raw("{}");
    let unstable_off = UNSTABLE_METHODS
        .iter()
        .filter(|(_, feature, _)| !feature_enabled(feature))
        .map(|(m, _, _)| *m);
    for method in unstable_off.chain([
        "nes/start",
        "",
        "Session/Prompt",
        "$/progress",
        "initialize ",
    ]) {
        assert_eq!(
            ClientRequest::decode(method, Some(&p)).unwrap_err(),
            ParamsError::UnknownMethod(method.to_string())
        );
        assert_eq!(
            AgentRequest::decode(method, Some(&p)).unwrap_err(),
            ParamsError::UnknownMethod(method.to_string())
        );
        assert!(matches!(
            ClientNotification::decode(method, Some(&p)),
            Err(ParamsError::UnknownMethod(_))
        ));
        assert!(matches!(
            AgentNotification::decode(method, Some(&p)),
            Err(ParamsError::UnknownMethod(_))
        ));
        assert!(matches!(
            AgentResponse::decode(method, Some(&p)),
            Err(ParamsError::UnknownMethod(_))
        ));
        assert!(matches!(
            ClientResponse::decode(method, Some(&p)),
            Err(ParamsError::UnknownMethod(_))
        ));
    }
    // A request method is not a notification and vice versa.
    assert!(matches!(
        ClientNotification::decode("session/prompt", Some(&p)),
        Err(ParamsError::UnknownMethod(_))
    ));
    assert!(matches!(
        ClientRequest::decode("session/cancel", Some(&p)),
        Err(ParamsError::UnknownMethod(_))
    ));
}

#[test]
fn extension_methods_keep_params_byte_for_byte() {
    let text = "{ \"query\" : \"TODO\",\n  \"n\": 1.50, \"z\": [ ] }";
    let params = raw(text);
    let ClientRequest::Ext(ext) = ClientRequest::decode("_acme/search", Some(&params)).unwrap()
    else {
        panic!("not Ext");
    };
    assert_eq!(&*ext.method, "_acme/search");
    assert_eq!(ext.params.get(), text);
    assert_eq!(encode(ClientRequest::Ext(ext.clone())), text);

    let AgentRequest::Ext(ext) = AgentRequest::decode("_zed/open", Some(&params)).unwrap() else {
        panic!("not Ext");
    };
    assert_eq!(ext.params.get(), text);
    let ClientNotification::Ext(n) = ClientNotification::decode("_x", Some(&params)).unwrap()
    else {
        panic!("not Ext");
    };
    assert_eq!(n.params.get(), text);
    let AgentNotification::Ext(n) = AgentNotification::decode("_x/y", Some(&raw("[1,2]"))).unwrap()
    else {
        panic!("not Ext");
    };
    assert_eq!(n.params.get(), "[1,2]");
    let AgentResponse::Ext(r) = AgentResponse::decode("_acme/search", Some(&params)).unwrap()
    else {
        panic!("not Ext");
    };
    assert_eq!(r.0.get(), text);
    let ClientResponse::Ext(r) = ClientResponse::decode("_zed/open", None).unwrap() else {
        panic!("not Ext");
    };
    assert_eq!(r.0.get(), "null");
    // Absent params of an extension read as `{}`.
    let ClientRequest::Ext(ext) = ClientRequest::decode("_acme/ping", None).unwrap() else {
        panic!("not Ext");
    };
    assert_eq!(ext.params.get(), "{}");
}

#[test]
fn absent_or_null_params_read_as_empty_object() {
    for params in [None, Some(raw("null")), Some(raw(" null "))] {
        let decoded = ClientRequest::decode("logout", params.as_deref()).unwrap();
        assert_eq!(decoded.method(), "logout");
        assert_eq!(encode(&decoded), "{}");
        assert!(ClientRequest::decode("session/list", params.as_deref()).is_ok());
        assert!(AgentResponse::decode("session/close", params.as_deref()).is_ok());
        assert!(ClientResponse::decode("fs/write_text_file", params.as_deref()).is_ok());
        let err = ClientRequest::decode("session/prompt", params.as_deref()).unwrap_err();
        let ParamsError::Invalid(e) = &err else {
            panic!("{err:?}")
        };
        assert!(e.to_string().contains("sessionId"), "{e}");
        let err = AgentNotification::decode("session/update", params.as_deref()).unwrap_err();
        assert!(err.to_string().contains("sessionId"), "{err}");
        let err = AgentResponse::decode("session/prompt", params.as_deref()).unwrap_err();
        assert!(err.to_string().contains("stopReason"), "{err}");
    }
    // `initialize` needs its protocol version even though everything else has defaults.
    let err = ClientRequest::decode("initialize", None).unwrap_err();
    assert!(err.to_string().contains("protocolVersion"), "{err}");
}

#[test]
fn invalid_params_name_the_field() {
    let err = ClientRequest::decode(
        "session/prompt",
        Some(&raw(
            r#"{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":3}]}"#,
        )),
    )
    .unwrap_err();
    let ParamsError::Invalid(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.path, "prompt[1].type", "{e}");
    let err = AgentRequest::decode(
        "fs/read_text_file",
        Some(&raw(r#"{"sessionId":"s","path":7}"#)),
    )
    .unwrap_err();
    let ParamsError::Invalid(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.path, "path", "{e}");
    let err: acp_schema::Error = ParamsError::UnknownMethod("nope".into()).into();
    assert_eq!(err.code, acp_schema::ErrorCode::METHOD_NOT_FOUND);
}
