//! Command-line arguments: what clap parses, and the completions and
//! manual pages are generated from. Only definitions, used by every layer
//! above; a new command adds its arguments here (`acp check`'s are in
//! [`check`]) and its code under [`crate::commands`].

pub mod check;
pub mod watch;

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// acp: a terminal client for the Agent Client Protocol.
///
/// `acp` alone starts `acp chat`; `acp "PROMPT"` is `acp exec "PROMPT"`.
#[derive(Debug, Parser)]
#[command(name = "acp", version, about, propagate_version = true)]
pub struct Cli {
    /// The agent: a name from the config file, or a command line such as
    /// "npx -y @agentclientprotocol/claude-agent-acp". Default: the
    /// config's default_agent, else acp-agent.
    #[arg(long, global = true, value_name = "NAME|COMMAND|URL")]
    pub agent: Option<String>,
    /// How to reach an agent given by URL (`--agent ws://…`) or by
    /// `acp connect`.
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// The config file (default: `<config dir>/acp/config.toml`).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send one prompt and stream the reply (headless).
    #[command(after_help = crate::exit::HELP_TABLE)]
    Exec(ExecArgs),
    /// Talk to the agent interactively: a line editor, the reply streamed
    /// as a transcript, permission questions asked on the terminal.
    Chat(ChatArgs),
    /// List the agents of the config file; search, add, update and remove
    /// agents of the ACP registry; import Zed's.
    Agents(AgentsArgs),
    /// Log in to the agent: run its login in this terminal (a terminal
    /// method) or ask it to log in (`authenticate`). Without METHOD, list
    /// the agent's methods and ask which.
    Login(LoginArgs),
    /// Run an agent behind a transparent proxy that records the session:
    /// put `acp record -- AGENT…` where an editor's config names the agent.
    Record(RecordArgs),
    /// Show a recording of `acp record` as a timeline: sessions, turns,
    /// requests with their latency, tool calls, permissions, errors.
    Trace(TraceArgs),
    /// Play a scripted agent over standard input and output, for testing
    /// clients: the agent side of a recording, or a script.
    #[command(after_help = MOCK_HELP)]
    Mock(MockArgs),
    /// Serve a stdio agent over the network (WebSocket and Streamable HTTP
    /// on /acp): each client connection gets its own agent process.
    Serve(ServeArgs),
    /// Act as a local stdio agent that forwards to a remote one, for
    /// editors that only start agents as subprocesses (Zed's
    /// `agent_servers`).
    Connect(ConnectArgs),
    /// Put a v1 ↔ v2 bridge in front of a stdio agent: an editor of either
    /// protocol version can then use an agent of either version (answered
    /// in the version the editor asks for, translated when they differ).
    #[command(after_help = BRIDGE_HELP)]
    Bridge(BridgeArgs),
    /// Watch a live connection of an `acp serve` server, read-only: its
    /// traffic as `acp trace` shows it. Without --connection, list the
    /// server's connections.
    Watch(watch::WatchArgs),
    /// Check an agent (or a client) against the protocol: a conformance
    /// suite with a report for people and for CI.
    Check(check::CheckArgs),
    /// Print a completion script for a shell (for example
    /// `acp completions bash > ~/.local/share/bash-completion/completions/acp`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page of acp (roff, for `man -l -`), or write a page
    /// per command into a directory.
    Man {
        /// Write acp.1 and a page per subcommand (acp-exec.1, …) into DIR
        /// instead (for example ~/.local/share/man/man1).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// Arguments of `acp login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The method's id (see the list without it).
    pub method: Option<String>,
    /// The directory to run the agent and its login in (default: the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Give up when the agent does not answer within SECS.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<Duration>,
    /// Copy the agent's standard error to ours.
    #[arg(long, short)]
    pub verbose: bool,
}

const MOCK_HELP: &str = "\
Script commands (one a line, # for comments; JSON on the same line):
    expect METHOD [PARAMS]      wait for the client's METHOD (params must contain PARAMS)
    reply RESULT                answer the latest expected request
    fail CODE [MESSAGE]         answer it with an error
    send update UPDATE          send a session/update for the current session
    send METHOD [PARAMS]        send a notification
    request METHOD PARAMS       send a request and wait for its answer
    answered RESULT | answered error [CODE]
                                check the answer to the last request
    sleep DURATION              250ms, 2s, or milliseconds
    exit [CODE]                 exit at once

Exit codes: 0 as expected, 1 differences (listed on stderr), 2 bad script or recording.";

/// Arguments of `acp mock`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("plan").required(true).args(["trace", "script"])))]
pub struct MockArgs {
    /// Play the agent side of this recording (of `acp record`).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Run this script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Give up when the client sends nothing for this many seconds while
    /// the mock waits for it (default: wait as long as it takes).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

/// The output format of `acp trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// A readable timeline, then a summary.
    Text,
    /// The timeline as one JSON document, for scripts.
    Json,
}

/// Arguments of `acp trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The record file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
    /// Only this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only prompt turn N (of each session, or of --session).
    #[arg(long, value_name = "N")]
    pub turn: Option<u32>,
    /// Write the timeline as one self-contained HTML page to OUT instead.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
}

