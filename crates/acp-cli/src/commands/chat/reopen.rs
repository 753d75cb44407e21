//! When the server of a remote agent no longer has the connection (it
//! restarted, or kept it no longer): the chat says so and, when the agent
//! can load (or resume) sessions, asks whether to open the session again on
//! a new connection. On yes the chat goes on in the same session; the turn
//! (or the request between turns) that was running is lost.

use super::{Chat, Next};
use crate::exit::Failure;
use crate::session::open::How;
use crate::tty::Tty;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

impl Chat<'_> {
    /// The chat after `failure` ended a turn or a request: goes on in the
    /// session opened again, or ends with `failure` (not a connection the
    /// server lost, no, no terminal, or the agent can neither load nor
    /// resume).
    pub(super) async fn offer_reopen(&mut self, failure: Failure) -> Result<Next, Failure> {
        let caps = &self.opened.caps;
        let verb = if caps.load_session {
            "Load"
        } else if caps.session_capabilities.resume.is_some() {
            "Resume"
        } else {
            return Err(failure);
        };
        if !self.session.link_lost().is_some_and(|lost| lost.gone) {
            return Err(failure);
        }
        let id = self.opened.session_id.clone();
        self.error(&failure.message);
        let question = format!("{verb} session {id} again, on a new connection? [y/N] ");
        if !self.ask_yes(question).await {
            return Err(failure);
        }
        let capabilities = self.capabilities.clone();
        let opened = self.session.reopen(self.setup, capabilities, &id).await?;
        self.opened = opened;
        self.adopt_state();
        self.client().with_view(|v| v.end_turn());
        let how = match self.opened.how {
            How::Loaded => "loaded",
            _ => "resumed",
        };
        self.transcript(|t| {
            t.note(&format!(
                "[session] {id} {how} on a new connection; what was running is lost"
            ))
        });
        Ok(Next::Continue)
    }

    /// Asks a yes-or-no question on the terminal: false for no, at end of
    /// input, without a terminal, or on Ctrl-C.
    async fn ask_yes(&mut self, question: String) -> bool {
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let mut asking = tokio::task::spawn_blocking(move || {
            Tty::open(flag).and_then(|mut tty| tty.ask(&question))
        });
        let answer = tokio::select! {
            answer = &mut asking => answer.ok().flatten(),
            _ = self.session.interrupts.recv() => {
                abort.store(true, Ordering::Relaxed);
                let _ = asking.await;
                println!();
                None
            }
        };
        answer.is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes" | "Yes"))
    }
}
