//! `acp-record-bench`: what `acp record` costs. A W1-style stream (one
//! prompt turn of 200,000 `session/update` lines of 40-byte message chunks)
//! goes from an agent to a client directly, and through `acp record` (and
//! `acp record --redact`), over real pipes; the table compares the turn's
//! wall time.
//!
//! ```text
//! cargo run --release -p acp-bench --bin acp-record-bench             # 7 runs a row
//! cargo run --release -p acp-bench --bin acp-record-bench -- --runs 11 --count 50000
//! ```
//!
//! Everything runs pinned to CPU 0 (the benchmark re-runs itself under
//! `taskset -c 0`; `--no-pin` does not), so the proxy's work shows in full
//! rather than hiding on a second core. The agent and the client are this
//! same program (`--agent`, and the driver itself) and do as little as
//! they can: the agent writes one precomputed line over and over through a
//! 64 KiB buffer; the client counts newlines. So the ratio is the
//! proxy's cost against a floor, not against a real agent and client,
//! which would both do far more work per line. The `acp` binary is the one
//! beside this program (under `cargo run` it is built first, with the same
//! profile), or `ACP_BIN`.
//!
//! The timed window is the prompt turn: from just before the client writes
//! `session/prompt` to when it has read the answer. Starting the
//! processes, `initialize` and `session/new` are outside it. Runs of the
//! three paths are interleaved, so drift in the machine's load hits all
//! alike; the table shows medians.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: acp-record-bench [--runs N] [--count N] [--bytes N] [--no-pin]

  --runs N    runs per path (default 7)
  --count N   session/update lines in the turn (default 200000)
  --bytes N   text bytes per message chunk (default 40)
  --no-pin    do not pin everything to CPU 0 with taskset

Prints a Markdown table on standard output; progress goes to standard error.";

const PINNED: &str = "ACP_RECORD_BENCH_PINNED";
const SESSION: &str = "bench-1";

struct Options {
    runs: usize,
    count: usize,
    bytes: usize,
    pin: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        runs: 7,
        count: 200_000,
        bytes: 40,
        pin: true,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next()
                .ok_or(format!("{name} needs a value"))?
                .parse()
                .map_err(|e| format!("{name}: {e}"))
        };
        match arg.as_str() {
            "--runs" => options.runs = number("--runs")?.max(1),
            "--count" => options.count = number("--count")?,
            "--bytes" => options.bytes = number("--bytes")?,
            "--no-pin" => options.pin = false,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--agent") {
        return match agent(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("acp-record-bench agent: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match parse_args(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("acp-record-bench: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if options.pin && std::env::var_os(PINNED).is_none() {
        use std::os::unix::process::CommandExt;
        let exe = std::env::current_exe().expect("the running executable");
        let error = Command::new("taskset")
            .args(["-c", "0"])
            .arg(exe)
            .args(&args)
            .env(PINNED, "1")
            .exec();
        eprintln!("acp-record-bench: cannot run under taskset ({error}); use --no-pin");
        return ExitCode::FAILURE;
    }
    match bench(&options) {
        Ok(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("acp-record-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------
// The agent: answers initialize and session/new, then streams the turn.

fn agent(args: &[String]) -> io::Result<()> {
    let number = |i: usize| -> io::Result<usize> {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| io::Error::other("usage: --agent COUNT BYTES"))
    };
    let (count, bytes) = (number(0)?, number(1)?);
    let text: String = "the quick brown fox jumps over the lazy dog "
        .chars()
        .cycle()
        .take(bytes)
        .collect();
    let update = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"{SESSION}\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"{text}\"}}}}}}}}\n"
    );
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let id = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| Some((v.get("id")?.clone(), v.get("method")?.as_str()?.to_owned())));
        let Some((id, method)) = id else { continue };
        let result = match method.as_str() {
            "initialize" => serde_json::json!({"protocolVersion": 1, "agentCapabilities": {}}),
            "session/new" => serde_json::json!({"sessionId": SESSION}),
            "session/prompt" => {
                for _ in 0..count {
                    out.write_all(update.as_bytes())?;
                }
                serde_json::json!({"stopReason": "end_turn"})
            }
            _ => serde_json::json!({}),
        };
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
}

// ---------------------------------------------------------------------------
// The driver, which is also the client.

#[derive(Clone, Copy, PartialEq)]
enum Path3 {
    Direct,
    Record,
    Redact,
}

impl Path3 {
    fn name(self) -> &'static str {
        match self {
            Path3::Direct => "direct",
            Path3::Record => "acp record",
            Path3::Redact => "acp record --redact",
        }
    }
}

struct Run {
    wall: Duration,
    /// From the prompt until the agent side has exited (the proxy exits
    /// once the record file is complete).
    until_exit: Duration,
    /// CPU time of the agent side (agent, and the proxy when there is one).
    cpu: Duration,
    wire_bytes: u64,
    record_bytes: u64,
}

fn cpu_children() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(Duration::ZERO, |u| {
        let t = |tv: nix::sys::time::TimeVal| {
            Duration::from_secs(tv.tv_sec() as u64) + Duration::from_micros(tv.tv_usec() as u64)
        };
        t(u.user_time()) + t(u.system_time())
    })
}

/// The `acp` binary: `ACP_BIN`, else beside this program (built first under
/// `cargo run`).
fn acp_binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("ACP_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("the executable has no directory")?;
    let acp = dir.join("acp");
    if let Ok(cargo) = std::env::var("CARGO") {
        let profile = dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "-p", "acp-cli", "--bin", "acp"]);
        match profile {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        eprintln!("acp-record-bench: building acp ({profile})");
        let status = build.status().map_err(|e| format!("cargo build: {e}"))?;
        if !status.success() {
            return Err(format!("building acp failed: {status}"));
        }
    }
    if !acp.exists() {
        return Err(format!(
            "{} not found: build it (cargo build --release -p acp-cli) or set ACP_BIN",
            acp.display()
        ));
    }
    Ok(acp)
}

fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<()> {
    line.clear();
    if input.read_until(b'\n', line)? == 0 {
        return Err(io::Error::other("the agent closed its output"));
    }
    Ok(())
}

fn run_once(
    path: Path3,
    options: &Options,
    acp: &Path,
    dir: &Path,
    n: usize,
) -> Result<Run, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let record = dir.join(format!("run-{n}.jsonl"));
    let mut command = match path {
        Path3::Direct => Command::new(&me),
        Path3::Record | Path3::Redact => {
            let mut c = Command::new(acp);
            c.arg("record");
            if path == Path3::Redact {
                c.arg("--redact");
            }
            c.arg("-o").arg(&record).arg("--").arg(&me);
            c
        }
    };
    let mut child = command
        .args([
            "--agent",
            &options.count.to_string(),
            &options.bytes.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", path.name()))?;
    let mut to_agent = child.stdin.take().expect("piped");
    let mut input = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped"));
    let mut line = Vec::new();
    let e = |e: io::Error| e.to_string();
    for request in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    ] {
        writeln!(to_agent, "{request}").map_err(e)?;
        read_line(&mut input, &mut line).map_err(e)?;
    }
    let cpu_before = cpu_children();
    let started = Instant::now();
    let prompt = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{SESSION}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"go\"}}]}}}}\n"
    );
    to_agent.write_all(prompt.as_bytes()).map_err(e)?;
    let mut wire_bytes = prompt.len() as u64;
    // Count newlines until the answer's line (the last one) is in.
    let mut chunk = vec![0u8; 64 * 1024];
    let mut lines = 0usize;
    let mut reader = input.into_inner();
    let mut tail = Vec::new();
    while lines < options.count + 1 {
        let got = reader.read(&mut chunk).map_err(e)?;
        if got == 0 {
            return Err(format!(
                "{}: the stream ended after {lines} lines",
                path.name()
            ));
        }
        wire_bytes += got as u64;
        lines += memchr::memchr_iter(b'\n', &chunk[..got]).count();
        tail.extend_from_slice(&chunk[..got]);
        if tail.len() > 4096 {
            tail.drain(..tail.len() - 4096);
        }
    }
    let wall = started.elapsed();
    let last = tail.rsplit(|&b| b == b'\n').nth(1).unwrap_or_default();
    if !last.starts_with(br#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#) {
        return Err(format!(
            "{}: unexpected last line {:?}",
            path.name(),
            String::from_utf8_lossy(last)
        ));
    }
    drop(to_agent);
    let status = child.wait().map_err(e)?;
    let until_exit = started.elapsed();
    if !status.success() {
        return Err(format!("{} exited with {status}", path.name()));
    }
    let cpu = cpu_children().saturating_sub(cpu_before);
    let record_bytes = match path {
        Path3::Direct => 0,
        _ => {
            let text = std::fs::read(&record).map_err(|e| format!("reading the record: {e}"))?;
            let records = memchr::memchr_iter(b'\n', &text).count();
            // Header, 2 + 1 client lines, 2 + count + 1 agent lines, 2 eofs, exit.
            let wanted = 1 + 3 + options.count + 3 + 2 + 1;
            if records != wanted {
                return Err(format!("the record has {records} lines, wanted {wanted}"));
            }
            let _ = std::fs::remove_file(&record);
            text.len() as u64
        }
    };
    Ok(Run {
        wall,
        until_exit,
        cpu,
        wire_bytes,
        record_bytes,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

fn bench(options: &Options) -> Result<String, String> {
    let acp = acp_binary()?;
    let dir = std::env::temp_dir().join(format!("acp-record-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let paths = [Path3::Direct, Path3::Record, Path3::Redact];
    let mut results: Vec<Vec<Run>> = paths.iter().map(|_| Vec::new()).collect();
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load_before = load();
    for run in 1..=options.runs {
        for (i, path) in paths.iter().enumerate() {
            let result = run_once(*path, options, &acp, &dir, run)?;
            eprintln!(
                "acp-record-bench: {:20} run {run}/{}: {:8.1} ms",
                path.name(),
                options.runs,
                result.wall.as_secs_f64() * 1e3
            );
            results[i].push(result);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let pinned = if std::env::var_os(PINNED).is_some() {
        "pinned to CPU 0 (taskset -c 0)"
    } else {
        "not pinned"
    };
    let mut out = format!(
        "acp-record-bench: one turn of {} session/update lines ({}-byte chunks), {} runs per row, medians; {pinned}; load average {} before, {} after.\n\n",
        options.count,
        options.bytes,
        options.runs,
        load_before
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        load()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    );
    out.push_str("| Path | Wall ms | min ms | max ms | Lines/s | Wire MB/s | Until exit ms | CPU agent side ms | Record MB | × direct | µs per line over direct |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let wall = |runs: &[Run]| median(runs.iter().map(|r| r.wall.as_secs_f64() * 1e3).collect());
    let direct = wall(&results[0]);
    for (path, runs) in paths.iter().zip(&results) {
        let ms = wall(runs);
        let walls: Vec<f64> = runs.iter().map(|r| r.wall.as_secs_f64() * 1e3).collect();
        let min = walls.iter().copied().fold(f64::INFINITY, f64::min);
        let max = walls.iter().copied().fold(0.0, f64::max);
        let cpu = median(runs.iter().map(|r| r.cpu.as_secs_f64() * 1e3).collect());
        let until_exit = median(
            runs.iter()
                .map(|r| r.until_exit.as_secs_f64() * 1e3)
                .collect(),
        );
        let wire = median(runs.iter().map(|r| r.wire_bytes as f64).collect());
        let record = median(runs.iter().map(|r| r.record_bytes as f64).collect());
        let record = if *path == Path3::Direct {
            "–".to_owned()
        } else {
            format!("{:.1}", record / 1e6)
        };
        let over = (ms - direct) * 1e3 / options.count.max(1) as f64;
        out.push_str(&format!(
            "| {} | {ms:.1} | {min:.1} | {max:.1} | {:.0} | {:.1} | {until_exit:.1} | {cpu:.0} | {record} | {:.2} | {} |\n",
            path.name(),
            options.count as f64 / (ms / 1e3),
            wire / 1e6 / (ms / 1e3),
            ms / direct,
            if *path == Path3::Direct { "–".to_owned() } else { format!("{over:.2}") },
        ));
    }
    out.push_str(
        "\nWall: the prompt turn, as the client sees it. Until exit: from the prompt until the agent \
         side exited after the client closed its end (the proxy exits once the record file is \
         complete, so this includes the writer catching up). CPU agent side: user + system time of the agent, and of the proxy \
         when there is one, during the run. Record MB: the record file. The agent and client are \
         floors (a precomputed line written, newlines counted), so × direct is the proxy's cost \
         against the least a stream can cost.\n",
    );
    Ok(out)
}
