//! `acp`, a terminal client for the Agent Client Protocol.
//!
//! The binary's logic lives here so it can be tested: [`cli`] parses the
//! arguments and [`run`] hands them to one of the [`commands`].
//!
//! # Layout
//!
//! A folder per layer; a module uses only the layers below its own:
//!
//! - [`commands`]: one module per command (`exec`, `chat`, `login`,
//!   `agents`, `record`, `trace` (and `watch`, which shows a live connection
//!   with trace's lines), `mock`, `serve`, `connect`, `check`, completions
//!   and manual pages).
//! - [`session`]: the `Session` that `acp exec`, `acp chat` and `acp login`
//!   share: starting the agent, opening the session, logins, its mode,
//!   model and options, one prompt turn, Ctrl-C and `--timeout`, an agent
//!   given by URL (its link's notes, a link lost, the session opened again).
//! - [`host`]: the client side, [`host::CliClient`]: permissions, files,
//!   terminals, elicitations.
//! - [`view`]: one [`view::View`] (plain, JSON lines, chat) over one
//!   [`view::Store`] of what the session's updates said.
//! - [`config`] (the config file, choosing the agent, acp's paths) and
//!   [`cli`] (the argument definitions), which every layer above may use.
//! - Leaf helpers, used by all and using none: [`exit`] (exit codes),
//!   [`style`], [`tty`], [`recording`] (the record file of `acp record`,
//!   `acp trace` and `acp mock`).
//!
//! commands → session → host → view; any of them may use config, cli and
//! the leaves; config uses only cli and the leaves, cli only the leaves. A
//! new command is a module of [`commands`] (its arguments in [`cli`]); a
//! new thing every session does is a method of `Session` in [`session`]; a
//! new way to show a session is a screen of [`view`].
#![deny(missing_docs)]

pub mod cli;
pub mod commands;
pub mod config;
pub mod exit;
pub mod host;
pub mod recording;
pub mod session;
pub mod style;
pub mod tty;
pub mod view;

pub use commands::docs;
use commands::{chat, check, connect, exec, login, mock, record, serve, trace};

use cli::{AgentsAction, Cli, Command};
use config::Config;
use exit::Failure;

/// Runs the program with parsed arguments and returns the exit code.
pub async fn run(cli: Cli) -> Result<u8, Failure> {
    // Generated from the argument definitions alone: no config is read.
    match &cli.command {
        Command::Completions { shell } => return docs::completions(*shell),
        Command::Man { dir } => return docs::man(dir.as_deref()),
        _ => {}
    }
    // These need no config file (a broken one must not stop a recording).
    if let (
        Some(_),
        Command::Record(_) | Command::Trace(_) | Command::Mock(_) | Command::Check(_),
    ) = (&cli.agent, &cli.command)
    {
        return Err(Failure::usage(
            "--agent is for exec and chat; acp record takes the agent's command line after --: \
             acp record -- AGENT [ARGS…]",
        ));
    }
    if let (Some(_), Command::Watch(_)) = (&cli.agent, &cli.command) {
        return Err(Failure::usage(
            "--agent is for exec and chat; acp watch takes the server's URL: acp watch URL",
        ));
    }
    let command = match cli.command {
        Command::Watch(args) => return trace::watch::run(args, &cli.remote).await,
        Command::Record(args) => return record::run(args).await,
        Command::Trace(args) => return trace::run(args),
        Command::Mock(args) => return mock::run(args),
        Command::Check(args) => return check::run(args).await,
        other => other,
    };
    let (path, explicit) = match &cli.config {
        Some(path) => (Some(path.clone()), true),
        None => (config::paths::default_config_path(), false),
    };
    if let Command::Agents(cli::AgentsArgs {
        action: Some(AgentsAction::ImportZed { settings }),
    }) = &command
    {
        let path = path.ok_or_else(|| {
            Failure::usage("cannot find the config directory; name the config file with --config")
        })?;
        return commands::agents::import::run(settings.as_deref(), &path);
    }
    let config = match &path {
        Some(path) => Config::load(path, explicit),
        None => Ok(Config::default()),
    };
    let config = match (config, &command) {
        (Ok(config), _) => config,
        // Under --format json, every failure ends with a JSON line.
        (Err(failure), Command::Exec(args)) if args.format == cli::Format::Json => {
            println!("{}", failure.json_line(None));
            return Err(failure);
        }
        (Err(failure), _) => return Err(failure),
    };
    match command {
        Command::Agents(_) => {
            commands::agents::list(&config, path.as_deref());
            Ok(exit::OK)
        }
        Command::Exec(args) => {
            let json = args.format == cli::Format::Json;
            let agent =
                pick_agent(&config, cli.agent.as_deref(), &cli.remote).inspect_err(|f| {
                    if json {
                        println!("{}", f.json_line(None));
                    }
                })?;
            exec::run(agent, args).await
        }
        Command::Login(args) => {
            let agent = pick_agent(&config, cli.agent.as_deref(), &cli.remote)?;
            login::run(agent, args).await
        }
        Command::Chat(args) => {
            let agent = pick_agent(&config, cli.agent.as_deref(), &cli.remote)?;
            chat::run(agent, args).await
        }
        Command::Record(_)
        | Command::Trace(_)
        | Command::Mock(_)
        | Command::Check(_)
        | Command::Watch(_) => {
            unreachable!("handled above")
        }
        Command::Serve(args) => serve::run(args).await,
        Command::Connect(args) => connect::run(&args.url, &cli.remote).await,
        Command::Completions { .. } | Command::Man { .. } => unreachable!("handled above"),
    }
}

/// The agent of `--agent`: a URL is reached through `acp connect`.
fn pick_agent(
    config: &Config,
    requested: Option<&str>,
    remote: &cli::RemoteArgs,
) -> Result<config::ChosenAgent, Failure> {
    match requested {
        Some(url) if acp::remote::is_url(url) => config::remote::mirror_agent(url, remote),
        requested => config::choose_agent(config, requested),
    }
}
