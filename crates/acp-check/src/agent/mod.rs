//! `acp check agent`: judging an agent through a full life.
//!
//! The checker is the client. It starts the agent, initializes, opens a
//! session, runs the turns and the cancellation, tries the session methods
//! the agent advertises, and probes it with raw JSON-RPC in a process of
//! its own; every step runs once, the first time a check needs it
//! ([`AgentCx`]). The checks are in [`CHECKS`].
//!
//! # Layout
//! - `cx.rs`: [`AgentCx`], the agent's life: starting processes,
//!   initialize, sessions, the turns, the cancelled turn, the probe process.
//! - `run.rs`: what v1 and v2 share: [`AgentOptions`], [`StepError`], the
//!   workspace the agent's processes start in, and the run of a table of
//!   checks (`run_checks`, over either context).
//! - `checks/`: the table [`CHECKS`] and one file per area (`initialize`,
//!   `session`, `prompt`, `tools`, `lifecycle`, `rpc`, `wire`); a new check
//!   goes into the file of its area and a line of the table.
//! - `rules.rs`: the rules of a turn, judged over the recorded lines.
//! - `acting.rs`: the acting client, whose fs and terminal answers
//!   `acp-host` carries out in the workspace.
//! - [`v2`]: `acp check agent --protocol 2`, its own context and checks
//!   (beside these, sharing only the crate's modules and `run.rs`).
//!
//! Arrows point down: `run_with` (here) → `run`, `checks` → `cx` and `rules`
//! → `acting`, `run` and the crate's `wire`, `process`, `strict`, `report`.

mod acting;
mod checks;
mod cx;
mod rules;
mod run;
pub mod v2;

pub use acting::Acting;
pub use checks::CHECKS;
pub use cx::{AgentCx, Init, Session, Turn};
pub use run::{AgentOptions, DEFAULT_CANCEL_PROMPT, DEFAULT_PROMPT, StepError};

use crate::report::{CheckResult, Report};

/// Runs `acp check agent` and returns its report.
pub async fn run(opts: AgentOptions) -> std::io::Result<Report> {
    run_with(opts, &mut |_| {}).await
}

/// [`run`], handing each result to `decided` as soon as it is decided.
pub async fn run_with(
    opts: AgentOptions,
    decided: &mut (dyn FnMut(&CheckResult) + Send),
) -> std::io::Result<Report> {
    run::run_checks::<AgentCx>(opts, CHECKS, decided).await
}
