//! The schema's unstable surface: methods, capabilities and fields that the
//! official schema publishes in `schema.unstable.json` and that agents and
//! editors already use, each area behind its own cargo feature.
//!
//! | feature | adds |
//! | --- | --- |
//! | `unstable-session-model` | session models: `models` in the `session/new`, `session/load`, `session/resume` (and `session/fork`) results; `session/set_model` |
//! | `unstable-session-usage` | `usage` (token counts) in the `session/prompt` result |
//! | `unstable-session-fork` | `session/fork`; `sessionCapabilities.fork` |
//! | `unstable-session-title` | `session/set_title`; `sessionCapabilities.title` |
//! | `unstable-system-prompt` | `systemPrompt` on `session/new`, `session/load`, `session/resume` (and `session/fork`); `sessionCapabilities.systemPrompt` |
//! | `unstable-providers` | `providers/list`, `providers/set`, `providers/disable`; `agentCapabilities.providers` |
//! | `unstable-mcp-over-acp` | MCP servers reached over the ACP connection: the `acp` MCP server type, `mcp/message` (request and notification); `mcpCapabilities.acp` |
//! | `unstable-subagents` | child sessions: the `subagent_update`, `session_message` and `session_message_chunk` updates; `clientCapabilities.subagents` |
//!
//! With a feature off, its fields are not lost: like any member a type does not
//! know, they stay in the object's `extra` and are written back unchanged, and
//! its union variants decode as `Other`.

#[cfg(feature = "unstable-session-fork")]
mod fork;
#[cfg(feature = "unstable-session-fork")]
pub use fork::*;

#[cfg(feature = "unstable-mcp-over-acp")]
mod mcp_acp;
#[cfg(feature = "unstable-mcp-over-acp")]
pub use mcp_acp::*;

#[cfg(feature = "unstable-session-model")]
mod model;
#[cfg(feature = "unstable-session-model")]
pub use model::*;

#[cfg(feature = "unstable-providers")]
mod providers;
#[cfg(feature = "unstable-providers")]
pub use providers::*;

#[cfg(feature = "unstable-subagents")]
mod subagents;
#[cfg(feature = "unstable-subagents")]
pub use subagents::*;

#[cfg(feature = "unstable-system-prompt")]
mod system_prompt;
#[cfg(feature = "unstable-system-prompt")]
pub use system_prompt::*;

#[cfg(feature = "unstable-session-title")]
mod title;
#[cfg(feature = "unstable-session-title")]
pub use title::*;

#[cfg(feature = "unstable-session-usage")]
mod usage;
#[cfg(feature = "unstable-session-usage")]
pub use usage::*;
