//! The tests that measure this process's memory (resident set size, peak
//! and current), in a binary of their own: in the other one (`tests/it/`)
//! every other test's allocations would show in what they measure. Here they
//! take [`ONE_AT_A_TIME`], so none sees another's.
//!
//! - `bounded`: past the cap on queued output the engine stops reading, and
//!   a peer that reads nothing is closed with why.
//! - `memory`: a long run of calls leaves nothing behind.
#![cfg(target_os = "linux")]

#[path = "../it/support/mod.rs"]
mod support;

mod bounded;
mod memory;

/// Held by each test of this binary for its whole run: they measure this
/// process's memory.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
