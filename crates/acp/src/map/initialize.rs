//! `initialize` between the versions.

use acp_schema::v2;
use acp_schema::{
    AuthCapabilities, BooleanConfigOptionCapabilities, ClientCapabilities,
    ClientSessionCapabilities, CompactionCapabilities, InitializeRequest, NoticeCapabilities,
    ProtocolVersion, SessionConfigOptionsCapabilities,
};

/// A v2 client's `initialize` as a v1 client's: `info` becomes `clientInfo`;
/// the client has no file system and no terminal; it handles boolean config
/// options, notices and compaction (all baseline in v2); its elicitation
/// modes and terminal auth carry over (`auth.terminal._meta` has no v1 place
/// and is dropped). Asks for version 1.
pub(crate) fn initialize_request_to_v1(request: v2::InitializeRequest) -> InitializeRequest {
    let caps = request.capabilities;
    let mut v1_caps = ClientCapabilities::new()
        .auth(
            AuthCapabilities::new()
                .terminal(caps.auth.as_ref().is_some_and(|a| a.terminal.is_some())),
        )
        .session(
            ClientSessionCapabilities::new()
                .config_options(
                    SessionConfigOptionsCapabilities::new()
                        .boolean(BooleanConfigOptionCapabilities::new()),
                )
                .notices(NoticeCapabilities::new())
                .compaction(CompactionCapabilities::new()),
        );
    v1_caps.elicitation = caps.elicitation;
    v1_caps.meta = caps.meta;
    let mut v1 = InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(v1_caps)
        .client_info(request.info);
    v1.meta = request.meta;
    v1.extra = request.extra;
    v1
}

/// A v2 client's `initialize` params for an agent whose version is not known
/// yet (the bridge's, and a client's with a v1 fallback): v2's params, then
/// v1's `clientInfo` and `clientCapabilities` as [`initialize_request_to_v1`]
/// makes them (or `v1_capabilities`). A v1 agent reads the v2 members as
/// unknown ones, and so still learns who the client is and what it handles
/// (v1's defaults would say nothing); a v2 agent ignores the two v1 members,
/// as v2 asks of unknown members. Members the client sent under those names
/// are kept instead.
pub(crate) fn initialize_params_for_either(
    request: &v2::InitializeRequest,
    v1_capabilities: Option<&ClientCapabilities>,
) -> Box<serde_json::value::RawValue> {
    let mut v1 = initialize_request_to_v1(request.clone());
    if let Some(capabilities) = v1_capabilities {
        v1.client_capabilities = capabilities.clone();
    }
    let mut members = Vec::new();
    if request.extra.get("clientInfo").is_none() {
        if let Some(info) = &v1.client_info {
            members.push(("clientInfo", serde_json::to_string(info)));
        }
    }
    if request.extra.get("clientCapabilities").is_none() {
        members.push((
            "clientCapabilities",
            serde_json::to_string(&v1.client_capabilities),
        ));
    }
    // v2's object, with the members appended before its closing brace (in
    // this order whatever serde_json's map order).
    let mut out = serde_json::to_string(request).unwrap_or_else(|_| "{}".into());
    out.pop();
    for (key, value) in members {
        let Ok(value) = value else { continue };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&format!("\"{key}\":{value}"));
    }
    out.push('}');
    // (Valid JSON made of valid pieces; the fallbacks are never taken.)
    serde_json::value::RawValue::from_string(out)
        .or_else(|_| serde_json::value::to_raw_value(request))
        .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned())
}

/// The version `initialize` params ask for, if they say.
pub(crate) fn asked_version(
    params: Option<&serde_json::value::RawValue>,
) -> Option<acp_schema::ProtocolVersion> {
    #[derive(serde::Deserialize)]
    struct Asked {
        #[serde(rename = "protocolVersion")]
        protocol_version: acp_schema::ProtocolVersion,
    }
    acp_schema::decode_params::<Asked>(params)
        .ok()
        .map(|a| a.protocol_version)
}
