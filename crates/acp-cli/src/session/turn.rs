//! One prompt turn, from `session/prompt` to its answer, for `acp exec` and
//! `acp chat` alike: Ctrl-C, `--timeout`, and a message over the size limit
//! all end it here.
//!
//! - The first Ctrl-C sends `session/cancel`, answers pending permission
//!   questions `cancelled` and waits [`CANCEL_GRACE`] for the turn to end; a
//!   second Ctrl-C, or the grace running out, kills the agent.
//! - `--timeout` does the same as a first Ctrl-C when the turn has run that
//!   long, and reports the turn as timed out however it then ends.
//! - A message over the size limit ends the run at once (the agent or acp
//!   could now wait forever for what was lost).

use crate::exit::{self, Failure};
use crate::session::{Session, overlong_failure};
use acp::ClientSideConnection;
use acp::schema::*;
use std::time::Duration;

/// After Ctrl-C or `--timeout`, how long to wait for the turn to end as
/// `cancelled` before the agent is killed.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Why a turn was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// Ctrl-C.
    ByUser,
    /// It ran past `--timeout`.
    TimedOut,
}

/// How a turn ended.
#[derive(Debug)]
pub enum TurnEnd {
    /// The agent answered. `cancelled` says whether a cancel had been sent
    /// (the stop reason is then `cancelled`, whatever the agent said).
    Answered {
        /// The answer.
        response: PromptResponse,
        /// Why a cancel was sent, if one was.
        cancelled: Option<Cancelled>,
    },
    /// The turn failed, but the agent is still there (an error answer, a
    /// malformed one); the message says how.
    Failed(Failure),
    /// The turn failed and the run cannot go on: the agent crashed or was
    /// killed, or sent a message over the size limit.
    Fatal(Failure),
}

/// The limits of a turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// `--timeout`.
    pub timeout: Option<Duration>,
}

/// The message when `--timeout` ended a turn that then stopped.
pub fn timeout_failure(timeout: Duration, killed: bool) -> Failure {
    let secs = timeout.as_secs_f64();
    let message = if killed {
        format!(
            "the turn did not end within {secs} s (--timeout), nor within {} s of being \
             cancelled; the agent was stopped",
            CANCEL_GRACE.as_secs()
        )
    } else {
        format!("the turn did not end within {secs} s (--timeout); it was cancelled")
    };
    Failure::new(exit::TIMEOUT, message)
}

/// Sends the prompt and waits for its answer (see the module docs).
pub(crate) async fn run(
    session: &mut Session,
    conn: &ClientSideConnection,
    session_id: &SessionId,
    blocks: Vec<ContentBlock>,
    limits: Limits,
) -> TurnEnd {
    let client = session.client.clone();
    let turn = conn.prompt(PromptRequest::new(session_id.clone(), blocks));
    tokio::pin!(turn);
    let mut cancelled: Option<Cancelled> = None;
    let far = tokio::time::Instant::now() + Duration::from_secs(86400 * 365);
    let grace = tokio::time::sleep_until(far);
    tokio::pin!(grace);
    let limit = tokio::time::sleep_until(match limits.timeout {
        Some(t) => tokio::time::Instant::now() + t,
        None => far,
    });
    tokio::pin!(limit);
    let overlong = client.overlong();
    tokio::pin!(overlong);
    let response = loop {
        tokio::select! {
            // The over-long report comes before the answer that follows
            // it; when both are in, the report wins.
            biased;
            _ = &mut overlong => {
                client.with_view(|v| v.break_line());
                return TurnEnd::Fatal(overlong_failure());
            }
            response = &mut turn => break response,
            _ = session.interrupts.recv() => {
                if cancelled.is_some() {
                    let _ = session.process.kill();
                    return TurnEnd::Fatal(Failure::new(exit::CANCELLED, "interrupted again: killed the agent"));
                }
                cancelled = Some(Cancelled::ByUser);
                client.mark_cancelled();
                client.with_view(|v| v.note("[cancel] cancelling the turn (Ctrl-C again to kill the agent)"));
                let _ = conn.cancel(CancelNotification::new(session_id.clone())).await;
                grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
            }
            _ = &mut limit, if cancelled.is_none() => {
                let secs = limits.timeout.unwrap_or_default().as_secs_f64();
                cancelled = Some(Cancelled::TimedOut);
                client.mark_cancelled();
                client.with_view(|v| v.note(&format!("[timeout] the turn ran past {secs} s (--timeout): cancelling it")));
                let _ = conn.cancel(CancelNotification::new(session_id.clone())).await;
                grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
            }
            _ = &mut grace => {
                let _ = session.process.kill();
                return TurnEnd::Fatal(match (cancelled, limits.timeout) {
                    (Some(Cancelled::TimedOut), Some(timeout)) => timeout_failure(timeout, true),
                    _ => Failure::new(
                        exit::CANCELLED,
                        format!("the agent did not end the turn within {} s of the cancel; killed it", CANCEL_GRACE.as_secs()),
                    ),
                });
            }
        }
    };
    match response {
        Ok(mut response) => {
            if cancelled.is_some() {
                response.stop_reason = StopReason::Cancelled;
            }
            TurnEnd::Answered {
                response,
                cancelled,
            }
        }
        // An error answer to a cancelled turn is its end all the same.
        Err(e) if cancelled.is_some() && e.remote().is_some() => TurnEnd::Answered {
            response: PromptResponse::new(StopReason::Cancelled),
            cancelled,
        },
        Err(e) => {
            let failure = session.failure("session/prompt", e).await;
            if failure.code == exit::AGENT_CRASHED {
                TurnEnd::Fatal(failure)
            } else {
                TurnEnd::Failed(failure)
            }
        }
    }
}
