//! Benchmark of the `acp` runtime over real OS pipes, against a floor.
//!
//! ```text
//! cargo run --release -p acp-bench                  # everything, 5 runs each (W3: 25)
//! cargo run --release -p acp-bench -- --quick       # a tenth of the sizes, 1 run
//! cargo run --release -p acp-bench -- --only W2,W3 --runs 9
//! ```
//!
//! The driver (`acp-bench`) starts one client process per run (itself, with
//! `--client acp|floor --spec …`), which starts the agent process
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
//! The **floor** for each workload moves the same JSON lines (same shapes,
//! serialised from the same `acp::schema` types with serde_json into a
//! 64 KiB `BufWriter`) between the same two binaries over the same pipes, and
//! parses each line in one pass with serde_json into the same typed structs
//! (not `serde_json::Value`, which would be slower and a softer floor). It
//! has no RPC machinery: no tasks, channels, id table or async I/O; it knows
//! the sequence of messages in advance. Request/response pairs are a line
//! written, flushed, and a line read; for W3 a second agent thread writes all
//! requests while the main thread reads all responses (with one thread, both
//! 64 KiB pipes would fill up and deadlock).
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
pub mod spec;
pub mod sys;
pub mod wire;

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
