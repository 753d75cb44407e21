//! `acp record -- AGENT…`: a transparent stdio proxy that records the
//! session.
//!
//! Put `acp record -- my-agent --flag` where an editor's config names
//! `my-agent --flag`. The proxy starts the agent and copies bytes as they
//! arrive, unchanged: standard input to the agent's, the agent's standard
//! output to ours, its standard error to ours. Nothing is decoded or
//! re-encoded on the way, so the editor cannot tell the proxy is there (but
//! for the time it takes). A side closing its end is passed on too.
//!
//! Each line is recorded in the record file (see [`crate::recording`] for
//! the format) by a writer thread ([`writer`]); `--redact` masks secrets
//! there ([`redact`]). A pump queues the lines of a chunk for the writer
//! before it passes the chunk on (queueing does no I/O), so an answer is
//! always recorded after what it answers.
//!
//! The agent runs in a process group of its own. `SIGINT`, `SIGTERM`,
//! `SIGHUP`, `SIGQUIT`, `SIGUSR1` and `SIGUSR2` sent to the proxy are
//! forwarded to that group, so the agent (and anything it started) gets
//! each signal exactly once, even when a terminal's Ctrl-C reaches the
//! proxy's group. The proxy then exits with the agent's status: its exit
//! code, or 128 + the signal that killed it. When the agent is gone, the
//! proxy waits up to [`DRAIN_GRACE`] for the rest of its output (which a
//! process it left behind may hold open), then exits.
//!
//! A proxy killed with `SIGKILL` cannot forward it: the agent then sees its
//! standard input close, as it would if the editor died.

pub mod redact;
pub mod writer;

use crate::cli::RecordArgs;
use crate::exit::{self, Failure};
use crate::recording::{self, Exit, MAX_RECORDED_LINE, Source};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::signal::unix::{SignalKind, signal};
use writer::{Event, Queue};

/// After the agent exits, how long the proxy waits for the end of its
/// standard output and error.
pub const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Size of each read from a pipe.
const CHUNK: usize = 64 * 1024;

/// The signals passed on to the agent.
const FORWARDED: [(Signal, SignalKind); 6] = [
    (Signal::SIGINT, SignalKind::interrupt()),
    (Signal::SIGTERM, SignalKind::terminate()),
    (Signal::SIGHUP, SignalKind::hangup()),
    (Signal::SIGQUIT, SignalKind::quit()),
    (Signal::SIGUSR1, SignalKind::user_defined1()),
    (Signal::SIGUSR2, SignalKind::user_defined2()),
];

/// Where recordings go by default: `<state dir>/acp/recordings`
/// (`$XDG_STATE_HOME/acp/recordings`, usually
/// `~/.local/state/acp/recordings`; the data directory where there is no
/// state directory, as on macOS).
pub fn default_dir() -> Option<PathBuf> {
    crate::config::paths::state_dir().map(|dir| dir.join("recordings"))
}

/// Runs `acp record` and returns the agent's exit status.
pub async fn run(args: RecordArgs) -> Result<u8, Failure> {
    let Some((program, program_args)) = args.command.split_first() else {
        return Err(Failure::usage(
            "name the agent to record: acp record [-o FILE] -- AGENT [ARGS…]",
        ));
    };
    let started_at = SystemTime::now();
    let (path, file) = create_file(args.output.as_deref(), started_at)?;
    // Caught before the agent starts, so none is missed (nor kills us).
    let signals = catch_signals();
    let mut child = match tokio::process::Command::new(program)
        .args(program_args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            drop(file);
            let _ = std::fs::remove_file(&path);
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                exit::AGENT_NOT_FOUND
            } else {
                exit::AGENT_ERROR
            };
            return Err(Failure::new(code, format!("cannot start {program}: {e}")));
        }
    };
    let start = Instant::now();
    eprintln!("acp record: recording to {}", path.display());

    let mut redactor = args.redact.then(|| redact::Redactor::new(std::env::vars()));
    let mut header = Vec::new();
    let agent = match redactor.as_mut() {
        Some(r) => r.args(&args.command),
        None => args.command.clone(),
    };
    recording::write_header(
        &mut header,
        &recording::Header {
            started: recording::rfc3339(started_at),
            agent,
            redacted: args.redact,
        },
    );
    let queue = Arc::new(Queue::default());
    let writer = writer::spawn(queue.clone(), file, path, header, redactor);

    let pipes = (|| -> std::io::Result<_> {
        let stdin = File::from(child.stdin.take().expect("piped").into_owned_fd()?);
        let stdout = File::from(child.stdout.take().expect("piped").into_owned_fd()?);
        let stderr = File::from(child.stderr.take().expect("piped").into_owned_fd()?);
        // Duplicates of our own standard input and output, made after the
        // agent started so it does not inherit them.
        let our_in = File::from(nix::unistd::dup(std::io::stdin().as_fd())?);
        let our_out = File::from(nix::unistd::dup(std::io::stdout().as_fd())?);
        Ok((stdin, stdout, stderr, our_in, our_out))
    })();
    let (agent_in, agent_out, agent_err, our_in, our_out) = match pipes {
        Ok(pipes) => pipes,
        Err(e) => {
            let _ = child.start_kill();
            queue.close();
            let _ = writer.join();
            return Err(Failure::agent(format!("cannot set up the pipes: {e}")));
        }
    };

    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let pump = |from, input, output, done: Option<std::sync::mpsc::Sender<()>>| {
        let queue = queue.clone();
        std::thread::spawn(move || {
            pump(from, input, output, &queue, start);
            drop(done);
        })
    };
    // The client pump is not waited for: it may be blocked reading our
    // standard input long after the agent is gone.
    pump(Source::Client, our_in, Output::Agent(agent_in), None);
    pump(
        Source::Agent,
        agent_out,
        Output::OurStdout(our_out),
        Some(done_tx.clone()),
    );
    pump(Source::Stderr, agent_err, Output::OurStderr, Some(done_tx));

    let status = wait_forwarding_signals(&mut child, signals).await;
    let exit = match status {
        Ok(status) => exit_of(status),
        Err(e) => {
            eprintln!("acp record: cannot wait for the agent: {e}");
            Exit::Code(exit::AGENT_ERROR.into())
        }
    };
    let deadline = Instant::now() + DRAIN_GRACE;
    // Both senders are dropped when both pumps are done.
    while done_rx
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .is_ok()
    {}
    queue.push(&mut vec![Event::Exit(start.elapsed().as_secs_f64(), exit)]);
    queue.close();
    let _ = writer.join();
    Ok(match exit {
        Exit::Code(code) => code.clamp(0, 255) as u8,
        Exit::Signal(signal) => (128 + signal).clamp(0, 255) as u8,
    })
}

