//! Logging in while a session opens: `--auth METHOD`, and the terminal
//! login acp offers to run when the agent wants one and a person is at the
//! terminal; the advice a failed login gets ([`super::auth::advice`]).

use crate::exit::Failure;
use crate::session::auth::{self, Login, TerminalCommand};
use crate::session::{Interrupted, Session, Setup};
use crate::tty::Tty;
use acp::schema::*;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

impl Session {
    /// `--auth METHOD`: `authenticate`, or the terminal login of a terminal
    /// method. True when a terminal login ran (the agent must start again).
    pub(super) async fn login_with(
        &mut self,
        method: &str,
        setup: &Setup,
    ) -> Result<bool, Failure> {
        let Some(login) = self.logins.iter().find(|l| l.id == method).cloned() else {
            let is_set = |name: &str| self.var_is_set(name);
            return Err(Failure::usage(format!(
                "the agent has no login method {method:?}.\n{}",
                auth::describe(&self.logins, &is_set)
            )));
        };
        if !login.authenticates() {
            let Some(command) = login.terminal.clone() else {
                return Err(Failure::usage(format!(
                    "acp cannot use the login method {method:?} ({:?}); see the agent's documentation",
                    login.kind
                )));
            };
            if !setup.interactive {
                let mut flag = self.agent_flag();
                if !flag.is_empty() {
                    flag.push(' ');
                }
                return Err(Failure::usage(format!(
                    "{method} is a login in a terminal, which needs one: run `{}`, or `acp login \
                     {flag}{method}`, then run again without --auth",
                    command.display(&login.env)
                )));
            }
            return if self.run_login(&command, &login, setup).await {
                Ok(true)
            } else {
                Err(Failure::agent(format!(
                    "the login {method} did not finish successfully"
                )))
            };
        }
        self.trying = Some(method.to_owned());
        let conn = self.process.connection().clone();
        self.step(
            "authenticate",
            conn.authenticate(AuthenticateRequest::new(method)),
        )
        .await
        .map_err(|Interrupted::Failed(f)| f)?;
        self.trying = None;
        Ok(false)
    }

    /// Asks whether to run one of the terminal logins that fit `failure`,
    /// and runs it. True once one exited 0.
    pub(super) async fn offer_login(&mut self, failure: &Failure, setup: &Setup) -> bool {
        let Some(error) = failure.error.as_deref().cloned() else {
            return false;
        };
        let problem = auth::Problem {
            method: "",
            error: &error,
            tried: None,
        };
        let logins = auth::relevant(&problem, &self.logins, self.agent_command());
        let runnable: Vec<(Login, TerminalCommand)> = logins
            .into_iter()
            .filter_map(|l| {
                let command = l.terminal.clone()?;
                Some((l, command))
            })
            .collect();
        if runnable.is_empty() {
            return false;
        }
        let color = self.client.with_view(|v| v.color());
        self.client.with_view(|v| v.break_line());
        let mut question = format!(
            "{}\nThe agent needs you to log in. acp can run its login here:\n",
            failure.message.lines().next().unwrap_or_default()
        );
        for (i, (login, command)) in runnable.iter().enumerate() {
            question.push_str(&format!(
                "  {}) {}: {}\n",
                i + 1,
                login.name,
                command.display(&login.env)
            ));
        }
        let count = runnable.len();
        let chosen = tokio::task::spawn_blocking(move || {
            let mut tty = Tty::open(Arc::new(AtomicBool::new(false)))?;
            ask_choice(&mut tty, &question, count, color)
        })
        .await
        .ok()
        .flatten();
        let Some(index) = chosen else {
            return false;
        };
        let (login, command) = &runnable[index];
        self.run_login(command, login, setup).await
    }

    /// Runs a terminal login in the user's terminal and waits for it.
    async fn run_login(&mut self, command: &TerminalCommand, login: &Login, setup: &Setup) -> bool {
        self.client.with_view(|v| {
            v.note(&format!(
                "[login] running `{}`; acp goes on when it exits",
                command.display(&login.env)
            ))
        });
        let (command, cwd) = (command.clone(), setup.cwd.clone());
        let status = tokio::task::spawn_blocking(move || command.run(&cwd)).await;
        // Ctrl-C typed during the login was the login's.
        self.forget_interrupts().await;
        let note = match &status {
            Ok(Ok(status)) if status.success() => {
                "[login] done; starting the agent again".to_owned()
            }
            Ok(Ok(status)) => format!("[login] the login command ended: {status}"),
            Ok(Err(e)) => format!("[login] cannot run the login command: {e}"),
            Err(e) => format!("[login] the login command failed: {e}"),
        };
        self.client.with_view(|v| v.note(&note));
        matches!(status, Ok(Ok(status)) if status.success())
    }
    /// What to tell the user when `method` was answered with an
    /// authentication error ([`auth::advice`]).
    pub(crate) fn auth_advice(&self, method: &str, error: &Error) -> String {
        let tried = self.trying.as_deref().filter(|_| method == "authenticate");
        let problem = auth::Problem {
            method,
            error,
            tried,
        };
        let logins = auth::relevant(&problem, &self.logins, self.agent_command());
        let is_set = |name: &str| self.var_is_set(name);
        let flag = self.agent_flag();
        let cx = auth::Context {
            agent_flag: &flag,
            interactive: false,
            is_set: &is_set,
        };
        auth::advice(&problem, &logins, &cx)
    }
}

/// Asks which of `count` numbered choices to take; Enter takes the first,
/// `n` (or the end of input) none.
fn ask_choice(tty: &mut Tty, question: &str, count: usize, color: bool) -> Option<usize> {
    let style = crate::style::Style::new(color);
    tty.write(&format!("{} {question}", style.yellow_bold("?")));
    loop {
        let prompt = if count == 1 {
            "Run it now? [Y/n] ".to_owned()
        } else {
            format!("Run which? [1-{count}, Enter: 1, n: none] ")
        };
        let line = tty.ask(&prompt)?;
        let answer = line.trim().to_ascii_lowercase();
        match answer.as_str() {
            "" | "y" | "yes" => return Some(0),
            "n" | "no" => return None,
            _ => {
                if let Some(n) = answer
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=count).contains(n))
                {
                    return Some(n - 1);
                }
            }
        }
    }
}
