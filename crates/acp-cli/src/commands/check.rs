//! `acp check agent` and `acp check client`: the conformance suite of crate
//! `acp_check`, on the command line. This module only checks options
//! ([`crate::cli::check`]), runs the suite and writes the report.

use crate::cli::check::{
    AgentCheckArgs, CheckArgs, CheckSide, ClientCheckArgs, CommonArgs, ReportFormat,
};
use crate::exit::Failure;
use acp_check::agent::{self, AgentOptions};
use acp_check::client::{self, ClientOptions};
use acp_check::{CheckResult, Filters, Report};
use std::time::Duration;

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
    if args.common.list && args.protocol == 2 {
        print!("{}", acp_check::catalog::markdown(agent::v2::V2_CHECKS));
        return Ok(crate::exit::OK);
    }
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
    let report = match args.protocol {
        2 => agent::v2::run_with(opts, &mut progress).await,
        _ => agent::run_with(opts, &mut progress).await,
    };
    let report = report.map_err(|e| Failure::usage(format!("cannot run the checks: {e}")))?;
    write_report(&report, &args.common)
}

async fn run_client(args: ClientCheckArgs) -> Result<u8, Failure> {
    if args.common.list && args.protocol == 2 {
        print!(
            "{}",
            acp_check::catalog::markdown(client::v2::V2_CLIENT_CHECKS)
        );
        return Ok(crate::exit::OK);
    }
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
    let report = match args.protocol {
        2 => client::v2::run_with(opts, &mut progress).await,
        _ => client::run_with(opts, &mut progress).await,
    };
    let report = report.map_err(|e| Failure::usage(format!("cannot run the checks: {e}")))?;
    write_report(&report, &args.common)
}

/// Each result on stderr as soon as it is decided, so a long run shows its
/// progress; the report proper goes to stdout at the end.
fn progress(result: &CheckResult) {
    use std::io::Write as _;
    let text = result.text();
    let line = format!("[{}] {}", result.tier.as_str(), text.trim_start());
    let _ = std::io::stderr().write_all(line.as_bytes());
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
