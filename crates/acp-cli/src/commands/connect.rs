//! `acp connect URL`: a local stdio agent that forwards every line to a
//! remote ACP endpoint and back (agents given by URL run as this command:
//! [`crate::config::remote`]).
//!
//! An editor that starts agents as subprocesses (Zed's `agent_servers`,
//! JetBrains) runs `acp connect wss://host:8765/acp` as its agent; `acp exec`
//! and `acp chat` do the same for `--agent ws://…`, so a remote agent is
//! started, watched and stopped like any other. When the connection fails,
//! the reason goes to standard error and the program exits with status 1,
//! which the editor shows as the agent's failure.
//!
//! A connection that breaks is resumed (with backoff, for `--reconnect-for`
//! or the server's keep time; not with `--no-reconnect`): the editor sees one
//! unbroken stream, each message once and in order. What happens to the
//! link is said on standard error as [`LinkNote`] lines, which the `acp` that
//! runs this command reads back.

use crate::cli::RemoteArgs;
use crate::config::remote::{LinkNote, remote_options};
use crate::exit::{self, Failure};
use acp::Transport;
use acp::remote::LinkLost;
use tokio::io::{AsyncWriteExt, copy};

/// `acp connect URL`: forwards standard input to the remote agent and its
/// messages to standard output until either side ends.
pub async fn run(url: &str, remote: &RemoteArgs) -> Result<u8, Failure> {
    let options = remote_options(remote)?.on_event(|event| {
        if let Some(note) = LinkNote::of(event) {
            eprintln!("{}", note.line());
        }
    });
    let transport = acp::remote::connect(url, options)
        .await
        .map_err(|e| Failure::agent(format!("cannot connect to {url}: {e}")))?;
    let (mut from_remote, mut to_remote) = transport.into_parts();
    let (mut stdin, mut stdout) = Transport::stdio().into_parts();
    let upstream = async {
        let copied = copy(&mut stdin, &mut to_remote).await;
        // The editor closed our input: end the remote connection too.
        let _ = to_remote.shutdown().await;
        copied
    };
    let downstream = async {
        let copied = copy(&mut from_remote, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    tokio::pin!(upstream, downstream);
    // The remote side ending ends the run; the editor ending our input
    // lets what the remote still sends through, until it closes too.
    let result = tokio::select! {
        result = &mut downstream => result,
        _ = &mut upstream => downstream.await,
    };
    match result {
        Ok(_) => Ok(exit::OK),
        Err(e) => match LinkLost::of(&e) {
            // The note is the message: said as it is, for the acp that
            // reads it back.
            Some(lost) => {
                eprintln!("{}", LinkNote::lost(lost).line());
                Ok(exit::AGENT_ERROR)
            }
            None => Err(Failure::agent(format!(
                "the connection to {url} ended: {e}"
            ))),
        },
    }
}
