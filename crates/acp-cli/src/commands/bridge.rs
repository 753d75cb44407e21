//! `acp bridge -- AGENT…`: the v1 ↔ v2 bridge of crate `acp`
//! ([`acp::bridge::Bridge`]) on standard input and output, in front of a
//! stdio agent.
//!
//! An editor that speaks protocol v2 can so use a v1 agent, and an editor
//! that speaks v1 a v2-only agent: the bridge answers the editor in the
//! version it asks for and speaks to the agent in the version the agent
//! answers, translating when they differ and passing bytes on unread when
//! they do not. The mapping, and what it loses, is documented in
//! [`acp::bridge`].
//!
//! The agent runs in a process group of its own; its standard error is
//! copied to ours line by line. The bridge ends when either side goes
//! away (or on `SIGINT`, `SIGTERM` or `SIGHUP`), and then stops the agent.

use crate::cli::BridgeArgs;
use crate::exit::{self, Failure};
use acp::AgentCommand;
use acp::bridge::Bridge;
use tokio::signal::unix::{SignalKind, signal};

/// Runs `acp bridge` until one side goes away.
pub async fn run(args: BridgeArgs) -> Result<u8, Failure> {
    let Some((program, program_args)) = args.command.split_first() else {
        return Err(Failure::usage(
            "name the agent to bridge to: acp bridge -- AGENT [ARGS…]",
        ));
    };
    let agent = AgentCommand::new(program)
        .args(program_args)
        .on_stderr(|line| eprintln!("{line}"));
    let watch =
        |kind| signal(kind).map_err(|e| Failure::agent(format!("cannot watch for signals: {e}")));
    let mut interrupt = watch(SignalKind::interrupt())?;
    let mut terminate = watch(SignalKind::terminate())?;
    let mut hangup = watch(SignalKind::hangup())?;
    let served = tokio::select! {
        served = Bridge::new(agent).serve_stdio() => served,
        // Dropping the bridge stops the agent's process group.
        _ = interrupt.recv() => return Ok(exit::CANCELLED),
        _ = terminate.recv() => return Ok(128 + 15),
        _ = hangup.recv() => return Ok(exit::HANGUP),
    };
    match served {
        Ok(route) => {
            if args.verbose {
                let how = if route.translated() {
                    "translated"
                } else {
                    "piped"
                };
                eprintln!(
                    "acp bridge: client v{}, agent v{}, {how}",
                    route.client, route.agent
                );
            }
            Ok(exit::OK)
        }
        Err(acp::ConnectionError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(Failure::new(exit::AGENT_NOT_FOUND, e.to_string()))
        }
        Err(e) => Err(Failure::agent(format!("acp bridge: {e}"))),
    }
}
