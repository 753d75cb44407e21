//! `acp mock`: a scripted agent for testing clients. It speaks the agent
//! side of ACP over standard input and output, one JSON line at a time,
//! from a recording of `acp record` ([`replay`], `--trace FILE`) or from a
//! small script ([`script`], `--script FILE`).
//!
//! It is deterministic: nothing depends on the clock except `sleep`, the
//! ids of the requests it sends are its own (`0`, `1`, … in order), and the
//! client's answers are matched to them by id. What the client sends is
//! compared loosely ([`compare`]); each difference is one line
//! `acp mock: difference: …` on standard error.
//!
//! Exit codes: 0 when everything went as expected and the client closed the
//! connection; 1 when there were differences, the client left early, or
//! `--timeout` ran out; 2 for a bad script, recording or argument; or the
//! code a script's `exit` gives (a replay ends with the recorded agent's
//! exit code when the recorded agent ended the session itself).
//!
//! A request the mock does not expect is answered with an error
//! ([`UNEXPECTED`]), so a client is never left waiting for an answer that
//! will not come.

pub mod compare;
pub mod replay;
pub mod script;

use crate::cli::MockArgs;
use crate::exit::{self, Failure};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// The error code of the answer to a request the mock did not expect.
pub const UNEXPECTED: i64 = -32603;

/// The longest line read from the client.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// Why playing stopped before its natural end.
#[derive(Debug)]
pub enum Stop {
    /// The client closed its end while something was still expected.
    ClientGone(String),
    /// Nothing came within `--timeout`.
    Timeout(String),
    /// The client's end of standard output is closed.
    WriteFailed(std::io::Error),
    /// A script's `exit`, or the end of a recorded agent that exited.
    Exit(i32),
    /// A script that cannot go on (the line and why).
    Script(String),
}

/// What came from the client.
enum Incoming {
    Message(Value),
    Invalid(String),
    Eof,
}

/// The mock's two pipes: lines from the client (read by a thread, so the
/// client never blocks on us), lines to it, and the tally of differences.
pub struct Wire {
    rx: Receiver<Incoming>,
    /// Messages read while waiting for something else, in order.
    stash: VecDeque<Value>,
    out: File,
    timeout: Option<Duration>,
    next_id: i64,
    eof: bool,
    /// Differences reported so far.
    pub differences: usize,
}

impl Wire {
    /// Starts reading standard input.
    pub fn stdio(timeout: Option<Duration>) -> std::io::Result<Wire> {
        let out = File::from(nix::unistd::dup(std::io::stdout().as_fd())?);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
            loop {
                let mut line = Vec::new();
                let read = std::io::Read::take(&mut input, MAX_LINE as u64 + 1)
                    .read_until(b'\n', &mut line);
                let incoming = match read {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Incoming::Eof);
                        return;
                    }
                    Ok(_) if line.len() > MAX_LINE && !line.ends_with(b"\n") => {
                        skip_line(&mut input);
                        Incoming::Invalid(format!("a line over {MAX_LINE} bytes"))
                    }
                    Ok(_) => parse(&line),
                };
                if tx.send(incoming).is_err() {
                    return;
                }
            }
        });
        Ok(Wire {
            rx,
            stash: VecDeque::new(),
            out,
            timeout,
            next_id: 0,
            eof: false,
            differences: 0,
        })
    }

    /// Reports a difference.
    pub fn differ(&mut self, what: impl std::fmt::Display) {
        self.differences += 1;
        eprintln!("acp mock: difference: {what}");
    }

    /// The next id for a request of ours.
    pub fn new_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Writes one message as a line.
    pub fn send(&mut self, message: &Value) -> Result<(), Stop> {
        let mut line = serde_json::to_vec(message).expect("a JSON value serialises");
        line.push(b'\n');
        self.send_raw(&line)
    }

    /// Writes bytes as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.out
            .write_all(bytes)
            .and_then(|()| self.out.flush())
            .map_err(Stop::WriteFailed)
    }

    /// Answers `request` with an error saying it was not expected.
    pub fn refuse(&mut self, request: &Value, why: &str) -> Result<(), Stop> {
        match request.get("id") {
            Some(id) if request.get("method").is_some() => self.send(&json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": UNEXPECTED, "message": format!("acp mock: {why}")},
            })),
            _ => Ok(()),
        }
    }

    /// Puts a message back, to be returned by the next [`next`](Self::next).
    pub fn stash(&mut self, message: Value) {
        self.stash.push_back(message);
    }

    /// The next message from the client, waiting at most `--timeout`.
    /// Lines that are not JSON messages are reported and skipped. `waiting`
    /// says what for, for the messages.
    pub fn next(&mut self, waiting: &str) -> Result<Value, Stop> {
        if let Some(message) = self.stash.pop_front() {
            return Ok(message);
        }
        loop {
            if self.eof {
                return Err(Stop::ClientGone(waiting.to_owned()));
            }
            let incoming = match self.timeout {
                Some(limit) => match self.rx.recv_timeout(limit) {
                    Ok(incoming) => incoming,
                    Err(RecvTimeoutError::Timeout) => {
                        return Err(Stop::Timeout(waiting.to_owned()));
                    }
                    Err(RecvTimeoutError::Disconnected) => Incoming::Eof,
                },
                None => self.rx.recv().unwrap_or(Incoming::Eof),
            };
            match incoming {
                Incoming::Message(value) => return Ok(value),
                Incoming::Invalid(why) => self.differ(format!("the client sent {why}")),
                Incoming::Eof => self.eof = true,
            }
        }
    }

    /// After the script or recording: every further message is a
    /// difference (requests are refused) until the client closes.
    pub fn drain(&mut self) -> Result<(), Stop> {
        loop {
            match self.next("the end of the connection") {
                Ok(message) => {
                    self.differ(format!("unexpected after the end: {}", describe(&message)));
                    self.refuse(&message, "the session is over")?;
                }
                Err(Stop::ClientGone(_)) => return Ok(()),
                Err(other) => return Err(other),
            }
        }
    }
}

