//! `acp serve`: any stdio agent, reachable over the network.
//!
//! Each client connection gets its own agent process (started with
//! [`AgentCommand::spawn_stdio`]); when the connection ends or idles out, the
//! agent's input is closed and its whole process group is stopped. Logs go
//! to standard error, one event per line (`--log-format json` for JSON), with
//! the connection's id on each. Each connection's agent is labelled with its
//! command line, which operators see in `GET /connections` and `acp watch`.

use crate::cli::{LogFormat, ServeArgs};
use crate::config::remote::read_token;
use crate::exit::{self, Failure};
use acp::AgentCommand;
use acp::remote::server::{ConnectionInfo, Server, ServerOptions, Upstream};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

/// The process groups of the agents running now, so that none outlives
/// `acp serve`.
type Groups = Arc<Mutex<HashSet<i32>>>;

/// An agent process of one connection. The child's own drop stops its group
/// (after the grace period); the group is forgotten only once it is gone, so
/// that a shutdown still finds the groups that are on their way out.
struct Tracked {
    child: acp::AgentChild,
    groups: Groups,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let group = self.child.process_group();
        let groups = Arc::clone(&self.groups);
        let forget = move || {
            while killpg(Pid::from_raw(group), None).is_ok() {
                std::thread::sleep(Duration::from_millis(50));
            }
            groups
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&group);
        };
        if std::thread::Builder::new()
            .name("acp-serve-group".to_owned())
            .spawn(forget)
            .is_err()
        {
            let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
        }
    }
}

/// Runs `acp serve` until SIGINT or SIGTERM.
pub async fn run(args: ServeArgs) -> Result<u8, Failure> {
    init_logs(args.log_format);
    let addr: SocketAddr = args.listen.parse().map_err(|e| {
        Failure::usage(format!(
            "bad --listen {:?}: {e} (write an address and port, such as 127.0.0.1:8765 or [::]:8765)",
            args.listen
        ))
    })?;
    let token = match (&args.token_file, &args.token_env) {
        (Some(file), _) => Some(read_token(file)?),
        (None, Some(var)) => {
            let token = std::env::var(var).map_err(|_| {
                Failure::usage(format!(
                    "--token-env {var}: the environment variable is not set"
                ))
            })?;
            if token.trim().is_empty() {
                return Err(Failure::usage(format!(
                    "--token-env {var}: the variable is empty"
                )));
            }
            Some(token.trim().to_owned())
        }
        (None, None) => None,
    };
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(Failure::usage(format!(
            "refusing to serve on {addr} without a token: anyone who can reach it could run the agent. \
             Give one with --token-file or --token-env (a token is optional only on a loopback address)"
        )));
    }
    let mut options = ServerOptions::default()
        .max_connections(args.max_connections)
        .idle_timeout(Duration::from_secs(args.idle_timeout.max(1)))
        .max_message_size(args.max_message_size)
        .max_buffered_bytes(args.max_buffered_bytes)
        .keep_sessions(Duration::from_secs(args.keep_sessions))
        .max_output_stall(Duration::from_secs(args.max_output_stall.max(1)))
        .max_replay_bytes(args.max_replay_bytes)
        .watch_history_bytes(args.watch_history_bytes);
    if let Some(token) = token {
        options = options.token(token);
    }
    let secure = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let chain = acp::remote::tls::load_certificates(cert)
                .map_err(|e| Failure::usage(format!("--tls-cert: {e}")))?;
            let key = acp::remote::tls::load_private_key(key)
                .map_err(|e| Failure::usage(format!("--tls-key: {e}")))?;
            let config = acp::remote::tls::server_config(chain, key)
                .map_err(|e| Failure::usage(e.to_string()))?;
            options = options.tls(config);
            true
        }
        _ => false,
    };
    let (program, agent_args) = args
        .agent
        .split_first()
        .ok_or_else(|| Failure::usage("name the agent's command after --"))?;
    let (program, agent_args) = (program.clone(), agent_args.to_vec());
    // What operators see as the agent of each connection (`GET /connections`).
    let label = args
        .agent
        .iter()
        .map(|word| crate::config::shell_quote(word))
        .collect::<Vec<_>>()
        .join(" ");
    let groups = Groups::default();
    let connector_groups = Arc::clone(&groups);
    let server = Server::new(options, move |info: &ConnectionInfo| {
        let id = info.id.clone();
        let (child, transport) = AgentCommand::new(&program)
            .args(&agent_args)
            .on_stderr(move |line| {
                tracing::info!(target: "acp::agent_stderr", connection = %id, "{line}");
            })
            .spawn_stdio()?;
        connector_groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(child.process_group());
        let tracked = Tracked {
            child,
            groups: Arc::clone(&connector_groups),
        };
        Ok(Upstream::new(transport)
            .owned_by(tracked)
            .label(label.clone()))
    });
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| Failure::agent(format!("cannot listen on {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Failure::agent(format!("cannot listen on {addr}: {e}")))?;
    let scheme = if secure { "wss" } else { "ws" };
    // The one line on standard output: where to connect (tests and scripts
    // read it, for --listen 127.0.0.1:0 in particular).
    println!("acp serve: listening on {scheme}://{local}/acp");
    let stop = server.shutdown_token();
    let mut interrupt = signal(SignalKind::interrupt())
        .map_err(|e| Failure::agent(format!("cannot watch for signals: {e}")))?;
    let mut terminate = signal(SignalKind::terminate())
        .map_err(|e| Failure::agent(format!("cannot watch for signals: {e}")))?;
    let serving = tokio::spawn(server.serve(listener));
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!(target: "acp::remote", "shutting down");
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), serving).await;
    stop_remaining(&groups);
    Ok(exit::OK)
}

/// Stops every agent group still there: each gets the grace period to exit
/// on its own (its input is closed), then SIGTERM, then SIGKILL after
/// another.
fn stop_remaining(groups: &Groups) {
    let alive = || -> Vec<i32> {
        groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .copied()
            .filter(|&g| killpg(Pid::from_raw(g), None).is_ok())
            .collect()
    };
    let deadline = Instant::now() + acp::process::DEFAULT_KILL_GRACE;
    while Instant::now() < deadline && !alive().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        let deadline = Instant::now() + acp::process::DEFAULT_KILL_GRACE;
        let left: Vec<i32> = groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .copied()
            .filter(|&g| killpg(Pid::from_raw(g), None).is_ok())
            .collect();
        if left.is_empty() {
            return;
        }
        for group in &left {
            let _ = killpg(Pid::from_raw(*group), signal);
        }
        while Instant::now() < deadline
            && left.iter().any(|&g| killpg(Pid::from_raw(g), None).is_ok())
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ACP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
