//! A session with an agent given by URL, which runs as `acp connect URL`
//! ([`crate::config::remote`]): what that command says about its link to
//! the server is shown as it happens ([`show_link_note`]), a link lost for
//! good is explained ([`Session::link_lost`]), and a session whose
//! connection the server no longer has can be opened again on a new one
//! ([`Session::reopen`]).
//!
//! The reconnecting itself is `acp connect`'s (the `acp` crate's client
//! resumes the connection; each message arrives once, in order): a turn in
//! flight goes on as if nothing happened, and this session only shows
//! `[reconnecting…]` and `[reconnected]`.

use crate::cli::SessionArgs;
use crate::config::remote::LinkNote;
use crate::exit::{self, Failure};
use crate::host::CliClient;
use crate::session::open::{OpenOptions, Opened};
use crate::session::{Session, Setup};
use acp::remote::LinkEvent;
use acp::schema::*;

/// Shows `line` of `acp connect`'s standard error if it is a note about
/// its link; false when it is not one.
pub(super) fn show_link_note(client: &CliClient, line: &str) -> bool {
    let event = match LinkNote::parse(line) {
        Some(LinkNote::Reconnecting {
            attempt,
            delay,
            why,
        }) => LinkEvent::Reconnecting {
            attempt,
            delay,
            why,
        },
        Some(LinkNote::Resumed { attempts, down_for }) => LinkEvent::Resumed { attempts, down_for },
        // Said by the failure that ends the run.
        Some(LinkNote::Lost { .. }) => return true,
        None => return false,
    };
    client.with_view(|v| v.link(&event));
    true
}

/// How the link to a remote agent was lost for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkLost {
    /// The server no longer has the connection (it restarted, kept it past
    /// its keep time, or closed it): the agent's session may still be
    /// opened again on a new connection.
    pub gone: bool,
    /// Why, in words.
    pub why: String,
}

impl Session {
    /// How the link to the remote agent was lost for good, when `acp
    /// connect` said so before it exited.
    pub(crate) fn link_lost(&self) -> Option<LinkLost> {
        if !self.remote() {
            return None;
        }
        self.process
            .stderr_tail()
            .iter()
            .filter_map(|line| match LinkNote::parse(line) {
                Some(LinkNote::Lost { gone, why }) => Some(LinkLost { gone, why }),
                _ => None,
            })
            .next_back()
    }

    /// Why `method` failed when the agent is given by URL: the link was
    /// lost for good, or `acp connect` said why it stopped (it cannot
    /// connect, the server closed the connection, …); `None` when it said
    /// nothing.
    pub(super) fn remote_failure(&self, method: &str) -> Option<Failure> {
        if let Some(lost) = self.link_lost() {
            return Some(Failure::new(
                exit::AGENT_CRASHED,
                format!(
                    "the connection to {} was lost during {method}: {}",
                    self.launch.agent.label, lost.why
                ),
            ));
        }
        if !self.remote() {
            return None;
        }
        let said = self
            .process
            .stderr_tail()
            .into_iter()
            .rev()
            .find_map(|line| line.strip_prefix("acp: ").map(str::to_owned))?;
        Some(Failure::new(
            exit::AGENT_CRASHED,
            format!("{said} (during {method})"),
        ))
    }

    /// Opens session `id` again on a new connection, after the server lost
    /// the old one: starts `acp connect` again, initializes, and loads the
    /// session (its history replayed unseen: it is on screen already), or
    /// resumes it when the agent cannot load.
    pub(crate) async fn reopen(
        &mut self,
        setup: &Setup,
        capabilities: ClientCapabilities,
        id: &SessionId,
    ) -> Result<Opened, Failure> {
        self.restart()?;
        let args = SessionArgs {
            session: Some(id.to_string()),
            ..SessionArgs::default()
        };
        let options = OpenOptions {
            show_replay: false,
            prefer_load: true,
        };
        self.timeout = setup.timeout;
        let opened = self.open_once(&args, setup, capabilities, options).await?;
        self.session_id = Some(opened.session_id.clone());
        Ok(opened)
    }
}
