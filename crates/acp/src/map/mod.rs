//! Translations between v1 and v2 messages (feature `v2`): one file per
//! protocol area, used by the version negotiation and the bridge
//! ([`crate::bridge`], whose module docs hold the whole table). What each
//! maps, and what it loses, is written at the top of its file.

pub(crate) mod content;
mod initialize;
pub(crate) mod permission;
pub(crate) mod session;
pub(crate) mod tool_call;
pub(crate) mod update;

pub(crate) use initialize::*;
