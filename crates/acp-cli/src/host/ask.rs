//! The questions [`CliClient`] asks on the terminal: permissions (and the
//! "always" answers chat remembers), writes and commands the gate asks
//! about, and links to open. A question runs on a blocking thread, on a
//! line of its own; a cancelled turn abandons it.

use super::{CliClient, Shared};
use crate::host::permission::{
    Asked, Decision, Remembered, ask_on_tty, ask_permission, decision_note, pick_option,
};
use crate::host::policy::{Verdict, refused};
use crate::tty::Tty;
use acp::schema::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};

/// Counts a question as reading the terminal while it lives.
struct Asking(Arc<Shared>);

impl Asking {
    fn start(shared: Arc<Shared>) -> Self {
        shared.asking.send_modify(|n| *n += 1);
        Asking(shared)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.0.asking.send_modify(|n| *n -= 1);
    }
}

impl CliClient {
    /// What a permission request is about: its tool call, completed by
    /// what earlier updates said of the call (the view's store).
    pub(super) fn asked(&self, call: &ToolCallUpdate) -> Asked {
        self.with_view(|v| Asked::new(call, v.store().announced(&call.tool_call_id)))
    }

    /// Chat: the "always" answers given so far.
    pub fn remembered(&self) -> Vec<Remembered> {
        self.shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Chat: forgets the `index`th "always" answer (from 0); the one
    /// forgotten, if there was one.
    pub fn forget(&self, index: usize) -> Option<Remembered> {
        let mut list = self
            .shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (index < list.len()).then(|| list.remove(index))
    }

    /// Chat: forgets every "always" answer.
    pub fn forget_all(&self) {
        self.shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Chat: asks on the terminal, or answers from a remembered "always"
    /// choice for the same tool kind and scope (the exact command, paths or
    /// title).
    pub(super) async fn ask_chat(&self, asked: Asked, options: Vec<PermissionOption>) -> Decision {
        let scope = asked.scope();
        let remembered = self
            .shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|r| r.kind == asked.kind && r.scope == scope)
            .cloned();
        if let Some(remembered) = remembered {
            let order = if remembered.allow {
                [
                    PermissionOptionKind::AllowAlways,
                    PermissionOptionKind::AllowOnce,
                ]
            } else {
                [
                    PermissionOptionKind::RejectAlways,
                    PermissionOptionKind::RejectOnce,
                ]
            };
            if let Some(option) = order
                .iter()
                .find_map(|k| options.iter().find(|o| o.kind == *k))
            {
                self.with_view(|v| {
                    v.note(&format!(
                        "[permission] remembered: {remembered} (/permissions to revoke)"
                    ))
                });
                return if remembered.allow {
                    Decision::Allow(option.clone())
                } else {
                    Decision::Reject(option.clone())
                };
            }
        }
        let color = self.with_view(|v| v.color());
        let question = asked.clone();
        let decision = self
            .on_tty(pick_option(&options, false), move |tty| {
                ask_permission(tty, &question, &options, color)
            })
            .await
            .unwrap_or(Decision::Cancel);
        let chosen = match &decision {
            Decision::Allow(o) if o.kind == PermissionOptionKind::AllowAlways => Some(true),
            Decision::Reject(o) if o.kind == PermissionOptionKind::RejectAlways => Some(false),
            _ => None,
        };
        if let Some(allow) = chosen {
            let mut list = self
                .shared
                .remembered
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            list.retain(|r| !(r.kind == asked.kind && r.scope == scope));
            list.push(Remembered {
                kind: asked.kind.clone(),
                scope,
                allow,
            });
        }
        decision
    }

    /// Chat: asks a question on the terminal, from a blocking thread, on a
    /// line of its own. `no_tty` is the answer when the terminal cannot be
    /// opened. `None` when the turn is cancelled meanwhile (the question is
    /// abandoned) or the question failed.
    pub(super) async fn on_tty<T: Send + 'static>(
        &self,
        no_tty: T,
        ask: impl FnOnce(&mut Tty) -> T + Send + 'static,
    ) -> Option<T> {
        let live = self.with_view(|v| {
            v.break_line();
            v.live_output()
        });
        let mut cancelled = self.shared.cancelled.subscribe();
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let asking = Asking::start(self.shared.clone());
        let question = tokio::task::spawn_blocking(move || {
            let _asking = asking;
            // The question has the terminal while it reads, even after it
            // was abandoned: the live area and type-ahead step aside.
            if let Some(live) = &live {
                live.suspend();
            }
            let answer = match Tty::open(flag) {
                Some(mut tty) => ask(&mut tty),
                None => no_tty,
            };
            if let Some(live) = &live {
                live.resume();
            }
            answer
        });
        tokio::select! {
            answer = question => answer.ok(),
            _ = cancelled.wait_for(|c| *c) => {
                abort.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// Chat: a URL elicitation. The link is shown and opened only with
    /// the user's consent, and only if it is http or https.
    pub(super) async fn ask_link(
        &self,
        message: String,
        link: ElicitationUrlMode,
    ) -> CreateElicitationResponse {
        let shown = crate::host::elicit::printable(&link.url);
        if let Some(why) = crate::host::elicit::refuse_link(&link.url) {
            let note = format!(
                "[elicitation] declined: {} — {why}: {shown}",
                crate::host::elicit::printable(&message)
            );
            self.with_view(|v| v.note(&note));
            return CreateElicitationResponse::decline();
        }
        let color = self.with_view(|v| v.color());
        let (text, url) = (message.clone(), link.url.clone());
        let consent = self
            .on_tty(Some(false), move |tty| {
                crate::host::elicit::ask_url(tty, &text, &url, color)
            })
            .await
            .flatten();
        match consent {
            None => return CreateElicitationResponse::cancel(),
            Some(false) => return CreateElicitationResponse::decline(),
            Some(true) => {}
        }
        let note = match crate::host::elicit::open_url(&link.url) {
            Ok(program) => format!("[elicitation] asked {program} to open the link"),
            Err(why) => format!("[elicitation] {why}; open the link yourself: {shown}"),
        };
        self.with_view(|v| v.note(&note));
        self.shared
            .links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(link.elicitation_id, message);
        CreateElicitationResponse::accept(None)
    }

    /// `acp exec`: asks on the terminal (no terminal: reject); a cancelled
    /// turn abandons the question.
    pub(super) async fn ask(&self, title: String, options: Vec<PermissionOption>) -> Decision {
        let mut cancelled = self.shared.cancelled.subscribe();
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let question = tokio::task::spawn_blocking(move || match Tty::open(flag) {
            Some(mut tty) => ask_on_tty(&mut tty, &title, &options),
            None => pick_option(&options, false),
        });
        tokio::select! {
            answer = question => answer.unwrap_or(Decision::Cancel),
            _ = cancelled.wait_for(|c| *c) => {
                abort.store(true, Ordering::Relaxed);
                Decision::Cancel
            }
        }
    }

    /// Carries out the gate's verdict: asks the user when it says so (in
    /// chat, or in `acp exec` on a terminal; refused without one).
    pub(super) async fn permit(&self, verdict: Verdict, kind: ToolKind) -> Result<(), Error> {
        let question = match verdict {
            Verdict::Allow => return Ok(()),
            Verdict::Refuse(error) => {
                self.shared.denied.fetch_add(1, Ordering::Relaxed);
                self.with_view(|v| v.note(&format!("[refused] {}", error.message)));
                return Err(error);
            }
            Verdict::Ask(question) => question,
        };
        let options = vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let title = format!("The agent wants to {question}");
        let decision = if *self.shared.cancelled.borrow() {
            Decision::Cancel
        } else if self.shared.settings.interactive {
            let color = self.with_view(|v| v.color());
            let asked = Asked {
                kind: Some(kind),
                title: title.clone(),
                ..Asked::default()
            };
            self.on_tty(pick_option(&options, false), move |tty| {
                ask_permission(tty, &asked, &options, color)
            })
            .await
            .unwrap_or(Decision::Cancel)
        } else {
            self.ask(title.clone(), options).await
        };
        self.with_view(|v| v.note(&decision_note(&title, &decision)));
        match decision {
            Decision::Allow(_) => Ok(()),
            _ => {
                self.shared.denied.fetch_add(1, Ordering::Relaxed);
                Err(refused(&question))
            }
        }
    }
}