const BRIDGE_HELP: &str = "\
Put `acp bridge -- AGENT…` where an editor's config names the agent. The bridge
reads the editor's `initialize` and asks the agent in the editor's version:
when both speak it, every byte is passed on unread; a v2 editor with a v1 agent,
or a v1 editor with a v2-only agent, is translated (what the translation loses
is listed in the docs of the `acp` crate's `bridge` module).

With --verbose, the route taken is written to standard error when the bridge
ends: `acp bridge: client v2, agent v1, translated`.";

/// Arguments of `acp bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// Say on standard error which versions each side spoke (when the
    /// bridge ends).
    #[arg(long, short)]
    pub verbose: bool,
    /// The agent's command line.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "AGENT"
    )]
    pub command: Vec<String>,
}

/// Arguments of `acp record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The record file (never overwritten), or a directory for it. Default:
    /// a new file named by the time in `<state dir>/acp/recordings/`. The
    /// path is printed on standard error.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Mask secrets in the record file: values of fields named like *key*,
    /// *token*, *secret* or *password*, MCP servers' env and headers,
    /// authentication `_meta`, and those values (and the proxy's secret
    /// environment variables) wherever they are echoed.
    #[arg(long)]
    pub redact: bool,
    /// The agent's command line.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "AGENT"
    )]
    pub command: Vec<String>,
}

/// Arguments of `acp agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// What to do (default: list the agents).
    #[command(subcommand)]
    pub action: Option<AgentsAction>,
}

/// The subcommands of `acp agents`.
#[derive(Debug, Subcommand)]
pub enum AgentsAction {
    /// List the agents of the ACP registry whose id, name or description
    /// contains TEXT (all without TEXT): how each is distributed and
    /// whether it is added.
    Search {
        /// What to look for (ignoring case).
        #[arg(value_name = "TEXT")]
        text: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
    },
    /// Add an agent of the ACP registry to the config file under its id: a
    /// binary is downloaded into acp's data directory; an npx or uvx
    /// package is fetched by its runner when the agent starts.
    Add {
        /// The agent's id in the registry (see `acp agents search`).
        #[arg(value_name = "ID")]
        id: String,
        /// How to install it, when the registry offers several ways
        /// (default: binary, then npx, then uvx).
        #[arg(long, value_enum, value_name = "KIND")]
        distribution: Option<Distribution>,
    },
    /// Remove an agent added from the registry: its config entry and its
    /// files.
    Remove {
        /// The agent's id.
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Fetch the registry again and move the agents added from it (or only
    /// ID) to their newest version; an old version is removed only once
    /// the new one is in place.
    Update {
        /// Only this agent.
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// Add the custom agents of Zed's settings (`agent_servers`) to the
    /// config file. Agents already configured are left unchanged.
    ImportZed {
        /// Zed's settings file (default: ~/.config/zed/settings.json).
        #[arg(value_name = "PATH")]
        settings: Option<PathBuf>,
    },
}

/// The output format of a listing (`acp agents search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// A table.
    Text,
    /// One JSON array.
    Json,
}

/// How an agent of the registry is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Distribution {
    /// Download this platform's archive.
    Binary,
    /// Run the npm package with npx.
    Npx,
    /// Run the PyPI package with uvx.
    Uvx,
}

/// The output format of `acp exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The agent's reply as plain text; everything else summarised on stderr.
    Text,
    /// Every `session/update` as one JSON object per line, then the result.
    Json,
}