/// Opens the record file: `output` itself, or a new file named by the time
/// in `output` (a directory) or the default directory.
fn create_file(output: Option<&Path>, now: SystemTime) -> Result<(PathBuf, File), Failure> {
    let dir_given = output.filter(|p| p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/'));
    let path = match (output, dir_given) {
        (Some(path), None) => path.to_path_buf(),
        (_, Some(dir)) => dir.join(file_name(now)),
        (None, None) => default_dir()
            .ok_or_else(|| {
                Failure::usage("cannot find a state or data directory; name the file with -o FILE")
            })?
            .join(file_name(now)),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::AlreadyExists {
                " (a recording is never overwritten: remove it, or give -o a directory)"
            } else {
                ""
            };
            Failure::usage(format!("cannot create {}: {e}{hint}", path.display()))
        })?;
    Ok((path, file))
}

/// `2025-01-02T03-04-05.678Z-PID.jsonl`: sorts by time, no colons, and two
/// proxies started in the same millisecond still differ.
fn file_name(now: SystemTime) -> String {
    let stamp = recording::rfc3339(now);
    // 2025-01-02T03:04:05.678901Z → 2025-01-02T03-04-05.678Z
    let stamp = format!("{}Z", &stamp[..23]).replace(':', "-");
    format!("{stamp}-{}.jsonl", std::process::id())
}

enum Output {
    Agent(File),
    OurStdout(File),
    OurStderr,
}

impl Output {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Output::Agent(file) | Output::OurStdout(file) => file.write_all(bytes),
            Output::OurStderr => std::io::stderr().write_all(bytes),
        }
    }

    /// Passes the end of the stream on.
    fn close(self) {
        if let Output::OurStdout(file) = self {
            drop(file);
            // fd 1 is the last holder of the editor's pipe: point it at
            // /dev/null, so the editor sees the end.
            if let Ok(null) = File::open("/dev/null") {
                let _ = nix::unistd::dup2_stdout(&null);
            }
        }
    }
}

/// Copies `input` to `output` chunk by chunk until the end, queueing each
/// line for the record file.
fn pump(from: Source, mut input: File, mut output: Output, queue: &Queue, start: Instant) {
    let mut chunk = vec![0u8; CHUNK];
    let mut splitter = Splitter::new(from);
    let mut events = Vec::new();
    let mut forwarding = true;
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let bytes = &chunk[..n];
        // Queued before it is passed on, so whatever the other side says
        // in reply is queued after it: the file keeps cause before effect.
        splitter.feed(bytes, start.elapsed().as_secs_f64(), &mut events);
        queue.push(&mut events);
        if forwarding && output.write_all(bytes).is_err() {
            match from {
                // The agent's standard error keeps being recorded.
                Source::Stderr => forwarding = false,
                // The reader went away: so does this writer, and the
                // other end sees it as it would without the proxy.
                _ => break,
            }
        }
    }
    // Recorded before the end is passed on: the other side may react to
    // it (an agent exits when its input ends), and that comes after.
    let t = start.elapsed().as_secs_f64();
    splitter.finish(t, &mut events);
    if from != Source::Stderr {
        events.push(Event::Eof(t, from));
    }
    queue.push(&mut events);
    drop(input);
    output.close();
}

