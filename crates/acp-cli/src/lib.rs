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
//!   `agents`, `record`, `bridge`, `trace` (and `watch`, which shows a live connection
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
//! - [`registry`]: the ACP registry (its document, the cache, downloads,
//!   safe extraction, the install directories), used by the commands; it
//!   uses only [`config`] and the leaves.
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
pub mod registry;
pub mod session;
pub mod style;
pub mod tty;
pub mod view;

pub use commands::docs;
use commands::{bridge, chat, check, connect, exec, login, mock, record, serve, trace};

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
        Command::Record(_)
        | Command::Bridge(_)
        | Command::Trace(_)
        | Command::Mock(_)
        | Command::Check(_),
    ) = (&cli.agent, &cli.command)
    {
        return Err(Failure::usage(
            "--agent is for exec and chat; acp record and acp bridge take the agent's command \
             line after --: acp record -- AGENT [ARGS…]",
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
        Command::Bridge(args) => return bridge::run(args).await,
        Command::Trace(args) => return trace::run(args),
        Command::Mock(args) => return mock::run(args),
        Command::Check(args) => return check::run(args).await,
        other => other,
    };
    let (path, explicit) = match &cli.config {
        Some(path) => (Some(path.clone()), true),
        None => (config::paths::default_config_path(), false),
    };
    // Zed's agents are imported into any config file, even a broken one
    // (which the import reports).
    if let Command::Agents(cli::AgentsArgs {
        action: action @ Some(AgentsAction::ImportZed { .. }),
    }) = command
    {
        return commands::agents::run(action, &Config::default(), path.as_deref()).await;
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
        Command::Agents(args) => commands::agents::run(args.action, &config, path.as_deref()).await,
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
        | Command::Bridge(_)
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
        requested => {
            not_added(config, requested.or(config.default_agent.as_deref()))?;
            config::choose_agent(config, requested)
        }
    }
}

/// Fails when `value` names an agent of the ACP registry (as the cached
/// copy has it: no network here) that is neither in the config nor a
/// program on `PATH`: it must be added first, since `acp exec` and `acp
/// chat` never download an agent by themselves.
fn not_added(config: &Config, value: Option<&str>) -> Result<(), Failure> {
    let Some(id) = value else { return Ok(()) };
    if config.agents.contains_key(id) || !registry::index::valid_id(id) || config::on_path(id) {
        return Ok(());
    }
    let cached =
        registry::cache_dir().and_then(|dir| registry::cache::cached(&dir, &registry::url(config)));
    match cached.as_ref().and_then(|c| c.index.get(id)) {
        Some(agent) => Err(Failure::new(
            exit::AGENT_NOT_FOUND,
            format!(
                "{id} is an agent of the ACP registry ({} {}) that is not added yet: \
                 acp agents add {id} installs it (acp exec and acp chat never download agents)",
                commands::agents::search::printable(&agent.name),
                agent.version
            ),
        )),
        None => Ok(()),
    }
}
