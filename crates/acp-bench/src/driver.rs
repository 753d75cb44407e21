//! The driver: runs floor and ACP runs interleaved, prints a Markdown table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::{Command, ExitCode, Stdio};

use crate::client::{self, Mode, RunResult};
use crate::peers;
use crate::spec::{Spec, Workload};
use crate::sys::median;

const USAGE: &str = "\
usage: acp-bench [--runs N] [--only W1,W2,...] [--quick] [--cpu N|any] [--no-peers]

  --runs N     runs per workload and implementation (default 5, and 25 for
               W3, whose runs last milliseconds; 1 with --quick)
  --only LIST  workloads to run: W1 stream, W2 rpc, W3 concurrent, W4 large
  --quick      a tenth of the sizes, for a smoke test
  --cpu N      the CPU every run (client and agent) is pinned to (default 0);
               `any` lets the scheduler choose
  --no-peers   no rows for the official Rust and TypeScript SDKs (by default
               their glue in crates/acp-bench/peers is built and run too, at
               most 5 runs per row; a peer that cannot be built or run is
               skipped with a loud line)

Prints a Markdown table on standard output; progress goes to standard error.";

/// The most runs per row of an official SDK.
const PEER_RUNS: usize = 5;

/// The driver's options.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    /// Runs per row; `None`: the defaults.
    runs: Option<usize>,
    workloads: Vec<Workload>,
    quick: bool,
    /// The CPU runs are pinned to; `None`: not pinned.
    cpu: Option<usize>,
    /// Whether to run the official SDKs' rows too.
    peers: bool,
}

impl Options {
    /// Runs of `workload` per implementation. By default W3, whose runs
    /// last milliseconds and so are the most exposed to a noisy machine,
    /// gets five times as many, for a steadier median.
    fn runs_of(&self, workload: Workload) -> usize {
        match self.runs {
            Some(n) => n,
            None if self.quick => 1,
            None if workload == Workload::Concurrent => 25,
            None => 5,
        }
    }

    /// Runs of `workload` per official SDK: as for ours, at most 5 (their
    /// rows are for the side by side, not for a target).
    fn peer_runs_of(&self, workload: Workload) -> usize {
        self.runs_of(workload).min(PEER_RUNS)
    }

    /// The runs per row, as the table's header states them.
    fn runs_per_row(&self) -> String {
        let of = |w| self.runs_of(w);
        match (of(Workload::Stream), of(Workload::Concurrent)) {
            (all, w3) if all == w3 => all.to_string(),
            (all, w3) => format!("{all} (W3: {w3})"),
        }
    }
}

/// What the command line asks for.
enum Invocation {
    Bench(Options),
    Client(Mode, Spec, Option<usize>),
    Help,
}

fn parse_args(args: &[String]) -> Result<Invocation, String> {
    let mut runs = None;
    let mut workloads = Workload::ALL.to_vec();
    let mut quick = false;
    let mut client_mode = None;
    let mut client_spec = None;
    let mut cpu = Some(0);
    let mut peers = true;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--runs" => {
                let n: usize = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?;
                runs = Some(n.max(1));
            }
            "--only" => {
                workloads = value("--only")?
                    .split(',')
                    .filter(|w| !w.trim().is_empty())
                    .map(|w| Workload::parse(w.trim()).ok_or(format!("unknown workload {w:?}")))
                    .collect::<Result<_, _>>()?;
                workloads.sort();
                workloads.dedup();
            }
            "--quick" => quick = true,
            "--no-peers" => peers = false,
            "--cpu" => {
                cpu = match value("--cpu")?.as_str() {
                    "any" => None,
                    n => Some(n.parse().map_err(|e| format!("--cpu: {e}"))?),
                }
            }
            "--client" => {
                let mode = value("--client")?;
                client_mode = Some(Mode::parse(&mode).ok_or(format!("unknown mode {mode:?}"))?);
            }
            "--spec" => client_spec = Some(Spec::parse(&value("--spec")?)?),
            "-h" | "--help" => return Ok(Invocation::Help),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    match (client_mode, client_spec) {
        (Some(mode), Some(spec)) => return Ok(Invocation::Client(mode, spec, cpu)),
        (None, None) => {}
        _ => return Err("--client and --spec go together".into()),
    }
    if workloads.is_empty() {
        return Err("--only selects no workload".into());
    }
    Ok(Invocation::Bench(Options {
        runs,
        workloads,
        quick,
        cpu,
        peers,
    }))
}

