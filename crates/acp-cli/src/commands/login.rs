//! `acp login [METHOD]`: logging in to an agent outside a session.
//!
//! The agent is started and initialized (with terminal logins advertised),
//! and then, for the method chosen:
//! - a terminal login runs the agent's login command in this terminal and
//!   waits for it (exit status 0 means logged in);
//! - an agent login calls `authenticate` (the agent may open a browser);
//! - variables a method needs that are not set are named first.
//!
//! Without METHOD the methods are listed; in a terminal, acp asks which.

use crate::cli::{LoginArgs, SessionArgs};
use crate::config::ChosenAgent;
use crate::exit::{self, Failure};
use crate::host::CliClient;
use crate::host::permission::PermissionPolicy;
use crate::session::auth::{self, Kind, Login};
use crate::session::{Interrupted, Session, Setup};
use crate::tty::Tty;
use crate::view::View;
use acp::schema::AuthenticateRequest;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Runs `acp login` and returns the exit code.
pub async fn run(agent: ChosenAgent, args: LoginArgs) -> Result<u8, Failure> {
    let session_args = SessionArgs {
        cwd: args.cwd.clone(),
        deny_all: true,
        timeout: args.timeout,
        verbose: args.verbose,
        ..SessionArgs::default()
    };
    let setup = Setup::new(&session_args, PermissionPolicy::DenyAll)?;
    let client = CliClient::new(setup.settings(false), View::stdio(false));
    let mut session = Session::start(agent, &setup, client, args.verbose)?;
    let result = login(&mut session, &setup, args.method.as_deref()).await;
    session.close().await;
    result
}

async fn login(session: &mut Session, setup: &Setup, method: Option<&str>) -> Result<u8, Failure> {
    let capabilities = auth::advertise(session.client.capabilities());
    session.initialize(capabilities).await?;
    let logins = session.logins.clone();
    let listing = {
        let is_set = |name: &str| session.var_is_set(name);
        auth::describe(&logins, &is_set)
    };
    let attached = std::io::stdin().is_terminal();
    let login = match method {
        Some(id) => match logins.iter().find(|l| l.id == id) {
            Some(login) => login.clone(),
            None => {
                return Err(Failure::usage(format!(
                    "the agent has no login method {id:?}.\n{listing}"
                )));
            }
        },
        None if logins.is_empty() => {
            println!("{listing}");
            return Ok(exit::OK);
        }
        None if !attached => {
            println!("{listing}");
            let flag = session.agent_flag();
            let flag = if flag.is_empty() {
                flag
            } else {
                format!("{flag} ")
            };
            println!("Log in with one: acp login {flag}METHOD");
            return Ok(exit::OK);
        }
        None => {
            let count = logins.len();
            let question = format!("{listing}\n");
            let chosen = tokio::task::spawn_blocking(move || {
                let mut tty = Tty::open(Arc::new(AtomicBool::new(false)))?;
                tty.write(&question);
                loop {
                    let line = tty.ask(&format!("Log in with which? [1-{count}, n: none] "))?;
                    let line = line.trim();
                    if line.eq_ignore_ascii_case("n") || line.is_empty() {
                        return None;
                    }
                    if let Some(n) = line
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=count).contains(n))
                    {
                        return Some(n - 1);
                    }
                }
            })
            .await
            .ok()
            .flatten();
            match chosen {
                Some(i) => logins[i].clone(),
                None => return Ok(exit::OK),
            }
        }
    };
    run_method(session, setup, &login).await
}

async fn run_method(session: &mut Session, setup: &Setup, login: &Login) -> Result<u8, Failure> {
    if let Kind::Unknown(kind) = &login.kind {
        return Err(Failure::usage(format!(
            "{} is a kind of login acp does not know ({kind}); see the agent's documentation",
            login.id
        )));
    }
    if !login.authenticates() {
        let Some(command) = &login.terminal else {
            return Err(Failure::usage(format!(
                "{} has no command to run",
                login.id
            )));
        };
        eprintln!(
            "acp: running `{}`; acp goes on when it exits",
            command.display(&login.env)
        );
        let (command, cwd) = (command.clone(), setup.cwd.clone());
        let status = tokio::task::spawn_blocking(move || command.run(&cwd))
            .await
            .map_err(|e| Failure::agent(format!("the login command failed: {e}")))?
            .map_err(|e| Failure::agent(format!("cannot run the login command: {e}")))?;
        session.forget_interrupts().await;
        if !status.success() {
            return Err(Failure::agent(format!(
                "the login command of {} ended: {status}; you are not logged in",
                login.id
            )));
        }
        println!("logged in with {} (the login command exited 0)", login.id);
        return Ok(exit::OK);
    }
    let missing: Vec<String> = {
        let is_set = |name: &str| session.var_is_set(name);
        login
            .missing_vars(&is_set)
            .into_iter()
            .map(str::to_owned)
            .collect()
    };
    if !missing.is_empty() {
        return Err(Failure::usage(format!(
            "{} needs {} set in the environment; set it, then run acp login again",
            login.id,
            missing.join(" and ")
        )));
    }
    session.trying = Some(login.id.clone());
    let conn = session.process.connection().clone();
    session
        .step(
            "authenticate",
            conn.authenticate(AuthenticateRequest::new(login.id.as_str())),
        )
        .await
        .map_err(|Interrupted::Failed(f)| f)?;
    session.trying = None;
    println!("logged in with {}", login.id);
    Ok(exit::OK)
}
