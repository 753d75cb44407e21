//! `acp check agent` and `acp check client`: the conformance suite of crate
//! `acp_check`, on the command line. This module only parses options, runs
//! the suite and writes the report.

use crate::exit::Failure;
use acp_check::agent::{self, AgentOptions};
use acp_check::client::{self, ClientOptions};
use acp_check::{Filters, Report};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

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
    /// Authenticate with this auth method (an id the agent advertises).
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
    /// How long a request may take, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    /// How soon after `session/cancel` the turn must end, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub cancel_within: f64,
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
    /// start the agent and to send its prompt, in seconds.
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

fn seconds(value: f64, name: &str) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Failure::usage(format!("{name} must be a positive number of seconds")))
}

fn filters(common: &CommonArgs) -> Result<Filters, Failure> {
    let baseline = match &common.baseline {
        None => Default::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Failure::usage(format!("cannot read the baseline {}: {e}", path.display()))
            })?;
            Filters::parse_baseline(&text)
        }
    };
    Ok(Filters {
        only: common.only.clone(),
        skip: common.skip.clone(),
        expect: common.expect.iter().cloned().collect(),
        baseline,
    })
}

/// Runs `acp check`.
pub async fn run(args: CheckArgs) -> Result<u8, Failure> {
    match args.side {
        CheckSide::Agent(args) => run_agent(args).await,
        CheckSide::Client(args) => run_client(args).await,
        CheckSide::Relay { socket } => {
            let relayed = tokio::task::spawn_blocking(move || client::relay::run(&socket))
                .await
                .map_err(|e| Failure::agent(format!("the relay stopped: {e}")))?;
            relayed.map_err(|e| Failure::agent(e.to_string()))?;
            Ok(crate::exit::OK)
        }
    }
}

async fn run_agent(args: AgentCheckArgs) -> Result<u8, Failure> {
    if args.common.list {
        print!("{}", acp_check::catalog::markdown(agent::CHECKS));
        return Ok(crate::exit::OK);
    }
    if args.command.is_empty() {
        return Err(Failure::usage(
            "acp check agent takes the agent's command line after --: acp check agent -- AGENT [ARGS…]",
        ));
    }
    let mut opts = AgentOptions::new(args.command.clone());
    opts.auth = args.auth.clone();
    if !args.prompt.is_empty() {
        opts.prompts = args.prompt.clone();
    }
    if let Some(p) = &args.cancel_prompt {
        opts.cancel_prompt = p.clone();
    }
    opts.timeout = seconds(args.timeout, "--timeout")?;
    opts.cancel_within = seconds(args.cancel_within, "--cancel-within")?;
    opts.trace = args.common.trace.clone();
    opts.filters = filters(&args.common)?;
    let report = agent::run(opts)
        .await
        .map_err(|e| Failure::usage(format!("cannot run the checks: {e}")))?;
    write_report(&report, &args.common)
}

async fn run_client(args: ClientCheckArgs) -> Result<u8, Failure> {
    if args.common.list {
        print!("{}", acp_check::catalog::markdown(client::CHECKS));
        return Ok(crate::exit::OK);
    }
    if args.command.is_empty() {
        return Err(Failure::usage(
            "acp check client takes the client's command line after --: acp check client -- CLIENT … {agent} …",
        ));
    }
    let exe = std::env::current_exe()
        .map_err(|e| Failure::usage(format!("cannot find the acp executable: {e}")))?;
    let relay = vec![
        exe.display().to_string(),
        "check".to_string(),
        "__agent".to_string(),
    ];
    let mut opts = ClientOptions::new(args.command.clone(), relay);
    client::substitute(&opts.command, "agent").map_err(|e| Failure::usage(e.to_string()))?;
    opts.timeout = seconds(args.timeout, "--timeout")?;
    opts.cancel_within = seconds(args.cancel_within, "--cancel-within")?;
    opts.interrupt = !args.no_interrupt;
    opts.trace = args.common.trace.clone();
    opts.filters = filters(&args.common)?;
    let report = client::run(opts)
        .await
        .map_err(|e| Failure::usage(format!("cannot run the checks: {e}")))?;
    write_report(&report, &args.common)
}

fn write_report(report: &Report, common: &CommonArgs) -> Result<u8, Failure> {
    match common.format {
        ReportFormat::Text => print!("{}", report.text()),
        ReportFormat::Json => println!("{}", report.json()),
    }
    if let Some(path) = &common.junit {
        std::fs::write(path, report.junit()).map_err(|e| {
            Failure::new(
                crate::exit::AGENT_ERROR,
                format!("cannot write {}: {e}", path.display()),
            )
        })?;
    }
    Ok(if report.ok() {
        crate::exit::OK
    } else {
        crate::exit::AGENT_ERROR
    })
}
