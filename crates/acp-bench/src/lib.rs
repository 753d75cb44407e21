//! Benchmark of the `acp` runtime over real OS pipes, against a floor.
//!
//! ```text
//! cargo run --release -p acp-bench                  # everything, 5 runs each (W3: 25)
//! cargo run --release -p acp-bench -- --quick       # a tenth of the sizes, 1 run
//! cargo run --release -p acp-bench -- --only W2,W3 --runs 9
//! cargo run --release -p acp-bench -- --no-peers    # without the official SDKs
//! ```
//!
//! The driver (`acp-bench`) starts one client process per run (itself, with
//! `--client acp|floor|tokio-floor --spec …`), which starts the agent process
//! (`acp-bench-agent`, next to the driver) over pipes. A fresh pair of
//! processes per run keeps CPU time and peak RSS per run. Under `cargo run`,
//! the driver first runs `cargo build` for the agent binary, so the agent is
//! never stale (`cargo run` only builds the binary it runs).
//!
//! Workloads, each inside one prompt turn (see [`spec::Spec::full`]):
//!
//! - **W1 stream**: 200,000 `agent_message_chunk` notifications of 40 bytes.
//! - **W2 rpc**: 50,000 sequential `fs/read_text_file` round trips on a
//!   100-byte file; p50/p99 per round trip measured in the agent.
//! - **W3 concurrent**: 10,000 `fs/read_text_file` requests in flight at once.
//! - **W4 large**: one 50 MiB `fs/write_text_file`, one 10 MiB `session/update`.
//!
//! The **floor** ([`floor`]) for each workload moves the same JSON lines
//! between the same two binaries over the same pipes, with code that shares
//! nothing with `acp` or `acp-schema`: its own small message structs,
//! serialised with serde_json in the runtime's field order, and each line
//! parsed in one pass into minimal borrowed structs (method, id and the few
//! fields it needs). It has no RPC machinery and knows the sequence of
//! messages in advance. So the ratios show everything the runtime adds,
//! typed decoding of whole messages included. The **tokio-floor** row is the
//! same floor waiting on its pipes in Tokio's reactor ([`floor::Io::Tokio`]),
//! which tells what any Tokio program pays for its I/O apart from what the
//! runtime adds.
//!
//! The **official SDKs** ([`peers`]) run the same workloads side by side:
//! the official Rust SDK (crate `agent-client-protocol`) and the official
//! TypeScript SDK (`@agentclientprotocol/sdk`), each its own client driving
//! its own agent, with the same checks of what was received. Their glue is
//! in `crates/acp-bench/peers`, outside the workspace; the driver builds or
//! installs it on demand, and a peer that cannot be built or run is skipped
//! with a loud line (`--no-peers` leaves them out).
//!
//! Every run (client and agent) is pinned to one CPU, CPU 0 unless `--cpu`
//! says otherwise, so the ratios compare like with like.
//!
//! Environment knobs for experiments (inherited by the client and agent
//! processes; the defaults are what an agent or client gets out of the box):
//!
//! - `ACP_BENCH_RUNTIME=current`: single-threaded Tokio runtimes in both ACP
//!   processes (default: multi-threaded, one worker per core).
//! - `ACP_BENCH_OUTGOING_QUEUE=BYTES`, `ACP_BENCH_NOTIFICATION_QUEUE=JOBS`: the
//!   [`acp::ConnectionOptions`] queue sizes on both sides.
#![deny(missing_docs)]

pub mod agent;
pub mod client;
pub mod driver;
pub mod floor;
pub mod peers;
pub mod remote;
pub mod spec;
pub mod sys;

/// Buffer size of the floor's readers and writers, the same as the runtime's.
pub const BUFFER: usize = 64 * 1024;

/// The connection options both ACP processes use: the defaults, unless the
/// queue-size knobs are set.
pub fn connection_options() -> acp::ConnectionOptions {
    let knob = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    let mut options = acp::ConnectionOptions::default();
    if let Some(n) = knob("ACP_BENCH_OUTGOING_QUEUE") {
        options = options.outgoing_queue(n);
    }
    if let Some(n) = knob("ACP_BENCH_NOTIFICATION_QUEUE") {
        options = options.notification_queue(n);
    }
    options
}

/// The Tokio runtime both ACP processes run on: multi-threaded unless
/// `ACP_BENCH_RUNTIME=current`.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let current = std::env::var("ACP_BENCH_RUNTIME").is_ok_and(|v| v == "current");
    let mut builder = if current {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    builder.enable_all().build()
}
