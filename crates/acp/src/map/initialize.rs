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