/// Reads up to the end of the current line without keeping it.
fn skip_line(input: &mut impl BufRead) {
    loop {
        let (found, used) = match input.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(buf) => match memchr::memchr(b'\n', buf) {
                Some(at) => (true, at + 1),
                None => (false, buf.len()),
            },
        };
        input.consume(used);
        if found {
            return;
        }
    }
}

fn parse(line: &[u8]) -> Incoming {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match serde_json::from_slice::<Value>(line) {
        Ok(value) if value.is_object() => Incoming::Message(value),
        Ok(_) => Incoming::Invalid("a JSON value that is not an object".to_owned()),
        Err(_) if line.iter().all(u8::is_ascii_whitespace) => {
            Incoming::Invalid("an empty line".to_owned())
        }
        Err(e) => Incoming::Invalid(format!("a line that is not JSON ({e})")),
    }
}

/// A message in a few words: `request session/prompt #2`.
pub fn describe(message: &Value) -> String {
    let method = message.get("method").and_then(Value::as_str);
    match (method, message.get("id")) {
        (Some(m), Some(id)) => format!("request {m} #{id}"),
        (Some(m), None) => format!("notification {m}"),
        (None, Some(id)) if message.get("error").is_some() => format!("error answer #{id}"),
        (None, Some(id)) => format!("answer #{id}"),
        (None, None) => format!("message {}", compare_preview(message)),
    }
}

fn compare_preview(message: &Value) -> String {
    let text = message.to_string();
    text.chars().take(80).collect()
}

/// Runs `acp mock` and returns its exit code.
pub fn run(args: MockArgs) -> Result<u8, Failure> {
    let timeout = args.timeout.map(Duration::from_secs_f64);
    let plan = match (&args.trace, &args.script) {
        (Some(path), None) => Plan::Replay(replay::Replay::load(path)?),
        (None, Some(path)) => Plan::Script(script::Script::load(path)?),
        _ => return Err(Failure::usage("give one of --trace FILE and --script FILE")),
    };
    let mut wire = Wire::stdio(timeout)
        .map_err(|e| Failure::agent(format!("cannot use standard output: {e}")))?;
    let result = match plan {
        Plan::Replay(replay) => replay.play(&mut wire),
        Plan::Script(script) => script.play(&mut wire),
    };
    let result = result.and_then(|()| wire.drain());
    let differences = wire.differences;
    let code = match result {
        Ok(()) => u8::from(differences > 0),
        Err(Stop::ClientGone(waiting)) => {
            eprintln!(
                "acp mock: difference: the client closed the connection while the mock waited for {waiting}"
            );
            1
        }
        Err(Stop::Timeout(waiting)) => {
            eprintln!(
                "acp mock: difference: nothing came from the client within --timeout while the mock waited for {waiting}"
            );
            1
        }
        Err(Stop::WriteFailed(e)) => {
            eprintln!("acp mock: difference: the client stopped reading ({e})");
            1
        }
        Err(Stop::Exit(code)) if differences == 0 => code.clamp(0, 255) as u8,
        Err(Stop::Exit(_)) => 1,
        Err(Stop::Script(why)) => {
            eprintln!("acp mock: {why}");
            exit::USAGE
        }
    };
    if differences > 0 {
        let s = if differences == 1 { "" } else { "s" };
        eprintln!("acp mock: {differences} difference{s}");
    }
    Ok(code)
}

enum Plan {
    Replay(replay::Replay),
    Script(script::Script),
}
