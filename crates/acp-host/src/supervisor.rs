//! The supervisor: a small process between the client and each terminal
//! command, which makes "kill" mean every descendant.
//!
//! The client starts its own executable again with the environment
//! variable [`SUPERVISOR_ENV`] set; the executable's `main` calls
//! [`supervise_if_requested`] first thing, which turns the process into
//! the supervisor and never returns. The supervisor
//!
//! - becomes a *child subreaper* (Linux `PR_SET_CHILD_SUBREAPER`): every
//!   process below it whose parent exits is re-parented to it instead of
//!   to init, so no descendant leaves its tree, whether it changed its
//!   process group or session (`setsid`) or lost its parent;
//! - enters the sandbox on a thread of its own and starts the command from
//!   that thread, so the command is sandboxed and the supervisor is not
//!   (with Landlock ABI 6, the command cannot signal the supervisor);
//! - reaps every process of its tree, and reports the command's exit
//!   status to the client;
//! - on `kill`, or when the client goes away (its end of the control socket
//!   closes, however the client ended), kills every descendant with
//!   `SIGKILL`, again and again until none is left, then answers.
//!
//! The client itself never becomes a subreaper, so its other children (the
//! agent process, for one) are reaped by whoever started them, as before.
//!
//! The control protocol, one line at a time over a Unix socket on the
//! supervisor's standard input: the supervisor sends `started PID`, or
//! `error MESSAGE` when the command could not start; `exit CODE` or
//! `signal NAME` when the command ends; `killed` after each `kill` it was
//! sent. The command's standard output and standard error are the
//! supervisor's (one pipe, set by the client); its standard input is
//! `/dev/null`. The supervisor itself writes nothing there.

use crate::sandbox::Sandbox;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Set in the supervisor's environment (to its spec as JSON); never
/// passed on to the command.
pub const SUPERVISOR_ENV: &str = "ACP_HOST_SUPERVISOR";

/// How long a kill keeps looking for survivors (processes it may not
/// signal, such as another user's, would otherwise hold it forever).
const KILL_PATIENCE: Duration = Duration::from_secs(10);

/// What the supervisor is asked to do, besides the command line (its
/// arguments) and the environment and working directory (its own).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Spec {
    /// The sandbox to enter before starting the command.
    pub sandbox: Sandbox,
}

/// Turns this process into a terminal supervisor if it was started as one
/// (the environment holds [`SUPERVISOR_ENV`]), and then never returns.
/// Otherwise returns at once. Call it first thing in `main`, before any
/// thread or runtime is started, in every program that runs terminals
/// through [`crate::Terminals`] with the default
/// [`crate::SupervisorProgram::CurrentExe`].
pub fn supervise_if_requested() {
    let Some(spec) = std::env::var_os(SUPERVISOR_ENV) else {
        return;
    };
    let code = match spec
        .to_str()
        .ok_or_else(|| "the supervisor spec is not UTF-8".to_owned())
        .and_then(|s| serde_json::from_str::<Spec>(s).map_err(|e| e.to_string()))
    {
        Ok(spec) => run(spec),
        Err(e) => {
            eprintln!("acp-host supervisor: bad spec: {e}");
            2
        }
    };
    std::process::exit(code);
}

/// What the reaping loop and the killer share.
#[derive(Default)]
struct State {
    /// The command's process id (and process group), once started.
    command: Option<Pid>,
    /// The command has been reaped.
    command_done: bool,
    /// No child is left.
    empty: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    control: Mutex<UnixStream>,
}

impl Shared {
    fn send(&self, line: &str) {
        let mut control = self.control.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = control.write_all(format!("{line}\n").as_bytes());
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.notify_all();
    }
}

