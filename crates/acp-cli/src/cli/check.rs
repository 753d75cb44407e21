//! The arguments of `acp check`.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Arguments of `acp check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Which side to check.
    #[command(subcommand)]
    pub side: CheckSide,
}

/// The subcommands of `acp check`.
#[derive(Debug, Subcommand)]
pub enum CheckSide {
    /// Judge an agent through a full life: `acp check agent -- AGENT [ARGS…]`.
    Agent(AgentCheckArgs),
    /// Judge a client through one prompt turn: `acp check client --
    /// CLIENT … {agent} …` (`{agent}` is replaced by the checking agent's
    /// command).
    Client(ClientCheckArgs),
    /// The checking agent of `acp check client` (started by the client under
    /// test through `{agent}`): relays its stdin and stdout to the judge.
    #[command(name = "__agent", hide = true)]
    Relay {
        /// The judge's socket.
        socket: PathBuf,
    },
}

/// How the report is written on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One line per check, grouped by area, and the counts.
    Text,
    /// One JSON document.
    Json,
}

/// Options of every `acp check`.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// How the report is written on standard output.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Also write the report as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Features the peer claims (comma-separated, for example
    /// `load,modes,tools`): a skipped check of one of them fails.
    #[arg(long, value_name = "FEATURES", value_delimiter = ',')]
    pub expect: Vec<String>,
    /// Known failures, one check name a line (`#` comments): they are
    /// reported but do not fail the run; entries that pass are pointed out.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Run only the checks whose name starts with one of these (repeatable,
    /// comma-separated).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Do not run the checks whose name starts with one of these.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Write every line exchanged to FILE (JSON lines: wire, dir, ms, line).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Print the checks (name, feature, rule, docs) and exit.
    #[arg(long)]
    pub list: bool,
}

/// Arguments of `acp check agent`.
#[derive(Debug, Args)]
pub struct AgentCheckArgs {
    /// The options of every `acp check`.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Authenticate with this auth method (an id the agent advertises;
    /// `auth/login` with `--protocol 2`).
    #[arg(long, value_name = "METHOD")]
    pub auth: Option<String>,
    /// What the agent is asked in the ordinary turns (repeatable; one turn
    /// each). `{workspace}` stands for the temporary workspace's path.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Vec<String>,
    /// What the agent is asked in the turn to be cancelled: something that
    /// keeps it busy for a few seconds.
    #[arg(long, value_name = "TEXT")]
    pub cancel_prompt: Option<String>,
    /// How long a request may take, in seconds. An agent that leaves one
    /// unanswered this long has stopped answering: the checks that need it
    /// later are NOT TESTED at once.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    /// How soon after `session/cancel` the turn must end, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub cancel_within: f64,
    /// The protocol version to judge the agent in: 1, or 2 (a draft; its
    /// own requirements, `v2.*`).
    #[arg(long, value_name = "VERSION", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub protocol: u8,
    /// The agent's command line.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "AGENT"
    )]
    pub command: Vec<String>,
}

/// Arguments of `acp check client`.
#[derive(Debug, Args)]
#[command(after_help = CLIENT_HELP)]
pub struct ClientCheckArgs {
    /// The options of every `acp check`.
    #[command(flatten)]
    pub common: CommonArgs,
    /// How long each request may take, and how long the client may take to
    /// start the agent and to send its prompt, in seconds. A client that
    /// leaves a request unanswered this long has stopped answering: later
    /// requests wait 1 s at most, and their checks are NOT TESTED.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
    /// How soon after the interrupt the client must send `session/cancel`,
    /// in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub cancel_within: f64,
    /// Do not send SIGINT to the client at the end of the turn; wait for a
    /// person to cancel it instead (an interactive client's stop button).
    #[arg(long)]
    pub no_interrupt: bool,
    /// The protocol version to judge the client in: 1, or 2 (a draft: the
    /// checking agent answers a client asking for 2 as a v2 agent, `v2.*`).
    #[arg(long, value_name = "VERSION", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub protocol: u8,
    /// The client's command line, with `{agent}` where it takes the agent's
    /// command.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CLIENT"
    )]
    pub command: Vec<String>,
}

const CLIENT_HELP: &str = "\
{agent} is replaced by the path of a script that runs the checking agent: as a whole word
as it is, inside a longer word shell-quoted. The client runs in a temporary directory
(its workspace); everything happens in its first prompt turn, so a headless client needs
a prompt on its command line and an interactive one needs one prompt typed:

    acp check client -- acp exec --agent {agent} --approve-all hello";
