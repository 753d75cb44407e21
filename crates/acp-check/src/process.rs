//! Starting a peer as a child process and ending it.

use crate::strict::Handler;
use crate::wire::{Log, Wire};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

/// The most of a peer's standard error kept (its end).
const STDERR_TAIL: usize = 16 * 1024;

/// A peer process: its wire and the child.
pub struct Peer {
    /// The raw JSON-RPC wire over its stdin/stdout.
    pub wire: Wire,
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
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
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr: Arc<Mutex<Vec<u8>>> = Arc::default();
        let keep = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut tail = keep.lock().unwrap();
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_TAIL {
                    let cut = tail.len() - STDERR_TAIL;
                    tail.drain(..cut);
                }
            }
        });
        Ok(Peer {
            wire: Wire::new(id, log, side, stdout, stdin),
            child,
            stderr,
        })
    }

    /// The end of what the peer wrote to standard error.
    pub fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
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