/// Arguments of `acp exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The prompt (several words are joined with spaces); read from
    /// standard input when absent or "-". Words starting with @ that name
    /// files are attached to the prompt.
    pub prompt: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Options shared with `acp chat`.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// Arguments of `acp chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Continue the most recent session acp had in this directory with
    /// this agent.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub resume_last: bool,
    /// Options shared with `acp exec`.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// Options of `acp exec` and `acp chat`: the session, its directories,
/// permissions and authentication.
#[derive(Debug, Default, Args)]
pub struct SessionArgs {
    /// The session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// More directories the session may use (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// Continue this session (session/resume if the agent supports it,
    /// else session/load).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Allow every permission request, file write and command (files of
    /// `.git` and acp's config still need a permission naming them).
    #[arg(long, group = "policy")]
    pub approve_all: bool,
    /// Allow read and search tool calls, deny the rest; nothing is written
    /// and no command runs.
    #[arg(long, group = "policy")]
    pub approve_reads: bool,
    /// Deny every permission request; nothing is written and no command
    /// runs (the default of `acp exec` without a terminal).
    #[arg(long, group = "policy")]
    pub deny_all: bool,
    /// Let the agent read and write files outside the session's directories.
    #[arg(long)]
    pub allow_outside_cwd: bool,
    /// Run the agent's commands unconfined. By default (on Linux with
    /// Landlock) they may write only in the session's directories and the
    /// temporary directory.
    #[arg(long)]
    pub no_sandbox: bool,
    /// Refuse the agent's commands TCP connections and listening (needs the
    /// sandbox).
    #[arg(long, conflicts_with = "no_sandbox")]
    pub no_network: bool,
    /// Log in with this method (an id from the agent's login methods;
    /// `acp login` lists them) before opening the session.
    #[arg(long, value_name = "METHOD")]
    pub auth: Option<String>,
    /// End a turn that runs longer than SECS: it is cancelled, and the
    /// agent stopped if it does not end within 5 s (exit code 124). Also
    /// bounds each request before the turn.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<Duration>,
    /// Switch the session to this mode once it is open (one of the
    /// agent's modes).
    #[arg(long, value_name = "ID")]
    pub mode: Option<String>,
    /// Choose this model once the session is open (a value of the agent's
    /// model config option, or one of the models its selector offers).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// The protocol version to ask the agent for: 1, or 2 (a draft; the
    /// session is shown as a v1 one, through crate acp's v1 ↔ v2 bridge;
    /// an agent that answers 1 is used in v1). Default: the agent's
    /// `protocol` in the config file, else 1.
    #[arg(long, value_name = "1|2", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub protocol: Option<u8>,
    /// Copy the agent's standard error to ours.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Options for agents reached over the network (`--agent URL`, `acp
/// connect`). Credentials are best given by file or environment variable,
/// which other users of the machine cannot read from the process list.
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = "Remote agents")]
pub struct RemoteArgs {
    /// Send this header with every request ("Name: value", repeatable).
    #[arg(long = "header", global = true, value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Send `Authorization: Bearer <token>` with the token in this
    /// environment variable.
    #[arg(long, global = true, value_name = "VAR", conflicts_with = "token_file")]
    pub token_env: Option<String>,
    /// Send `Authorization: Bearer <token>` with the token in this file.
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Trust this PEM certificate (a private CA, or a self-signed server) for
    /// wss:// and https://, besides the system's roots.
    #[arg(long, global = true, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// When the connection breaks, keep trying to resume it for this long
    /// (default 120; never past the time the server keeps it).
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_secs)]
    pub reconnect_for: Option<Duration>,
    /// Do not resume a broken connection: it ends the session.
    #[arg(long, global = true, conflicts_with = "reconnect_for")]
    pub no_reconnect: bool,
}

