//! Command-line arguments.

use crate::render::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// acp: a terminal client for the Agent Client Protocol.
#[derive(Debug, Parser)]
#[command(name = "acp", version, about, propagate_version = true)]
pub struct Cli {
    /// The agent: a name from the config file, or a command line such as
    /// "npx -y @zed-industries/claude-code-acp". Default: the config's
    /// default_agent, else acp-agent.
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
    /// Options shared with `acp exec`.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// Options of `acp exec` and `acp chat`: the session, its directories,
/// permissions and authentication.
#[derive(Debug, Args)]
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
    /// Allow every permission request.
    #[arg(long, group = "policy")]
    pub approve_all: bool,
    /// Allow read and search tool calls, deny the rest.
    #[arg(long, group = "policy")]
    pub approve_reads: bool,
    /// Deny every permission request (the default of `acp exec` without a
    /// terminal).
    #[arg(long, group = "policy")]
    pub deny_all: bool,
    /// Let the agent read and write files outside the session's directories.
    #[arg(long)]
    pub allow_outside_cwd: bool,
    /// Authenticate with this method (an id from the agent's auth methods)
    /// before opening the session.
    #[arg(long, value_name = "METHOD")]
    pub auth: Option<String>,
    /// Copy the agent's standard error to ours.
    #[arg(long, short)]
    pub verbose: bool,
}
