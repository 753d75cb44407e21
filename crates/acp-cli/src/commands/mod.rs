//! The commands of `acp`, one module each: what a user runs.
//!
//! The top layer: a command reads its arguments ([`crate::cli`]), picks
//! what it needs below ([`crate::session`] for `exec`, `chat` and `login`;
//! [`crate::config`], [`crate::view`], [`crate::recording`]) and returns an
//! exit code; no layer below uses a command, nor does a command use
//! another. A new command is a module here (a folder when it has parts),
//! its arguments in [`crate::cli`], and one line in [`crate::run`].

pub mod agents;
pub mod bridge;
pub mod chat;
pub mod check;
pub mod connect;
pub mod docs;
pub mod exec;
pub mod login;
pub mod mock;
pub mod record;
pub mod serve;
pub mod trace;