/// Arguments of `acp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on. A token is required unless it is a
    /// loopback address.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    pub listen: String,
    /// Require `Authorization: Bearer <token>`, the token read from this
    /// file.
    #[arg(long, value_name = "FILE", conflicts_with = "token_env")]
    pub token_file: Option<PathBuf>,
    /// Require `Authorization: Bearer <token>`, the token read from this
    /// environment variable.
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// Serve TLS with this certificate chain (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// How many client connections (each an agent process) may be open at
    /// once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_connections: usize,
    /// Close a connection idle for this many seconds (WebSocket: nothing
    /// from the client, pongs included; HTTP: no stream open, no POST).
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub idle_timeout: u64,
    /// The longest message, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub max_message_size: usize,
    /// How much of an agent's output may wait for its client, in bytes
    /// (past it, a connection whose client is away is closed, and says why).
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub max_buffered_bytes: usize,
    /// Keep a connection's agent this many seconds after its client
    /// vanished, so that the client can resume; 0 stops the agent at once.
    #[arg(long, value_name = "SECONDS", default_value_t = acp::remote::server::DEFAULT_KEEP_SESSIONS.as_secs())]
    pub keep_sessions: u64,
    /// Close a connection whose client takes none of the waiting output for
    /// this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub max_output_stall: u64,
    /// How much of what each connection sent its client is kept to be sent
    /// again after a resume, in bytes (a client that lost more cannot
    /// resume).
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_replay_bytes: usize,
    /// How much of each connection's recent traffic is kept for `acp watch
    /// --from-start`, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
    pub watch_history_bytes: usize,
    /// The log format on standard error.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// The agent's command line, after `--` (for example `-- acp-agent`).
    #[arg(last = true, required = true, value_name = "AGENT COMMAND")]
    pub agent: Vec<String>,
}

/// How `acp serve` writes its logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event with `key=value` fields.
    Text,
    /// One JSON object per event.
    Json,
}

/// Arguments of `acp connect`.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// The agent's URL: ws://, wss://, http:// or https:// (for example
    /// wss://build-box:8765/acp).
    #[arg(value_name = "URL")]
    pub url: String,
}

/// Reads `--timeout`: seconds, fractions allowed, more than 0.
pub fn parse_secs(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("{text:?}: give a number of seconds above 0"));
    }
    Ok(Duration::from_secs_f64(secs))
}

impl Cli {
    /// Parses the process's arguments ([`Cli::parse_args`]); exits with a
    /// message on bad arguments, as clap does.
    pub fn from_env() -> Cli {
        match Cli::parse_args(std::env::args_os()) {
            Ok(cli) => cli,
            Err(e) => e.exit(),
        }
    }

    /// Parses `args` (the program name first) with the default
    /// subcommands: `acp` alone is `acp chat`, and `acp PROMPT…` (or
    /// options of `exec` with no subcommand) is `acp exec PROMPT…`.
    pub fn parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        Cli::try_parse_from(with_default_command(args))
    }
}

/// The global options that take a value (they may come before the
/// subcommand).
const GLOBAL_WITH_VALUE: &[&str] = &[
    "--agent",
    "--config",
    "--header",
    "--token-env",
    "--token-file",
    "--ca-cert",
    "--reconnect-for",
];