/// Runs the `acp-bench` binary.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Invocation::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Invocation::Client(mode, spec, cpu)) => match run_client(mode, spec, cpu) {
            Ok(result) => {
                println!(
                    "{}",
                    serde_json::to_string(&result).expect("plain numbers serialise")
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("acp-bench: {} {}: {e}", spec.workload, mode.as_str());
                ExitCode::FAILURE
            }
        },
        Ok(Invocation::Bench(options)) => match bench(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("acp-bench: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("acp-bench: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// One run as a client process: ours, or an official SDK's own client.
fn run_client(mode: Mode, spec: Spec, cpu: Option<usize>) -> Result<RunResult, String> {
    if !mode.is_peer() {
        return client::run(mode, spec, cpu);
    }
    if let Some(cpu) = cpu {
        crate::sys::pin_to_cpu(cpu).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    }
    peers::run(mode, &spec)
}

/// Under `cargo run`, builds the agent binary with the driver's profile:
/// `cargo run` builds only the binary it runs, which would leave a stale or
/// missing agent.
fn build_agent() -> Result<(), String> {
    let agent = client::agent_path().map_err(|e| e.to_string())?;
    if let (Ok(cargo), Ok(manifest_dir)) =
        (std::env::var("CARGO"), std::env::var("CARGO_MANIFEST_DIR"))
    {
        let profile = agent
            .parent()
            .and_then(|dir| dir.file_name())
            .and_then(|name| name.to_str())
            .unwrap_or("debug")
            .to_owned();
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "--quiet",
            "--bin",
            "acp-bench-agent",
            "--manifest-path",
        ]);
        build.arg(std::path::Path::new(&manifest_dir).join("Cargo.toml"));
        match profile.as_str() {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        eprintln!("acp-bench: building acp-bench-agent ({profile})");
        let status = build.status().map_err(|e| format!("cargo build: {e}"))?;
        if !status.success() {
            return Err(format!("building acp-bench-agent failed: {status}"));
        }
    }
    if !agent.exists() {
        return Err(format!(
            "{} not found: run `cargo build --release -p acp-bench` first",
            agent.display()
        ));
    }
    Ok(())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn run_once(mode: Mode, spec: &Spec, cpu: Option<usize>) -> Result<RunResult, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let cpu = cpu.map_or("any".to_owned(), |n| n.to_string());
    let output = Command::new(exe)
        .args(["--client", mode.as_str(), "--spec", &spec.to_prompt()])
        .args(["--cpu", &cpu])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("starting a client run: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{} {} run failed ({})",
            spec.workload,
            mode.as_str(),
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|e| format!("bad result line {line:?}: {e}"))
}

/// The official SDKs that are ready to run, with their descriptions; a
/// peer that is not is reported loudly and left out.
fn prepare_peers(options: &Options) -> (Vec<Mode>, Vec<String>) {
    let mut ready = Vec::new();
    let mut notes = Vec::new();
    if !options.peers {
        return (ready, notes);
    }
    for mode in Mode::ALL.into_iter().filter(|m| m.is_peer()) {
        match peers::prepare(mode) {
            Ok(what) => {
                ready.push(mode);
                notes.push(format!("`{}`: {what}", mode.as_str()));
            }
            Err(why) => {
                eprintln!(
                    "acp-bench: !!! SKIPPING the `{}` rows: {why}",
                    mode.as_str()
                );
                notes.push(format!("`{}`: SKIPPED ({why})", mode.as_str()));
            }
        }
    }
    (ready, notes)
}

fn bench(options: &Options) -> Result<(), String> {
    build_agent()?;
    let (peer_modes, mut peer_notes) = prepare_peers(options);
    let load_before = load_average();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut results: BTreeMap<(Workload, Mode), Vec<RunResult>> = BTreeMap::new();
    let started = std::time::Instant::now();
    for &workload in &options.workloads {
        let spec = if options.quick {
            Spec::quick(workload)
        } else {
            Spec::full(workload)
        };
        let runs = options.runs_of(workload);
        let mut modes = vec![Mode::Floor, Mode::TokioFloor, Mode::Acp];
        modes.extend(&peer_modes);
        for run in 1..=runs {
            // Interleaved, so slow drift in machine load hits all alike.
            for mode in modes.clone() {
                let of = if mode.is_peer() {
                    options.peer_runs_of(workload)
                } else {
                    runs
                };
                if run > of {
                    continue;
                }
                let result = match run_once(mode, &spec, options.cpu) {
                    Ok(result) => result,
                    Err(e) if mode.is_peer() => {
                        // A peer's failure drops its row, never the run.
                        eprintln!(
                            "acp-bench: !!! {workload} `{}` failed, row dropped: {e}",
                            mode.as_str()
                        );
                        peer_notes.push(format!(
                            "`{}` {workload}: FAILED, row dropped ({e})",
                            mode.as_str()
                        ));
                        results.remove(&(workload, mode));
                        modes.retain(|m| *m != mode);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                eprintln!(
                    "acp-bench: {workload} {:8} run {run}/{of}: {:9.1} ms",
                    mode.as_str(),
                    result.wall_ns as f64 / 1e6
                );
                results.entry((workload, mode)).or_default().push(result);
            }
        }
    }
    let header = Header {
        cpus,
        pinned: options.cpu,
        runs: options.runs_per_row(),
        quick: options.quick,
        load_before,
        load_after: load_average(),
        seconds: started.elapsed().as_secs_f64(),
        peers: peer_notes,
    };
    print!("{}", render(&header, &results));
    Ok(())
}

/// Facts about the session, printed above the table.
struct Header {
    cpus: usize,
    pinned: Option<usize>,
    runs: String,
    quick: bool,
    load_before: String,
    load_after: String,
    seconds: f64,
    /// What each official SDK row ran (versions), or why it is missing.
    peers: Vec<String>,
}

/// Medians of one (workload, implementation) row, and its runs in order
/// (for ratios taken round by round, see [`Row::over`]).
struct Row {
    walls_ms: Vec<f64>,
    p50s_us: Vec<Option<f64>>,
    wall_ms: f64,
    wall_min_ms: f64,
    wall_max_ms: f64,
    messages: f64,
    wire_mb: f64,
    client_cpu_ms: f64,
    agent_cpu_ms: f64,
    client_rss_mib: f64,
    agent_rss_mib: f64,
    p50_us: Option<f64>,
    p99_us: Option<f64>,
}

impl Row {
    fn of(runs: &[RunResult]) -> Row {
        let m = |f: &dyn Fn(&RunResult) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        let opt = |f: &dyn Fn(&RunResult) -> Option<u64>| {
            let v: Vec<f64> = runs.iter().filter_map(f).map(|x| x as f64 / 1e3).collect();
            (!v.is_empty()).then(|| median(&v))
        };
        let walls = runs.iter().map(|r| r.wall_ns as f64 / 1e6);
        Row {
            walls_ms: walls.clone().collect(),
            p50s_us: runs
                .iter()
                .map(|r| r.p50_ns.map(|n| n as f64 / 1e3))
                .collect(),
            wall_ms: m(&|r| r.wall_ns as f64 / 1e6),
            wall_min_ms: walls.clone().fold(f64::INFINITY, f64::min),
            wall_max_ms: walls.fold(0.0, f64::max),
            messages: m(&|r| r.messages as f64),
            wire_mb: m(&|r| r.wire_bytes as f64 / 1e6),
            client_cpu_ms: m(&|r| r.client_cpu_ns as f64 / 1e6),
            agent_cpu_ms: m(&|r| r.agent_cpu_ns as f64 / 1e6),
            client_rss_mib: m(&|r| r.client_rss_kib as f64 / 1024.0),
            agent_rss_mib: m(&|r| r.agent_rss_kib as f64 / 1024.0),
            p50_us: opt(&|r| r.p50_ns),
            p99_us: opt(&|r| r.p99_ns),
        }
    }

    /// This row's wall time over `base`'s: the median of the ratios of the
    /// runs of one round, which ran back to back (rounds interleave every
    /// row), so a change in the machine's load between rounds hits both
    /// sides of each ratio alike.
    fn over(&self, base: &Row) -> f64 {
        let ratios: Vec<f64> = self
            .walls_ms
            .iter()
            .zip(&base.walls_ms)
            .map(|(a, b)| a / b)
            .collect();
        median(&ratios)
    }

    /// The same for the W2 p50 round trip.
    fn p50_over(&self, base: &Row) -> f64 {
        let ratios: Vec<f64> = self
            .p50s_us
            .iter()
            .zip(&base.p50s_us)
            .filter_map(|(a, b)| Some((*a)? / (*b)?))
            .collect();
        median(&ratios)
    }

    /// Spread of the wall times around the median, in percent.
    fn spread(&self) -> f64 {
        (self.wall_max_ms - self.wall_min_ms) / self.wall_ms * 100.0
    }
}

/// One target of the issue: a measured value against a limit.
struct Target {
    what: String,
    measured: f64,
    limit: f64,
    unit: &'static str,
}

impl Target {
    fn verdict(&self) -> &'static str {
        if self.measured <= self.limit {
            "ok"
        } else {
            "MISSED"
        }
    }
}

fn targets(workload: Workload, floor: &Row, acp: &Row, spec: &Spec) -> Vec<Target> {
    let ratio = acp.over(floor);
    let time = |limit: f64| Target {
        what: format!("{} time ≤ {limit}× floor", workload.id()),
        measured: ratio,
        limit,
        unit: "×",
    };
    match workload {
        Workload::Stream => vec![
            time(1.3),
            Target {
                what: "W1 agent peak RSS < 20 MB (19.1 MiB)".into(),
                measured: acp.agent_rss_mib,
                limit: 20e6 / 1024.0 / 1024.0,
                unit: " MiB",
            },
        ],
        Workload::Rpc => vec![
            time(1.5),
            Target {
                what: "W2 p50 round trip ≤ 1.5× floor p50".into(),
                measured: acp.p50_over(floor),
                limit: 1.5,
                unit: "×",
            },
        ],
        Workload::Concurrent => vec![time(2.0)],
        Workload::Large => {
            let limit = 3.0 * spec.bytes as f64 / 1024.0 / 1024.0;
            vec![
                time(1.25),
                Target {
                    what: format!("W4 client peak RSS < 3× message ({limit:.0} MiB)"),
                    measured: acp.client_rss_mib,
                    limit,
                    unit: " MiB",
                },
                Target {
                    what: format!("W4 agent peak RSS < 3× message ({limit:.0} MiB)"),
                    measured: acp.agent_rss_mib,
                    limit,
                    unit: " MiB",
                },
            ]
        }
    }
}

/// The short target shown next to the ratio in the main table.
fn target_cell(workload: Workload, floor: &Row, acp: &Row) -> String {
    let (limit, measured) = match workload {
        Workload::Stream => (1.3, acp.over(floor)),
        Workload::Rpc => (1.5, acp.p50_over(floor)),
        Workload::Concurrent => (2.0, acp.over(floor)),
        Workload::Large => (1.25, acp.over(floor)),
    };
    let what = if workload == Workload::Rpc {
        "p50 "
    } else {
        ""
    };
    let verdict = if measured <= limit { "ok" } else { "MISSED" };
    format!("{what}≤ {limit}×: {verdict}")
}

fn render(header: &Header, results: &BTreeMap<(Workload, Mode), Vec<RunResult>>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "acp-bench: {} run(s) per row{}, medians; {} CPUs, {}; load average {} before, {} after; {:.1} s in all.\n",
        header.runs,
        if header.quick { " (--quick sizes)" } else { "" },
        header.cpus,
        header
            .pinned
            .map_or("runs not pinned".to_owned(), |n| format!(
                "each run (client and agent) pinned to CPU {n}"
            )),
        header.load_before,
        header.load_after,
        header.seconds
    );
    for note in &header.peers {
        let _ = writeln!(out, "- {note}");
    }
    if !header.peers.is_empty() {
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "| Workload | Impl | Wall ms | ± % | Msg/s | MB/s | CPU client ms | CPU agent ms | RSS client MiB | RSS agent MiB | p50 µs | p99 µs | × floor | Target |"
    );
    let _ = writeln!(
        out,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    let mut all_targets = Vec::new();
    let workloads: Vec<Workload> = {
        let mut w: Vec<Workload> = results.keys().map(|(w, _)| *w).collect();
        w.dedup();
        w
    };
    for workload in workloads {
        let (Some(floor), Some(acp)) = (
            results.get(&(workload, Mode::Floor)),
            results.get(&(workload, Mode::Acp)),
        ) else {
            continue;
        };
        let spec = if header.quick {
            Spec::quick(workload)
        } else {
            Spec::full(workload)
        };
        let floor = Row::of(floor);
        let acp = Row::of(acp);
        let peer_rows: Vec<(Mode, Row)> = Mode::ALL
            .into_iter()
            .filter(|m| m.is_peer())
            .filter_map(|m| Some((m, Row::of(results.get(&(workload, m))?))))
            .collect();
        let tokio_floor = results
            .get(&(workload, Mode::TokioFloor))
            .map(|runs| Row::of(runs));
        let rows = [(Mode::Floor, &floor)]
            .into_iter()
            .chain(tokio_floor.as_ref().map(|row| (Mode::TokioFloor, row)))
            .chain([(Mode::Acp, &acp)])
            .chain(peer_rows.iter().map(|(m, row)| (*m, row)));
        for (mode, row) in rows {
            let us = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.1}"));
            let (ratio, target) = match mode {
                Mode::Floor => ("1.00".to_owned(), "–".to_owned()),
                Mode::TokioFloor => (
                    format!("{:.2}", row.over(&floor)),
                    format!("acp {:.2}× this", acp.over(row)),
                ),
                Mode::Acp => (
                    format!("{:.2}", row.over(&floor)),
                    target_cell(workload, &floor, &acp),
                ),
                Mode::RustSdk | Mode::TsSdk => (
                    format!("{:.2}", row.over(&floor)),
                    format!("{:.1}× acp", row.over(&acp)),
                ),
            };
            let secs = row.wall_ms / 1e3;
            let _ = writeln!(
                out,
                "| {workload} | {} | {:.1} | {:.0} | {:.0} | {:.1} | {:.0} | {:.0} | {:.1} | {:.1} | {} | {} | {ratio} | {target} |",
                mode.as_str(),
                row.wall_ms,
                row.spread(),
                row.messages / secs,
                row.wire_mb / secs,
                row.client_cpu_ms,
                row.agent_cpu_ms,
                row.client_rss_mib,
                row.agent_rss_mib,
                us(row.p50_us),
                us(row.p99_us),
            );
        }
        all_targets.extend(targets(workload, &floor, &acp, &spec));
    }
    let _ = writeln!(out, "\n| Target | Measured | Limit | Verdict |");
    let _ = writeln!(out, "|---|---:|---:|---|");
    for t in &all_targets {
        let _ = writeln!(
            out,
            "| {} | {:.2}{} | {:.2}{} | {} |",
            t.what,
            t.measured,
            t.unit,
            t.limit,
            t.unit,
            t.verdict()
        );
    }
    let _ = writeln!(
        out,
        "\nWall: the prompt turn, medians; ± %: (max − min) / median of the wall times. \
         Msg/s and MB/s: JSON lines and bytes on the wire in both directions during the turn. \
         CPU (user + sys) and peak RSS (VmHWM): whole process, client and agent. \
         p50/p99: W2 round trips measured in the agent. × floor (and every other ratio): \
         the median of the ratios of wall times run by run (each round runs every row back to back). \
         `rust-sdk` and `ts-sdk`: the official SDKs, their client driving their agent \
         (at most 5 runs per row); their Target cell is their wall time over ours."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn run(wall_ms: u64, p50_us: Option<u64>) -> RunResult {
        RunResult {
            wall_ns: wall_ms * 1_000_000,
            messages: 1,
            wire_bytes: 1,
            client_cpu_ns: 1,
            agent_cpu_ns: 1,
            client_rss_kib: 1,
            agent_rss_kib: 1,
            p50_ns: p50_us.map(|us| us * 1000),
            p99_ns: None,
        }
    }

    #[test]
    fn ratios_are_taken_round_by_round() {
        // The first round's acp run was hit by a load spike; the ratio of
        // the medians (300 / 200) would say 1.5, each round says 1.1.
        let floor = Row::of(&[run(100, Some(10)), run(300, Some(30)), run(200, Some(20))]);
        let acp = Row::of(&[run(300, Some(40)), run(330, Some(33)), run(220, Some(22))]);
        assert!(
            (acp.over(&floor) - 1.1).abs() < 1e-9,
            "{}",
            acp.over(&floor)
        );
        assert!((acp.p50_over(&floor) - 1.1).abs() < 1e-9);
        // A row with fewer runs (an official SDK's) pairs with the first rounds.
        let peer = Row::of(&[run(1000, None), run(3000, None)]);
        assert!((peer.over(&floor) - 10.0).abs() < 1e-9);
        assert!(peer.p50_over(&floor).is_nan());
    }

    #[test]
    fn parses_options() {
        let Ok(Invocation::Bench(o)) = parse_args(&args("--only w3,W1 --runs 3")) else {
            panic!("expected bench options")
        };
        assert_eq!(
            o,
            Options {
                runs: Some(3),
                workloads: vec![Workload::Stream, Workload::Concurrent],
                quick: false,
                cpu: Some(0),
                peers: true,
            }
        );
        let Ok(Invocation::Bench(o)) = parse_args(&args("--cpu any")) else {
            panic!("expected bench options")
        };
        assert_eq!(o.cpu, None);
        let Ok(Invocation::Bench(o)) = parse_args(&args("--no-peers")) else {
            panic!("expected bench options")
        };
        assert!(!o.peers);
        assert_eq!(o.peer_runs_of(Workload::Concurrent), 5);
        assert!(parse_args(&args("--cpu x")).is_err());
        let Ok(Invocation::Bench(o)) = parse_args(&args("--quick")) else {
            panic!("expected bench options")
        };
        assert_eq!(o.runs_of(Workload::Concurrent), 1);
        assert_eq!(o.runs_per_row(), "1");
        let Ok(Invocation::Bench(o)) = parse_args(&args("")) else {
            panic!("expected bench options")
        };
        assert_eq!(o.runs_of(Workload::Stream), 5);
        assert_eq!(o.runs_of(Workload::Concurrent), 25);
        assert_eq!(o.runs_per_row(), "5 (W3: 25)");
        assert!(parse_args(&args("--only W7")).is_err());
        assert!(parse_args(&args("--client acp")).is_err());
        assert!(matches!(
            parse_args(&args("--client floor --spec W2")),
            Ok(Invocation::Client(Mode::Floor, _, Some(0)))
        ));
        assert!(matches!(
            parse_args(&args("--client ts-sdk --spec W2")),
            Ok(Invocation::Client(Mode::TsSdk, _, Some(0)))
        ));
    }
}
