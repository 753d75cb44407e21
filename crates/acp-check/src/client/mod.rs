//! `acp check client`: judging a client through one prompt turn.
//!
//! The checker is the agent. It writes a script `agent` into a temporary
//! directory, substitutes its path for `{agent}` in the client's command
//! line, and starts the client there (in a `workspace` subdirectory). The
//! client starts the script, which runs the [relay]: the relay connects to
//! the judge's Unix socket and passes bytes both ways, so the agent's whole
//! life — answering `initialize` and `session/new`, and in the **first
//! prompt turn** calling every client method — runs here, over the same raw
//! [`Wire`](crate::wire::Wire) and strict judgement as `acp check agent`.
//!
//! `{agent}` as a whole word of the command line becomes the script's path;
//! inside a longer word (`--agent={agent}`, a shell string) it becomes the
//! path shell-quoted. Either way it is one command with no arguments, so a
//! client that takes the agent as a program, as a command string, or as a
//! shell line can run it.
//!
//! Everything happens in the first prompt turn: a headless client
//! (`acp exec --agent {agent} hello`) needs nothing more, an interactive
//! one needs one prompt typed. The turn ends with a permission request left
//! pending and a SIGINT sent to the client's process group (as a terminal's
//! Ctrl-C would; `--no-interrupt` leaves the cancel to a person), which
//! should make the client send `session/cancel` and answer the pending
//! request `cancelled`. The checks are in [`CHECKS`].
//!
//! # Layout
//! - `options.rs`: [`ClientOptions`], and the client's command line with
//!   `{agent}` put in ([`substitute`]).
//! - `life.rs`: the client's life, run once: start it, accept the relay,
//!   serve `initialize` and `session/new`, run the turn, end.
//! - `turn.rs`: the prompt turn, every client method in order; its larger
//!   parts in `terminal.rs` and `elicitation.rs`. A new check of a client
//!   method goes into the part of the turn that calls it, which records its
//!   outcome, and a line of the table in `checks.rs`.
//! - `judge.rs`: what the parts of the turn share: judging an answer, asking
//!   for permission, fresh file names.
//! - `checks.rs`: the table [`CHECKS`] (each reads what the turn recorded),
//!   and the wire checks judged from the log at the end of the life.
//! - `cx.rs`: [`ClientCx`], the context: the client process (`child.rs`),
//!   the wire to it, what it sent, the outcomes recorded.
//! - `relay.rs`: the checking agent's process, a byte relay to the judge.
//! - [`v2`]: `acp check client --protocol 2`, its own serving and table
//!   (using `life`'s start and end, and `cx`).
//!
//! Arrows point down: `run` (here) → `life` → `turn` → `terminal`,
//! `elicitation` → `judge` → `cx` → `child`, `options`; `checks` → `cx`.

mod checks;
mod child;
mod cx;
mod elicitation;
mod judge;
mod life;
mod options;
pub mod relay;
mod terminal;
mod turn;
pub mod v2;

pub use checks::CHECKS;
pub use cx::{ClientCx, Session};
pub use options::{ClientOptions, CommandLineError, PLACEHOLDER, shell_quote, substitute};

use crate::report::{CheckResult, Report};

/// Runs `acp check client` and returns its report.
pub async fn run(opts: ClientOptions) -> std::io::Result<Report> {
    run_with(opts, &mut |_| {}).await
}

/// [`run`], handing each result to `decided` as soon as it is decided
/// (the client's life runs first, then the results come one by one).
pub async fn run_with(
    opts: ClientOptions,
    decided: &mut (dyn FnMut(&CheckResult) + Send),
) -> std::io::Result<Report> {
    let command = opts.command.join(" ");
    let filters = opts.filters.clone();
    let mut cx = ClientCx::new(opts)?;
    // The life runs before the checks (it is one turn, driven by the client).
    life::live(&mut cx).await;
    let log = cx.log.clone();
    let results = crate::catalog::run_all(CHECKS, &mut cx, &log, &filters, decided).await;
    Ok(Report {
        side: "client".into(),
        command,
        results,
    })
}