/// Inserts `chat` or `exec` where the subcommand would be, if there is
/// none: after the program name and the global options
/// ([`GLOBAL_WITH_VALUE`]). `--help` and `--version` are left alone.
fn with_default_command(mut args: Vec<OsString>) -> Vec<OsString> {
    use clap::CommandFactory;
    let command = Cli::command();
    let subcommands: Vec<String> = command
        .get_subcommands()
        .flat_map(|c| {
            std::iter::once(c.get_name().to_owned()).chain(c.get_all_aliases().map(str::to_owned))
        })
        .chain(std::iter::once("help".to_owned()))
        .collect();
    let exec = command
        .find_subcommand("exec")
        .expect("exec is a subcommand");
    // Options of exec that take a value, with and without dashes.
    let takes_value = |word: &str| -> bool {
        exec.get_arguments().any(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|s| format!("-{s}"));
            (long.as_deref() == Some(word) || short.as_deref() == Some(word))
                && a.get_action().takes_values()
        })
    };
    let exec_only = |word: &str| -> bool {
        let name = word.split('=').next().unwrap_or(word);
        name == "--format"
    };
    let mut at = 1;
    while at < args.len() {
        let word = args[at].to_string_lossy().into_owned();
        let name = word.split('=').next().unwrap_or(&word);
        let global = GLOBAL_WITH_VALUE.contains(&name);
        if global && !word.contains('=') {
            at += 2;
        } else if global {
            at += 1;
        } else {
            break;
        }
    }
    let rest: Vec<String> = args[at.min(args.len())..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(first) = rest.first() else {
        args.push("chat".into());
        return args;
    };
    if subcommands.iter().any(|s| s == first)
        || ["-h", "--help", "-V", "--version"].contains(&first.as_str())
    {
        return args;
    }
    // A word that is not an option's value is a prompt: exec.
    let mut i = 0;
    let mut exec_wanted = false;
    while i < rest.len() {
        let word = &rest[i];
        if word == "--" || word == "-" || !word.starts_with('-') {
            exec_wanted = true;
            break;
        }
        if exec_only(word) {
            exec_wanted = true;
        }
        i += if takes_value(word) { 2 } else { 1 };
    }
    let sub = if exec_wanted { "exec" } else { "chat" };
    args.insert(at.min(args.len()), sub.into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Cli {
        Cli::parse_args(std::iter::once("acp").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn default_subcommands() {
        assert!(matches!(parsed(&[]).command, Command::Chat(_)));
        assert!(matches!(
            parsed(&["--agent", "x"]).command,
            Command::Chat(_)
        ));
        assert!(matches!(
            parsed(&["--approve-all"]).command,
            Command::Chat(_)
        ));
        let Command::Exec(exec) = parsed(&["fix", "the", "tests"]).command else {
            panic!("not exec")
        };
        assert_eq!(exec.prompt, ["fix", "the", "tests"]);
        let cli = parsed(&["--agent", "a b", "--timeout", "5", "hello"]);
        assert_eq!(cli.agent.as_deref(), Some("a b"));
        let Command::Exec(exec) = cli.command else {
            panic!("not exec")
        };
        assert_eq!(exec.prompt, ["hello"]);
        assert_eq!(exec.session.timeout, Some(Duration::from_secs(5)));
        // --format belongs to exec: the prompt then comes from stdin.
        assert!(matches!(
            parsed(&["--format", "json"]).command,
            Command::Exec(_)
        ));
        assert!(matches!(parsed(&["-"]).command, Command::Exec(_)));
        // Subcommands stay as they are.
        assert!(matches!(parsed(&["agents"]).command, Command::Agents(_)));
        assert!(matches!(
            parsed(&["chat", "--continue"]).command,
            Command::Chat(_)
        ));
        // A word that is an option's value is not a prompt.
        assert!(matches!(
            parsed(&["--cwd", "/tmp"]).command,
            Command::Chat(_)
        ));
        let cli = parsed(&["--reconnect-for", "30", "hello"]);
        assert_eq!(cli.remote.reconnect_for, Some(Duration::from_secs(30)));
        assert!(matches!(cli.command, Command::Exec(_)));
        assert!(matches!(
            parsed(&["--reconnect-for", "30"]).command,
            Command::Chat(_)
        ));
        assert!(Cli::parse_args(["acp", "--no-reconnect", "--reconnect-for", "3", "x"]).is_err());
    }

    #[test]
    fn timeouts_are_positive_seconds() {
        assert_eq!(parse_secs("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("-1").is_err());
        assert!(parse_secs("soon").is_err());
        assert!(parse_secs("inf").is_err());
    }
}
