//! `acp serve` run by a test: started on a free loopback port, its URL read
//! from its first line of output, stopped (SIGTERM, then SIGKILL) on drop.

use super::Sandbox;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

pub struct Served {
    pub child: Child,
    /// `ws://127.0.0.1:PORT/acp` (or `wss://`).
    pub url: String,
    /// Its standard error (the logs), collected by a thread.
    logs: Option<std::thread::JoinHandle<String>>,
}

impl Served {
    /// `acp serve --listen 127.0.0.1:0 OPTIONS -- AGENT…` in the sandbox.
    pub fn start(sb: &Sandbox, options: &[&str], agent: &[&str]) -> Served {
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(options);
        args.push("--");
        args.extend_from_slice(agent);
        let mut command = sb.command(&args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("start acp serve");
        let stderr = child.stderr.take().unwrap();
        let logs = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
            text
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("acp serve: listening on ")
            .unwrap_or_else(|| panic!("acp serve said {line:?}"))
            .to_owned();
        Served {
            child,
            url,
            logs: Some(logs),
        }
    }

    /// The same endpoint over Streamable HTTP.
    pub fn http_url(&self) -> String {
        self.url.replacen("ws", "http", 1)
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Stops it with SIGTERM and returns its logs.
    pub fn stop(mut self) -> String {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid()),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
        self.logs.take().unwrap().join().unwrap_or_default()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.pid());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether any process of group `pgid` is left.
pub fn group_alive(pgid: i32) -> bool {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
}

/// Waits (up to `limit`) until `done` holds; false if it never did.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}