/// Cuts a byte stream into lines for the record.
struct Splitter {
    from: Source,
    partial: Vec<u8>,
    len: u64,
}

impl Splitter {
    fn new(from: Source) -> Splitter {
        Splitter {
            from,
            partial: Vec::new(),
            len: 0,
        }
    }

    fn take(&mut self, tail: &[u8]) -> (Vec<u8>, u64) {
        let len = self.len + tail.len() as u64;
        let bytes = if self.partial.is_empty() && tail.len() <= MAX_RECORDED_LINE {
            tail.to_vec()
        } else {
            self.append(tail);
            std::mem::take(&mut self.partial)
        };
        self.len = 0;
        (bytes, len)
    }

    fn append(&mut self, bytes: &[u8]) {
        let room = MAX_RECORDED_LINE.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn feed(&mut self, mut bytes: &[u8], t: f64, events: &mut Vec<Event>) {
        while let Some(at) = memchr::memchr(b'\n', bytes) {
            let (bytes_of_line, len) = self.take(&bytes[..at]);
            events.push(Event::Line {
                t,
                from: self.from,
                bytes: bytes_of_line,
                newline: true,
                len,
            });
            bytes = &bytes[at + 1..];
        }
        if !bytes.is_empty() {
            self.append(bytes);
            self.len += bytes.len() as u64;
        }
    }

    fn finish(&mut self, t: f64, events: &mut Vec<Event>) {
        if self.len > 0 {
            let (bytes, len) = self.take(&[]);
            events.push(Event::Line {
                t,
                from: self.from,
                bytes,
                newline: false,
                len,
            });
        }
    }
}

/// Catches the [`FORWARDED`] signals: from now on they no longer end the
/// proxy but arrive on the returned channel.
fn catch_signals() -> tokio::sync::mpsc::UnboundedReceiver<Signal> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for (sig, kind) in FORWARDED {
        match signal(kind) {
            Ok(mut stream) => {
                let tx = tx.clone();
                tokio::spawn(async move {
                    while stream.recv().await.is_some() {
                        if tx.send(sig).is_err() {
                            break;
                        }
                    }
                });
            }
            Err(e) => eprintln!("acp record: cannot catch {sig}: {e}"),
        }
    }
    rx
}

/// Waits for the agent, forwarding signals to its process group meanwhile.
async fn wait_forwarding_signals(
    child: &mut tokio::process::Child,
    mut signals: tokio::sync::mpsc::UnboundedReceiver<Signal>,
) -> std::io::Result<std::process::ExitStatus> {
    let group = child.id().map(|id| Pid::from_raw(id as i32));
    loop {
        tokio::select! {
            status = child.wait() => return status,
            Some(sig) = signals.recv() => {
                // The child is not reaped until `wait` returns, so its
                // process group still exists (or is a zombie's).
                if let Some(group) = group {
                    let _ = killpg(group, sig);
                }
            }
        }
    }
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(exit::AGENT_ERROR.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<(Vec<u8>, bool, u64)> {
        let mut splitter = Splitter::new(Source::Agent);
        let mut events = Vec::new();
        for chunk in chunks {
            splitter.feed(chunk, 0.0, &mut events);
        }
        splitter.finish(0.0, &mut events);
        events
            .into_iter()
            .map(|e| match e {
                Event::Line {
                    bytes,
                    newline,
                    len,
                    ..
                } => (bytes, newline, len),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn lines_are_cut_at_newlines_across_chunks() {
        assert_eq!(
            lines(&[b"ab", b"c\n\nd\r\ne", b"f"]),
            vec![
                (b"abc".to_vec(), true, 3),
                (b"".to_vec(), true, 0),
                (b"d\r".to_vec(), true, 2),
                (b"ef".to_vec(), false, 2),
            ]
        );
        assert_eq!(lines(&[]), vec![]);
    }

    #[test]
    fn an_over_long_line_is_recorded_by_its_start_and_length() {
        let big = vec![b'x'; MAX_RECORDED_LINE + 10];
        let out = lines(&[&big[..100], &big[100..], b"\nok\n"]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0.len(), MAX_RECORDED_LINE);
        assert_eq!(out[0].2, MAX_RECORDED_LINE as u64 + 10);
        assert_eq!(out[1], (b"ok".to_vec(), true, 2));
    }

    #[test]
    fn file_names_sort_by_time_and_have_no_colons() {
        let at = std::time::UNIX_EPOCH + Duration::from_millis(1_735_787_045_678);
        let name = file_name(at);
        assert_eq!(
            name,
            format!("2025-01-02T03-04-05.678Z-{}.jsonl", std::process::id())
        );
    }
}
