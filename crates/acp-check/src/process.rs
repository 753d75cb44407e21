//! Starting a peer as a child process and ending it.

use crate::strict::Handler;
use crate::wire::{Log, Wire};
use acp::process::StderrTail;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::process::{Child, Command};

/// A peer process: its wire and the child.
pub struct Peer {
    /// The raw JSON-RPC wire over its stdin/stdout.
    pub wire: Wire,
    child: Child,
    stderr: StderrTail,
}

impl Peer {
    /// Starts `argv` in `cwd` as peer number `id`.
    pub fn spawn(
        argv: &[String],
        cwd: &std::path::Path,
        id: usize,
        log: Arc<Log>,
        side: Handler,
    ) -> std::io::Result<Peer> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("no command"))?;
        // A relative path names a file from where the checker runs, not from
        // the peer's cwd (the workspace).
        let program = if program.contains('/') {
            std::path::absolute(program)?.into_os_string()
        } else {
            program.into()
        };
        let mut cmd = Command::new(&program);
        cmd.args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot start {}: {e}", program.to_string_lossy()),
            )
        })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (stderr, _read) = StderrTail::read(child.stderr.take().expect("piped stderr"), |_| {});
        Ok(Peer {
            wire: Wire::new(id, log, side, stdout, stdin),
            child,
            stderr,
        })
    }

    /// The end of what the peer wrote to standard error: its last lines
    /// (see [`StderrTail`]), one per line.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lines().join("\n")
    }

    /// Whether the process exits within `wait`; its status if so.
    pub async fn exits_within(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Ends the process and everything in its process group.
    pub async fn kill(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill().await;
    }
}
