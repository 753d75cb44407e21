//! The client under test, as a child process in a group of its own.

use acp::process::StderrTail;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// The client process.
pub(super) struct ClientProcess {
    pub(super) child: Child,
    pub(super) stderr: StderrTail,
    /// Ends when the client's stderr does.
    pub(super) stderr_read: Option<tokio::task::JoinHandle<()>>,
}

impl ClientProcess {
    pub(super) fn spawn(argv: &[String], cwd: &Path) -> std::io::Result<ClientProcess> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("no command"))?;
        let program = if program.contains('/') {
            std::path::absolute(program)?.into_os_string()
        } else {
            program.into()
        };
        let mut child = Command::new(&program)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot start {}: {e}", program.to_string_lossy()),
                )
            })?;
        // Its stdout is the user's view (the reply): read, so that the
        // client never waits on it, and dropped.
        let mut stdout = child.stdout.take().expect("piped");
        tokio::spawn(async move { tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await });
        let (stderr, read) = StderrTail::read(child.stderr.take().expect("piped"), |_| {});
        Ok(ClientProcess {
            child,
            stderr,
            stderr_read: Some(read),
        })
    }

    pub(super) fn stderr_end(&self) -> String {
        self.stderr.last(3).join(" / ")
    }

    pub(super) fn signal(&self, signal: nix::sys::signal::Signal) {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), signal);
        }
    }

    pub(super) async fn end(&mut self, wait: Duration) {
        if tokio::time::timeout(wait, self.child.wait()).await.is_err() {
            self.signal(nix::sys::signal::Signal::SIGKILL);
            let _ = self.child.kill().await;
        }
    }
}
