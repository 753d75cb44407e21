//! The commands of `acp`, one module each: what a user runs.

pub mod agents;
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
