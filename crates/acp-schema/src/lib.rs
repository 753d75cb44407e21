//! Every wire type of the Agent Client Protocol (ACP) v1, exact on the wire.
//!
//! ACP is JSON-RPC 2.0 between a code editor (the *client*) and an AI coding
//! agent (the *agent*). This crate holds the serde types of every stable method of
//! the protocol (schema v0.10.7 through the latest stable additions) and the
//! tables that name each method once. It does no I/O and has no runtime: framing,
//! dispatch and connections live in the `acp` crate.
//!
//! The types are checked against the official JSON Schemas in this crate's tests.
//!
//! With feature `v2`, [`v2`] holds the draft protocol version 2 beside v1 (its
//! own types where the wire differs, v1's where it does not); feature
//! `v2-unstable` adds v2's unstable surface.
//!
//! # Conventions
//! - Field names are camelCase on the wire; optional fields are omitted when absent.
//! - `_meta` is kept as an opaque JSON object ([`Meta`]) and round-tripped untouched.
//! - Decoding is tolerant where the schema says so: a malformed optional field falls
//!   back to its default, invalid list items are dropped, unknown fields are ignored,
//!   and an unknown union tag or enum value decodes into an `Other` variant that
//!   re-encodes unchanged.
//! - Structs are `#[non_exhaustive]`: build them with `new(required…)` and chainable
//!   setters named after their fields.
//!
//! # Example
//! ```
//! use acp_schema::{ContentBlock, PromptRequest, Request, SessionId};
//!
//! let prompt = PromptRequest::new(SessionId::new("sess-1"), vec![ContentBlock::from("Hello")]);
//! let json = serde_json::to_string(&prompt).unwrap();
//! assert_eq!(
//!     json,
//!     r#"{"sessionId":"sess-1","prompt":[{"type":"text","text":"Hello"}]}"#
//! );
//! assert_eq!(PromptRequest::METHOD, "session/prompt");
//! let back: PromptRequest = acp_schema::decode(&json).unwrap();
//! assert_eq!(back, prompt);
//! ```
#![deny(missing_docs)]

mod tag;
mod util;

pub mod auth;
pub mod config;
pub mod content;
pub mod elicitation;
pub mod ext;
pub mod fs;
pub mod initialize;
pub mod mcp;
pub mod messages;
pub mod method;
pub mod permission;
pub mod plan;
pub mod prompt;
pub mod raw;
pub mod rpc;
pub mod session;
pub mod terminal;
pub mod tool_call;
pub mod unstable;
pub mod update;
#[cfg(feature = "v2")]
pub mod v2;

pub use auth::*;
pub use config::*;
pub use content::*;
pub use elicitation::*;
pub use ext::*;
pub use fs::*;
pub use initialize::*;
pub use mcp::*;
pub use messages::*;
pub use method::*;
pub use permission::*;
pub use plan::*;
pub use prompt::*;
pub use raw::{Meta, RawJson, RawObject};
pub use rpc::*;
pub use session::*;
pub use tag::TagOnly;
pub use terminal::*;
pub use tool_call::*;
#[allow(unused_imports)] // empty without an unstable feature
pub use unstable::*;
pub use update::*;
pub use util::{DecodeError, OrderedMap, decode, decode_value};