fn run(spec: Spec) -> i32 {
    let control = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(UnixStream::from)
    {
        Ok(control) => control,
        Err(e) => {
            eprintln!("acp-host supervisor: no control socket: {e}");
            return 2;
        }
    };
    let reader = match control.try_clone() {
        Ok(reader) => reader,
        Err(e) => {
            eprintln!("acp-host supervisor: no control socket: {e}");
            return 2;
        }
    };
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
        control: Mutex::new(control),
    });
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        shared.send(&format!("error cannot become a subreaper: {e}"));
        return 2;
    }
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        shared.send("error no command was given");
        return 2;
    };
    let args: Vec<_> = args.collect();
    let sandbox = spec.sandbox;
    let started = std::thread::spawn(move || {
        if sandbox.enabled {
            crate::sandbox::enter(&sandbox)
                .map_err(|e| format!("cannot enter the sandbox: {e}"))?;
        }
        Command::new(&program)
            .args(&args)
            .env_remove(SUPERVISOR_ENV)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))
    })
    .join();
    let child = match started {
        Ok(Ok(child)) => child,
        Ok(Err(message)) => {
            shared.send(&format!("error {}", one_line(&message)));
            return 127;
        }
        Err(_) => {
            shared.send("error the command could not be started");
            return 127;
        }
    };
    // Only the command holds the output pipe from now on, so the client sees
    // its end when the last process of the tree closes it.
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
    let command = Pid::from_raw(child.id() as i32);
    shared.update(|s| s.command = Some(command));
    shared.send(&format!("started {command}"));
    let killer = Arc::clone(&shared);
    std::thread::spawn(move || serve_control(reader, &killer));
    reap(command, &shared);
    // The command and all its descendants are gone; wait for the client to
    // let go of the terminal (or to go away), answering kills meanwhile.
    loop {
        std::thread::park();
    }
}

/// Reaps every child until none is left, reporting the command's status.
fn reap(command: Pid, shared: &Shared) {
    loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command => {
                shared.send(&format!("exit {code}"));
                shared.update(|s| s.command_done = true);
            }
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == command => {
                shared.send(&format!("signal {}", signal.as_str()));
                shared.update(|s| s.command_done = true);
            }
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => {
                shared.update(|s| {
                    s.command_done = true;
                    s.empty = true;
                });
                return;
            }
        }
    }
}

/// Answers the client's requests; when the client goes away, kills the tree
/// and exits.
fn serve_control(reader: UnixStream, shared: &Shared) {
    for line in BufReader::new(reader).lines() {
        match line.as_deref() {
            Ok("kill") => {
                kill_tree(shared);
                shared.send("killed");
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    kill_tree(shared);
    std::process::exit(0);
}

/// Kills every descendant, again until none is alive and the command has
/// been reaped (or [`KILL_PATIENCE`] has passed).
fn kill_tree(shared: &Shared) {
    let me = Pid::this();
    let deadline = Instant::now() + KILL_PATIENCE;
    let mut refused: HashSet<Pid> = HashSet::new();
    loop {
        let alive: Vec<Pid> = descendants(me)
            .into_iter()
            .filter(|pid| !refused.contains(pid))
            .collect();
        for pid in &alive {
            if let Err(nix::errno::Errno::EPERM) = kill(*pid, Signal::SIGKILL) {
                refused.insert(*pid);
            }
        }
        let state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(group) = state.command.filter(|_| !state.command_done) {
            // Where there is no `/proc` walk, the process group is all we know.
            let _ = nix::sys::signal::killpg(group, Signal::SIGKILL);
        }
        if alive.is_empty() && state.command_done || Instant::now() >= deadline {
            return;
        }
        // Woken when a child is reaped; the timeout covers processes that
        // appear meanwhile (forked just before they were killed).
        let _ = shared
            .changed
            .wait_timeout(state, Duration::from_millis(5))
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// The live (not zombie) descendants of `root`, from `/proc`.
#[cfg(target_os = "linux")]
fn descendants(root: Pid) -> Vec<Pid> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let mut live: HashSet<i32> = HashSet::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Some(stat) = crate::proc::stat(pid) else {
            continue;
        };
        children.entry(stat.ppid).or_default().push(pid);
        if !matches!(stat.state, 'Z' | 'X') {
            live.insert(pid);
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![root.as_raw()];
    while let Some(pid) = stack.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            if live.contains(&child) {
                out.push(Pid::from_raw(child));
            }
            stack.push(child);
        }
    }
    out
}

/// Elsewhere there is no subreaper and no `/proc`: [`kill_tree`] kills the
/// command's process group only.
#[cfg(not(target_os = "linux"))]
fn descendants(_root: Pid) -> Vec<Pid> {
    Vec::new()
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}
