//! Permission requests and elicitations between the versions.
//!
//! To v2: the v1 tool call becomes the subject (`type: tool_call`) and its
//! title the question (`title`; "Allow this tool call?" when it has none).
//! To v1: the question becomes the title of the v1 tool call (as v1 agents
//! do; the v1 client may show it as the call's title) and the description is
//! lost; a command subject becomes an `execute` tool call whose `rawInput` is
//! `{"command", "cwd"}`; a request without a subject (or with one of an
//! unknown type) becomes a tool call of its own id. An outcome the receiver
//! does not know is answered `cancelled`, never taken for an approval. An
//! elicitation answer value v1 cannot hold (`null`, an object) is dropped.

use super::content::raw_object;
use super::tool_call::tool_call_update_to_v2;
use acp_schema::{self as v1, OrderedMap, ToolCallId, v2};

/// A v1 agent's permission request as a v2 agent's.
pub(crate) fn permission_request_to_v2(
    r: v1::RequestPermissionRequest,
) -> v2::RequestPermissionRequest {
    let title = r
        .tool_call
        .title
        .clone()
        .unwrap_or_else(|| "Allow this tool call?".to_string());
    let subject = v2::RequestPermissionSubject::from(tool_call_update_to_v2(r.tool_call));
    let mut out =
        v2::RequestPermissionRequest::new(r.session_id, title, r.options).subject(subject);
    out.meta = r.meta;
    out
}

/// A v2 agent's permission request as a v1 agent's; `fallback` names the
/// tool call when the request has none.
pub(crate) fn permission_request_to_v1(
    r: v2::RequestPermissionRequest,
    fallback: ToolCallId,
) -> v1::RequestPermissionRequest {
    let call = match r.subject {
        Some(v2::RequestPermissionSubject::ToolCall(s)) => {
            let u = s.tool_call;
            let mut call = v1::ToolCallUpdate::new(u.tool_call_id);
            call.kind = u.kind.flatten();
            call.status = u
                .status
                .flatten()
                .map(|s| v1::ToolCallStatus::from(s.as_str()));
            call.locations = u.locations.flatten();
            call.raw_input = u.raw_input.flatten();
            call.name = u.name.flatten();
            call
        }
        Some(v2::RequestPermissionSubject::Command(c)) => {
            let input = serde_json::json!({ "command": c.command, "cwd": c.cwd });
            v1::ToolCallUpdate::new(c.tool_call_id.unwrap_or(fallback))
                .kind(v1::ToolKind::Execute)
                .raw_input(v1::RawJson::from(input))
        }
        _ => v1::ToolCallUpdate::new(fallback),
    }
    .title(r.title);
    let mut out = v1::RequestPermissionRequest::new(r.session_id, call, r.options);
    out.meta = r.meta;
    out
}

/// A v2 client's answer as a v1 client's.
pub(crate) fn permission_response_to_v1(
    r: v2::RequestPermissionResponse,
) -> v1::RequestPermissionResponse {
    let mut out = match r.outcome {
        v2::RequestPermissionOutcome::Selected(s) => {
            v1::RequestPermissionResponse::selected(s.option_id)
        }
        _ => v1::RequestPermissionResponse::cancelled(),
    };
    out.meta = r.meta;
    out
}

/// A v1 client's answer as a v2 client's.
pub(crate) fn permission_response_to_v2(
    r: v1::RequestPermissionResponse,
) -> v2::RequestPermissionResponse {
    let mut out = match r.outcome.selected_option() {
        Some(id) => v2::RequestPermissionResponse::selected(id.clone()),
        None => v2::RequestPermissionResponse::cancelled(),
    };
    out.meta = r.meta;
    out
}

/// A v1 agent's elicitation as a v2 agent's (the same modes).
pub(crate) fn elicitation_to_v2(r: v1::CreateElicitationRequest) -> v2::CreateElicitationRequest {
    let mut out = v2::CreateElicitationRequest::new(r.message, r.mode);
    out.meta = r.meta;
    out
}

