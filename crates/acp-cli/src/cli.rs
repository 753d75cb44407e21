//! Command-line arguments.

use crate::render::Format;
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
    #[arg(long, global = true, value_name = "NAME|COMMAND")]
    pub agent: Option<String>,
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
    /// List the agents of the config file, or import Zed's.
    Agents(AgentsArgs),
    /// Log in to the agent: run its login in this terminal (a terminal
    /// method) or ask it to log in (`authenticate`). Without METHOD, list
    /// the agent's methods and ask which.
    Login(LoginArgs),
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
    /// Add the custom agents of Zed's settings (`agent_servers`) to the
    /// config file. Agents already configured are left unchanged.
    ImportZed {
        /// Zed's settings file (default: ~/.config/zed/settings.json).
        #[arg(value_name = "PATH")]
        settings: Option<PathBuf>,
    },
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
    /// model option).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// Copy the agent's standard error to ours.
    #[arg(long, short)]
    pub verbose: bool,
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

/// Inserts `chat` or `exec` where the subcommand would be, if there is
/// none: after the program name and the global options (`--agent V`,
/// `--config V`). `--help` and `--version` are left alone.
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
        if word == "--agent" || word == "--config" {
            at += 2;
        } else if word.starts_with("--agent=") || word.starts_with("--config=") {
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
