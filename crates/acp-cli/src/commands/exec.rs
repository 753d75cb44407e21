//! `acp exec`: one prompt turn, headless.

use crate::cli::{ExecArgs, Format};
use crate::config::ChosenAgent;
use crate::exit::{self, Failure};
use crate::host::CliClient;
use crate::host::permission::PermissionPolicy;
use crate::session::auth;
use crate::session::mentions::prompt_blocks;
use crate::session::open::{OpenOptions, Opened};
use crate::session::turn::{self, Cancelled, TurnEnd};
use crate::session::{Session, Setup};
use crate::view::View;
use acp::schema::*;
use std::io::{IsTerminal, Read};

/// Runs `acp exec` and returns the exit code.
/// Under `--format json`, a failure also ends standard output with one
/// JSON line ([`Failure::json_line`]).
pub async fn run(agent: ChosenAgent, args: ExecArgs) -> Result<u8, Failure> {
    let json = args.format == Format::Json;
    let mut session_id = None;
    let result = run_exec(agent, args, &mut session_id).await;
    if json && let Err(failure) = &result {
        // After every update line (the view has flushed them).
        println!("{}", failure.json_line(session_id.as_deref()));
    }
    result
}

async fn run_exec(
    agent: ChosenAgent,
    args: ExecArgs,
    session_id: &mut Option<String>,
) -> Result<u8, Failure> {
    let prompt = read_prompt(&args.prompt)?;
    let attached = std::io::stdin().is_terminal();
    let default_policy = if attached {
        PermissionPolicy::Ask
    } else {
        PermissionPolicy::DenyAll
    };
    let mut setup = Setup::new(&args.session, default_policy)?;
    setup.interactive = attached;
    let view = View::stdio(args.format == Format::Json);
    let client = CliClient::new(setup.settings(false), view);
    let mut session = Session::start(agent, &setup, client, args.session.verbose)?;
    let result = drive(&mut session, &args, &setup, prompt).await;
    session.close().await;
    *session_id = session.session_id.as_ref().map(|id| id.to_string());
    if result.is_err() {
        session.client.with_view(|v| v.break_line());
    }
    result
}

async fn drive(
    session: &mut Session,
    args: &ExecArgs,
    setup: &Setup,
    prompt: String,
) -> Result<u8, Failure> {
    let capabilities = auth::advertise(session.client.capabilities());
    if args.session.verbose {
        session.client.with_view(|v| {
            v.note(&format!("[policy] {}", setup.policy_state()));
            v.note(&format!("[sandbox] {}", setup.sandbox_state));
        });
    }
    let options = OpenOptions {
        show_replay: false,
        prefer_load: false,
    };
    let Opened {
        conn,
        caps,
        session_id,
        ..
    } = session
        .open(&args.session, setup, capabilities, options)
        .await?;
    session
        .client
        .with_view(|v| v.note(&format!("[session] {session_id}")));

    let blocks = prompt_blocks(
        &prompt,
        &setup.cwd,
        caps.prompt_capabilities.embedded_context,
    );
    let limits = turn::Limits {
        timeout: setup.timeout,
    };
    let end = turn::run(session, &conn, &session_id, blocks, limits).await;
    let (response, cancelled) = match end {
        TurnEnd::Answered {
            response,
            cancelled,
        } => (response, cancelled),
        TurnEnd::Fatal(mut failure) if session.link_lost().is_some_and(|l| l.gone) => {
            let again = format!(
                "acp exec {} --session {session_id} PROMPT",
                session.agent_flag()
            );
            failure.message.push_str(&format!(
                "\nThe agent's session may still be there, on a new connection: {again}"
            ));
            return Err(failure);
        }
        TurnEnd::Failed(failure) | TurnEnd::Fatal(failure) => return Err(failure),
    };
    if cancelled == Some(Cancelled::TimedOut) {
        session.client.with_view(|v| v.break_line());
        return Err(turn::timeout_failure(
            setup.timeout.unwrap_or_default(),
            false,
        ));
    }
    session
        .client
        .with_view(|v| v.finish(&session_id, &response));
    Ok(match response.stop_reason {
        _ if cancelled.is_some() => exit::CANCELLED,
        StopReason::EndTurn if session.client.denied_count() > 0 => exit::PERMISSION_DENIED,
        StopReason::EndTurn => exit::OK,
        StopReason::Refusal => exit::REFUSAL,
        StopReason::MaxTokens | StopReason::MaxTurnRequests => exit::LIMIT,
        StopReason::Cancelled => exit::CANCELLED,
        _ => exit::AGENT_ERROR,
    })
}

fn read_prompt(words: &[String]) -> Result<String, Failure> {
    let prompt = match words {
        [] => None,
        [dash] if dash == "-" => None,
        words => Some(words.join(" ")),
    };
    let prompt = match prompt {
        Some(text) => text,
        None => {
            if std::io::stdin().is_terminal() {
                return Err(Failure::usage(
                    "no prompt: pass it as an argument or on standard input (acp exec \"fix the tests\")",
                ));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| {
                Failure::usage(format!("cannot read the prompt from standard input: {e}"))
            })?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage("the prompt is empty"));
    }
    Ok(prompt)
}
