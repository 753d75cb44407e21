//! Ctrl-C (SIGINT) cancels the turn with `session/cancel`.

use crate::common;
use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

#[test]
fn sigint_sends_cancel_and_exits_130() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let mut child = sb
        .command(&["exec", "--agent", test_agent(), "slow"])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "tick 1\n");
    let started = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel took {:?}",
        started.elapsed()
    );
    let stderr = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("[cancel] cancelling the turn"), "{stderr}");
    assert!(stderr.contains("[stop] cancelled"), "{stderr}");
    let log = read(&log);
    // The runtime cancels the turn's token before the agent's `cancel`
    // handler runs, so the two lines may come in either order.
    assert!(log.lines().any(|l| l == "session/cancel"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}
