//! The two error `data` shapes v2 defines, and the errors that carry them. The
//! error object itself is v1's [`Error`] (its `data` stays raw JSON).

use crate::util::{setters, wire_struct};
use crate::{Error, ErrorCode, Meta, ProtocolVersion, RawJson, SessionId};

wire_struct! {
    /// The `data` of -32022 (Unsupported protocol version): what the client
    /// asked for and what the agent speaks.
    pub struct UnsupportedProtocolVersionErrorData {
        /// The version the client asked for.
        pub requested: ProtocolVersion = "requested" (Req),
        /// The versions the agent speaks.
        pub supported: Vec<ProtocolVersion> = "supported" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl UnsupportedProtocolVersionErrorData {
    /// Asked `requested`, the agent speaks `supported`.
    pub fn new(requested: ProtocolVersion, supported: Vec<ProtocolVersion>) -> Self {
        UnsupportedProtocolVersionErrorData {
            requested,
            supported,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(UnsupportedProtocolVersionErrorData { opt { meta: Meta } });

wire_struct! {
    /// The `data` of -32002 (Resource not found) for a session that does not
    /// exist or is not active.
    pub struct SessionNotFoundErrorData {
        /// The session the request named.
        pub session_id: SessionId = "sessionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionNotFoundErrorData {
    /// The session `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        SessionNotFoundErrorData {
            session_id: session_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionNotFoundErrorData { opt { meta: Meta } });

/// -32022 "Unsupported protocol version": the agent speaks none of the versions
/// at or below `requested`; `supported` lists those it speaks.
pub fn unsupported_protocol_version(
    requested: ProtocolVersion,
    supported: Vec<ProtocolVersion>,
) -> Error {
    let data = UnsupportedProtocolVersionErrorData::new(requested, supported);
    let error = Error::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.default_message(),
    );
    match RawJson::encode(&data) {
        Ok(raw) => error.data_raw(raw),
        Err(_) => error,
    }
}

/// -32002 "Resource not found" for the unknown session `session_id`.
pub fn session_not_found(session_id: impl Into<SessionId>) -> Error {
    let data = SessionNotFoundErrorData::new(session_id);
    let error = Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        ErrorCode::RESOURCE_NOT_FOUND.default_message(),
    );
    match RawJson::encode(&data) {
        Ok(raw) => error.data_raw(raw),
        Err(_) => error,
    }
}