/// A v2 agent's elicitation as a v1 agent's.
pub(crate) fn elicitation_to_v1(r: v2::CreateElicitationRequest) -> v1::CreateElicitationRequest {
    let mut out = v1::CreateElicitationRequest::new(r.message, r.mode);
    out.meta = r.meta;
    out
}

/// A v2 client's elicitation answer as a v1 client's.
pub(crate) fn elicitation_response_to_v1(
    r: v2::CreateElicitationResponse,
) -> v1::CreateElicitationResponse {
    let mut out = match r.action {
        v2::ElicitationAction::Accept(a) => {
            v1::CreateElicitationResponse::accept(a.content.map(|c| {
                c.into_iter()
                    .filter_map(|(k, v)| {
                        let v = match v {
                            v2::ElicitationContentValue::String(s) => {
                                v1::ElicitationContentValue::String(s)
                            }
                            v2::ElicitationContentValue::Integer(n) => {
                                v1::ElicitationContentValue::Integer(n)
                            }
                            v2::ElicitationContentValue::Number(n) => {
                                v1::ElicitationContentValue::Number(n)
                            }
                            v2::ElicitationContentValue::Boolean(b) => {
                                v1::ElicitationContentValue::Boolean(b)
                            }
                            v2::ElicitationContentValue::StringArray(a) => {
                                v1::ElicitationContentValue::StringArray(a)
                            }
                            _ => return None,
                        };
                        Some((k, v))
                    })
                    .collect::<OrderedMap<_>>()
            }))
        }
        v2::ElicitationAction::Decline(_) => v1::CreateElicitationResponse::decline(),
        v2::ElicitationAction::Cancel(_) => v1::CreateElicitationResponse::cancel(),
        v2::ElicitationAction::Other(raw) => {
            v1::CreateElicitationResponse::new(v1::ElicitationAction::Other(raw))
        }
        other => {
            v1::CreateElicitationResponse::new(v1::ElicitationAction::Other(raw_object(&other)))
        }
    };
    out.meta = r.meta;
    out
}

/// A v1 client's elicitation answer as a v2 client's.
pub(crate) fn elicitation_response_to_v2(
    r: v1::CreateElicitationResponse,
) -> v2::CreateElicitationResponse {
    let mut out = match r.action {
        v1::ElicitationAction::Accept(a) => {
            v2::CreateElicitationResponse::accept(a.content.map(|c| {
                c.into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            v1::ElicitationContentValue::String(s) => {
                                v2::ElicitationContentValue::String(s)
                            }
                            v1::ElicitationContentValue::Integer(n) => {
                                v2::ElicitationContentValue::Integer(n)
                            }
                            v1::ElicitationContentValue::Number(n) => {
                                v2::ElicitationContentValue::Number(n)
                            }
                            v1::ElicitationContentValue::Boolean(b) => {
                                v2::ElicitationContentValue::Boolean(b)
                            }
                            v1::ElicitationContentValue::StringArray(a) => {
                                v2::ElicitationContentValue::StringArray(a)
                            }
                            other => v2::ElicitationContentValue::Other(
                                v1::RawJson::encode(&other)
                                    .unwrap_or_else(|_| v1::RawJson::string("")),
                            ),
                        };
                        (k, v)
                    })
                    .collect::<OrderedMap<_>>()
            }))
        }
        v1::ElicitationAction::Decline(_) => v2::CreateElicitationResponse::decline(),
        v1::ElicitationAction::Cancel(_) => v2::CreateElicitationResponse::cancel(),
        v1::ElicitationAction::Other(raw) => {
            v2::CreateElicitationResponse::new(v2::ElicitationAction::Other(raw))
        }
        other => {
            v2::CreateElicitationResponse::new(v2::ElicitationAction::Other(raw_object(&other)))
        }
    };
    out.meta = r.meta;
    out
}
