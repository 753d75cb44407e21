//! MCP over ACP (`unstable-mcp-over-acp`): an MCP server provided by the
//! client and reached over the ACP connection itself. The agent sends each MCP
//! request as an `mcp/message` request; the client forwards the server's
//! notifications for it as `mcp/message` notifications.

use crate::util::wire::{Entries, Flat, nested_at};
use crate::util::{id_type, setters, wire_struct};
use crate::{Meta, RawJson};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

id_type!(
    /// Identifies an MCP server reached over ACP; opaque, chosen by the side
    /// that provides the server.
    McpServerAcpId
);

id_type!(
    /// Identifies an MCP request in flight against a server on this connection;
    /// chosen by the caller and echoed unchanged.
    McpRequestId
);

wire_struct! {
    /// An MCP server the client provides over the ACP connection (needs
    /// `mcpCapabilities.acp`). Tagged `"type": "acp"` in the server list.
    pub struct McpServerAcp {
        /// A name that identifies the server to people.
        pub name: String = "name" (Req),
        /// The server's id, used in `mcp/message`.
        pub server_id: McpServerAcpId = "serverId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpServerAcp {
    /// Server `name` reached as `server_id`.
    pub fn new(name: impl Into<String>, server_id: impl Into<McpServerAcpId>) -> Self {
        McpServerAcp {
            name: name.into(),
            server_id: server_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(McpServerAcp { opt { meta: Meta } });

wire_struct! {
    /// The `mcp/message` request: one MCP request for a server the client
    /// provides.
    pub struct MessageMcpRequest {
        /// The server.
        pub server_id: McpServerAcpId = "serverId" (Req),
        /// The MCP request's id.
        pub request_id: McpRequestId = "requestId" (Req),
        /// The MCP method (`tools/call`).
        pub method: String = "method" (Req),
        /// The MCP params, kept as sent.
        pub params: Option<RawJson> = "params" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl MessageMcpRequest {
    /// MCP request `request_id` calling `method` on `server_id`.
    pub fn new(
        server_id: impl Into<McpServerAcpId>,
        request_id: impl Into<McpRequestId>,
        method: impl Into<String>,
    ) -> Self {
        MessageMcpRequest {
            server_id: server_id.into(),
            request_id: request_id.into(),
            method: method.into(),
            params: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(MessageMcpRequest { opt { params: RawJson, meta: Meta } });

wire_struct! {
    /// The `mcp/message` notification: an MCP notification from a server,
    /// for an MCP request in flight (progress, a subscription's updates).
    pub struct MessageMcpNotification {
        /// The server.
        pub server_id: McpServerAcpId = "serverId" (Req),
        /// The MCP request it belongs to.
        pub request_id: McpRequestId = "requestId" (Req),
        /// The MCP notification method.
        pub method: String = "method" (Req),
        /// The MCP params, kept as sent.
        pub params: Option<RawJson> = "params" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl MessageMcpNotification {
    /// MCP notification `method` from `server_id` for `request_id`.
    pub fn new(
        server_id: impl Into<McpServerAcpId>,
        request_id: impl Into<McpRequestId>,
        method: impl Into<String>,
    ) -> Self {
        MessageMcpNotification {
            server_id: server_id.into(),
            request_id: request_id.into(),
            method: method.into(),
            params: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(MessageMcpNotification { opt { params: RawJson, meta: Meta } });

wire_struct! {
    /// The result of `mcp/message`: the inner MCP outcome. (An error of the ACP
    /// request itself is for failures of the binding, not of the MCP call.)
    pub struct MessageMcpResponse {
        /// The MCP result or error (`result` or `error` on the wire).
        pub outcome: McpOutcome = "" (Flatten),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl MessageMcpResponse {
    /// A response carrying `outcome`.
    pub fn new(outcome: McpOutcome) -> Self {
        MessageMcpResponse {
            outcome,
            meta: None,
            extra: Default::default(),
        }
    }

    /// The MCP call succeeded with `result` (any JSON, `null` included).
    pub fn result(result: RawJson) -> Self {
        Self::new(McpOutcome::Result(result))
    }

    /// The MCP call failed with `error`.
    pub fn error(error: McpError) -> Self {
        Self::new(McpOutcome::Error(error))
    }
}

setters!(MessageMcpResponse { opt { meta: Meta } });

/// The outcome of an MCP request: its `result` or its `error`. When both are
/// present, `error` wins and `result` stays with the response's unknown members.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpOutcome {
    /// The MCP result, kept as sent (`null` included).
    Result(RawJson),
    /// The MCP error.
    Error(McpError),
}

impl Flat for McpOutcome {
    fn take<E: serde::de::Error>(rest: &mut Entries) -> Result<Self, E> {
        if let Some(i) = rest.iter().position(|(k, _)| k == "error") {
            let (_, raw) = rest.remove(i);
            return nested_at("error", raw.get()).map(McpOutcome::Error);
        }
        if let Some(i) = rest.iter().position(|(k, _)| k == "result") {
            let (_, raw) = rest.remove(i);
            return Ok(McpOutcome::Result(raw));
        }
        Err(E::custom(
            "an `mcp/message` result needs `result` or `error`",
        ))
    }

    fn write_flat<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match self {
            McpOutcome::Result(result) => map.serialize_entry("result", result),
            McpOutcome::Error(error) => map.serialize_entry("error", error),
        }
    }
}

impl Serialize for McpOutcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        self.write_flat(&mut map)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for McpOutcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut rest = crate::RawObject::deserialize(d)?.into_vec();
        Self::take(&mut rest)
    }
}

wire_struct! {
    /// An MCP error: the inner MCP call failed (not the ACP request).
    pub struct McpError {
        /// The MCP error code.
        pub code: i32 = "code" (Req),
        /// What went wrong.
        pub message: String = "message" (Req),
        /// More detail, kept as sent (an explicit `null` stays `null`).
        pub data: Option<RawJson> = "data" (Raw),
    }
}

impl McpError {
    /// MCP error `code` saying `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        McpError {
            code,
            message: message.into(),
            data: None,
            extra: Default::default(),
        }
    }
}

setters!(McpError { opt { data: RawJson } });
