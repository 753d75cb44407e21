//! `acp-check`: a conformance suite for Agent Client Protocol agents and
//! clients, the library behind `acp check agent` and `acp check client`.
//!
//! # Design
//! - **Checks are data, each a requirement.** A [`Check`] has a name
//!   (`area.what`, the stable requirement id), an area, a [`Tier`]
//!   (MANDATORY, CAPABILITY, ADVISORY, INFORMATIONAL: the official kit
//!   `acp-tck`'s model), the kit's id of the same requirement where it has
//!   one (`ACP-INIT-001`), the protocol docs section it comes from, the
//!   feature it needs (for `--expect`), and a run function. The list is
//!   [`agent::CHECKS`]; the crate README prints it.
//! - **The checker speaks raw JSON-RPC**, not through the `acp` runtime: it
//!   writes exact lines to the peer and reads every line back ([`wire`]), so
//!   it can send what a runtime would refuse to (garbage, string and large
//!   ids, bad params) and see what a runtime would smooth over (an update
//!   after a response, a number where a string id was sent).
//! - **Every line is judged strictly** ([`strict`]) against a table of the
//!   schema's types, independent of the tolerant decoding used in normal
//!   operation: a wrong type, a missing required field or a value outside an
//!   enum is a failure, an unknown field is a note.
//! - **One life, shared lazily.** The checks of a run share a context that
//!   starts the peer, initializes, opens a session and runs the turns the
//!   first time a check needs them, so `--only` of any check works and each
//!   step runs once. Judgements of a turn's rules read the recorded lines.
//! - **The acting client is real**: fs and terminal calls of an agent under
//!   test are answered by `acp-host` in a temporary workspace.
//! - **The report** ([`report`]) is one result per check (PASS, FAIL with
//!   the reason and the offending message shortened, SKIP with the reason,
//!   NOT TESTED when the peer had stopped answering), grouped by tier, with
//!   the counts per tier and the verdict: CONFORMANT unless a MANDATORY or
//!   CAPABILITY requirement failed. It is rendered as text, JSON (with the
//!   wire lines of each failure) or JUnit XML, and filtered by
//!   `--only`/`--skip`, `--expect` (skips of claimed features fail) and
//!   `--baseline` (known failures do not fail the run). Each result is
//!   handed out as soon as it is decided ([`agent::run_with`]).
//! - **Fail fast.** A response whose id matches no request ends the wait
//!   for the one expected at once (a failure naming the id); a peer that
//!   leaves a request unanswered for the whole `--timeout` (60 s by
//!   default) is marked as stopped answering, and every later check that
//!   needs it is NOT TESTED at once ([`wire::Wire::stall_after`]).
//! - **For `acp check client`** the checker is the agent: `acp`
//!   substitutes `{agent}` in the client's command line with a script that
//!   runs a relay ([`client::relay`]) back to the judging process over a
//!   Unix socket, so the scripted agent runs here over the same [`wire`],
//!   exercises every client method in the first prompt turn and judges each
//!   answer. The list is [`client::CHECKS`].
//!
//! What it does not do: judge what an agent *says* (models differ), or
//! check the unstable parts of the protocol.
//!
//! # Layout
//! - [`agent`]: `acp check agent` (the checker is the client): the run's
//!   context in `agent/cx.rs`, the checks in `agent/checks/`, one file per
//!   area with the table in `agent/checks/mod.rs`. A new agent check is a
//!   function in its area's file and a line of that table.
//! - [`client`]: `acp check client` (the checker is the agent): the life in
//!   `client/life.rs`, the prompt turn in `client/turn.rs` (with
//!   `terminal.rs`, `elicitation.rs`), the table in `client/checks.rs`. A
//!   new client check is a step of the turn that records its outcome, and
//!   a line of that table.
//! - Protocol v2 (`--protocol 2`, a draft): [`agent::v2`] and
//!   [`client::v2`], each its own table of `v2.*` requirements beside the
//!   v1 one, judging lines with `acp_schema::v2`'s types; the agent side has
//!   its own context (`agent/v2/cx.rs`; the workspace the agent starts in
//!   and the run of a table are shared with v1, in `agent/run.rs`),
//!   the client side reuses the client's life (start, relay, end) and
//!   context.
//! - Below both: [`wire`] (raw JSON-RPC lines and the log), [`strict`] (the
//!   type table, `strict/v1.types`), [`process`] (a peer as a child
//!   process), [`report`] (results, tiers and the verdict; its `render.rs`
//!   writes text, JSON and JUnit) and [`catalog`] (checks as data, running
//!   them).
//!
//! Arrows point down, from `agent`/`client` to the shared modules, and
//! inside each from the table to the checks to the context; no module
//! reaches back up. The fixtures that prove the checks (the mutants) are in
//! the unpublished crate `acp-testkit`; the tests in `tests/it/`.
#![deny(missing_docs)]

pub mod agent;
pub mod catalog;
pub mod client;
pub mod process;
pub mod report;
pub mod strict;
pub mod wire;

pub use catalog::Check;
pub use report::{CheckResult, Filters, Outcome, Report, Requirement, Status, Tier};
