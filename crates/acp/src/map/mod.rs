//! Translations between v1 and v2 messages (feature `v2`): one file per
//! protocol area, used by the version negotiation and the bridge
//! ([`crate::bridge`], whose module docs hold the whole table). What each
//! maps, and what it loses, is written at the top of its file.
//!
//! # Public
//!
//! The stateless translations an agent needs that keeps v1's vocabulary
//! inside and speaks v2 to its client (one serving both versions, say) are
//! public, so that it writes v2 exactly as the bridge does:
//!
//! - content: [`block_to_v2`], [`block_to_v1`];
//! - tool calls: [`tool_call_to_v2`] and [`tool_call_update_to_v2`] (both
//!   become v2's `tool_call_update`, the upsert by id), and
//!   [`tool_call_content_to_v2`] (a diff becomes a structured file change with
//!   a Git patch);
//! - [`plan_to_v2`] (the plan [`PLAN_ID`]), [`command_to_v2`],
//!   [`config_option_to_v2`];
//! - sessions: [`new_session_to_v1`] and [`mcp_server_to_v1`] (what the
//!   client asks for), [`session_info_to_v2`] (what `session/list` reports),
//!   [`stop_reason_to_v2`] (how a turn ended);
//! - [`auth_method_to_v2`] (what `initialize` offers).
//!
//! They are plain functions over [`acp_schema`]'s v1 and v2 types. Each keeps
//! `_meta`; content blocks, tool calls and their content also keep the fields
//! v1 does not know (`extra`), while plans, commands and config options,
//! whose v2 shapes differ (a tag, renamed fields), are built from their known
//! fields only. What needs memory across messages (message ids of chunks, a
//! v1 agent's modes as a config option, the v2 → v1 direction of tool calls
//! and terminals) stays inside the bridge.

pub(crate) mod content;
mod initialize;
pub(crate) mod permission;
pub(crate) mod session;
pub(crate) mod tool_call;
pub(crate) mod update;

pub use content::{block_to_v1, block_to_v2};
pub(crate) use initialize::*;
pub use session::{
    auth_method_to_v2, config_option_to_v2, mcp_server_to_v1, new_session_to_v1,
    session_info_to_v2, stop_reason_to_v2,
};
pub use tool_call::{tool_call_content_to_v2, tool_call_to_v2, tool_call_update_to_v2};
pub use update::{PLAN_ID, command_to_v2, plan_to_v2};
