//! Remote agents through a network that fails, run as users run them:
//! `acp exec` and `acp chat` against `acp serve -- acp-test-agent` through a
//! loopback proxy that severs the connection mid-turn (the turn completes
//! with every word once, in order), a client that never comes back (its
//! agent is gone after the keep time), a server restart (a clear error, no
//! hang; chat offers to load the session again), and `acp watch`.

use crate::common;

use common::proxy::Proxy;
use common::served::{Served, group_alive, wait_until};
use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The text of `acp-test-agent`'s `words N`.
fn words(n: usize) -> String {
    let words: Vec<String> = (1..=n).map(|i| format!("w{i}")).collect();
    format!("{}\n", words.join(" "))
}

/// A child's standard output, read as it comes by a thread.
struct Reading {
    chunks: mpsc::Receiver<String>,
    text: String,
}

impl Reading {
    fn of(child: &mut Child) -> Reading {
        let mut stdout = child.stdout.take().unwrap();
        let (tx, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buffer) {
                if n == 0
                    || tx
                        .send(String::from_utf8_lossy(&buffer[..n]).into_owned())
                        .is_err()
                {
                    break;
                }
            }
        });
        Reading {
            chunks,
            text: String::new(),
        }
    }

    /// Reads until `done` holds of what came (a minute at most).
    fn until(&mut self, what: &str, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(&self.text) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.text.push_str(&chunk),
                Err(_) => panic!("{what} never came; the output so far: {:?}", self.text),
            }
        }
    }

    /// Takes what came so far.
    fn drain(&mut self) {
        while let Ok(chunk) = self.chunks.try_recv() {
            self.text.push_str(&chunk);
        }
    }

    /// Reads what is left, until the output closes.
    fn rest(&mut self) -> String {
        while let Ok(chunk) = self.chunks.recv_timeout(Duration::from_secs(120)) {
            self.text.push_str(&chunk);
        }
        self.text.clone()
    }
}

/// Waits for `child` to exit (two minutes at most: more is a hang);
/// its exit code and standard error.
fn finish(mut child: Child) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the process did not end within two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code().unwrap_or(-1), stderr)
}

/// The headline: a 200-word turn of `acp exec` through a connection severed
/// 1.5 s into the reply completes with exit 0 and every word once, in
/// order, over WebSocket and over Streamable HTTP.
#[test]
fn exec_through_a_connection_severed_mid_turn_gets_every_word_once_in_order() {
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[], &[test_agent()]);
    let proxy = Proxy::start(Proxy::addr_of(&served.url));
    for url in [proxy.ws_url(), proxy.http_url()] {
        let mut child = sb
            .command(&["exec", "--agent", &url, "words 200 15"])
            .spawn()
            .unwrap();
        let mut out = Reading::of(&mut child);
        out.until("the first word", |text| text.starts_with("w1 "));
        let first = Instant::now();
        std::thread::sleep(Duration::from_millis(1500).saturating_sub(first.elapsed()));
        out.drain();
        proxy.sever();
        let before = out.text.split_whitespace().count();
        let stdout = out.rest();
        let (code, stderr) = finish(child);
        assert_eq!(code, 0, "{url}: {stderr}");
        assert_eq!(stdout, words(200), "{url}: {stderr}");
        assert!(
            before > 0 && before < 200,
            "{url}: the sever came mid-turn ({before} words had come)"
        );
        // One break, one outage: closing the connection after the turn is
        // not taken for another.
        assert_eq!(
            stderr
                .matches("[reconnecting…] the connection to the agent broke")
                .count(),
            1,
            "{url}: {stderr}"
        );
        assert_eq!(
            stderr.matches("[reconnected] after").count(),
            1,
            "{url}: {stderr}"
        );
        eprintln!("{url}: severed after {before} words; stderr:\n{stderr}");
    }
}

/// Under `--format json` the notes go to standard error and standard
/// output stays JSON lines: every update once, then the result.
#[test]
fn exec_json_through_a_severed_connection_stays_json() {
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[], &[test_agent()]);
    let proxy = Proxy::start(Proxy::addr_of(&served.url));
    let url = proxy.ws_url();
    let mut child = sb
        .command(&["exec", "--agent", &url, "--format", "json", "words 100 15"])
        .spawn()
        .unwrap();
    let mut out = Reading::of(&mut child);
    out.until("some updates", |text| text.matches('\n').count() >= 10);
    proxy.sever();
    let stdout = out.rest();
    let (code, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let said: String = lines
        .iter()
        .filter_map(|l| l.pointer("/update/content/text")?.as_str())
        .collect();
    assert_eq!(said, words(100));
    assert_eq!(
        lines.last().unwrap()["stopReason"],
        serde_json::json!("end_turn")
    );
    assert!(stderr.contains("[reconnected] after"), "{stderr}");
}

/// `--no-reconnect`: a break ends the run at once, with the reason, and
/// nothing is tried.
#[test]
fn without_reconnecting_a_break_ends_the_run() {
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[], &[test_agent()]);
    let proxy = Proxy::start(Proxy::addr_of(&served.url));
    for url in [proxy.ws_url(), proxy.http_url()] {
        let mut child = sb
            .command(&["exec", "--agent", &url, "--no-reconnect", "words 400 15"])
            .spawn()
            .unwrap();
        let mut out = Reading::of(&mut child);
        out.until("some words", |text| text.starts_with("w1 w2 w3 "));
        proxy.sever();
        out.rest();
        let (code, stderr) = finish(child);
        assert_eq!(code, 6, "{url}: {stderr}");
        assert!(!stderr.contains("[reconnecting"), "{url}: {stderr}");
        assert!(
            stderr.contains(&format!("acp: the connection to {url} ended: ")),
            "{url}: {stderr}"
        );
        assert!(
            stderr.contains(" (during session/prompt)") && !stderr.contains("the agent exited"),
            "{url}: {stderr}"
        );
    }
}

/// `acp connect URL` as an editor runs it, mid-turn (`slow`): its input
/// kept open, the turn ticking.
fn connect_mid_turn(sb: &Sandbox, url: &str) -> Child {
    let mut child = sb
        .command(&["connect", url])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send = |text: &str| {
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":0,"result""#), "{line}");
    send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
        sb.work().display()
    ));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    send(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"slow"}]}}"#,
    );
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "acp connect ended early"
        );
        if line.contains("tick 2") {
            break;
        }
    }
    std::mem::forget(stdin);
    std::mem::forget(stdout);
    child
}

/// The pid `acp-test-agent` logged at `initialize` (the leader of its group).
fn last_logged_pid(log: &str) -> i32 {
    log.lines()
        .filter_map(|l| l.strip_prefix("pid "))
        .filter_map(|p| p.trim().parse().ok())
        .next_back()
        .expect("the agent logged its pid")
}

/// A client that vanishes mid-turn and never comes back: the server keeps
/// its agent for the keep time (the connection listed as detached), then
/// stops it with its whole process tree.
#[test]
fn a_client_that_never_returns_leaves_no_agent_after_the_keep_time() {
    let sb = Sandbox::new();
    let log = sb.root().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", &log.display().to_string());
    // The agent has a grandchild that ignores its input closing.
    let agent = format!("sleep 300 & exec {}", test_agent());
    let served = Served::start(&sb, &["--keep-sessions", "3"], &["sh", "-c", &agent]);
    for url in [served.url.clone(), served.http_url()] {
        let mut client = connect_mid_turn(&sb, &url);
        let pgid = last_logged_pid(&read(&log));
        // The client dies without a word: no WebSocket close, no DELETE.
        client.kill().unwrap();
        client.wait().unwrap();
        let detached = wait_until(Duration::from_secs(30), || {
            let out = sb.run(&["watch", &served.url]);
            out.stdout.contains("detached") || !group_alive(pgid)
        });
        assert!(
            detached,
            "{url}: the connection was never listed as detached"
        );
        assert!(
            wait_until(Duration::from_secs(60), || !group_alive(pgid)),
            "{url}: the agent's process group {pgid} outlived the keep time"
        );
    }
    let logs = served.stop();
    assert_eq!(logs.matches("connection closed").count(), 2, "{logs}");
}

/// The server restarts mid-turn (as its clients see it: the connection
/// breaks and the server that answers has never heard of it): `acp exec`
/// says the server no longer has the connection, at once, and how to go on
/// with the session.
#[test]
fn a_server_restart_is_a_clear_error_and_no_hang() {
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[], &[test_agent()]);
    let again = Served::start(&sb, &[], &[test_agent()]);
    for http in [false, true] {
        let proxy = Proxy::start(Proxy::addr_of(&served.url));
        let url = if http {
            proxy.http_url()
        } else {
            proxy.ws_url()
        };
        let mut child = sb
            .command(&["exec", "--agent", &url, "words 400 15"])
            .spawn()
            .unwrap();
        let mut out = Reading::of(&mut child);
        out.until("some words", |text| text.starts_with("w1 w2 w3 "));
        proxy.retarget(Proxy::addr_of(&again.url));
        proxy.sever();
        out.rest();
        let (code, stderr) = finish(child);
        assert_eq!(code, 6, "{url}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "the connection to {url} was lost during session/prompt: the server no longer \
                 has the connection"
            )),
            "{url}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("acp exec --agent {url} --session sess-1 PROMPT")),
            "{url}: {stderr}"
        );
    }
}

/// `acp watch URL` lists the connections; `--connection PREFIX
/// --from-start` shows one's turn as it happens, as `acp trace` would, and
/// ends when the connection closes.
#[test]
fn watch_shows_a_live_connections_turn() {
    let sb = Sandbox::new();
    let token_file = sb.root().join("token");
    std::fs::write(&token_file, "tok-5e1f\n").unwrap();
    let token = token_file.display().to_string();
    let served = Served::start(&sb, &["--token-file", &token], &[test_agent()]);
    // Without the token: refused.
    let out = sb.run(&["watch", &served.url]);
    assert_code(&out, 1);
    assert!(out.stderr.contains("HTTP 401"), "{}", out.stderr);
    let out = sb.run(&["watch", &served.url, "--token-file", &token]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "no connections\n");
    let out = sb.run(&[
        "watch",
        &served.url,
        "--token-file",
        &token,
        "--connection",
        "9b1d",
    ]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .contains(&format!("{} has no connection 9b1d", served.url)),
        "{}",
        out.stderr
    );
    let client = sb
        .command(&[
            "exec",
            "--agent",
            &served.url,
            "--token-file",
            &token,
            "words 60 40",
        ])
        .spawn()
        .unwrap();
    let mut listed = String::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            listed = sb
                .run(&["watch", &served.url, "--token-file", &token])
                .stdout;
            listed.contains("attached")
        }),
        "{listed}"
    );
    let json = sb.run(&[
        "watch",
        &served.url,
        "--token-file",
        &token,
        "--format",
        "json",
    ]);
    assert_code(&json, 0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let first = &json["connections"][0];
    assert_eq!(first["state"], "attached", "{json}");
    assert_eq!(first["profile"], "websocket", "{json}");
    assert_eq!(first["agent"], "$AGENT", "{json}");
    let row = listed.lines().nth(1).unwrap().to_owned();
    assert!(listed.starts_with("ID "), "{listed}");
    assert!(
        row.contains("websocket") && row.contains("$AGENT"),
        "{listed}"
    );
    let id = row.split_whitespace().next().unwrap();
    let watch = sb
        .command(&[
            "watch",
            &served.url,
            "--token-file",
            &token,
            "--connection",
            &id[..8],
            "--from-start",
        ])
        .spawn()
        .unwrap();
    let watched = sb.output(watch.wait_with_output().unwrap());
    let (code, stderr) = finish(client);
    assert_eq!(code, 0, "{stderr}");
    assert_code(&watched, 0);
    let text = &watched.stdout;
    for expected in [
        &format!("watching connection {id} of {}", served.url),
        "→ initialize #0",
        "← #0 initialize: ok in ",
        "→ session/new #1",
        "session sess-1",
        "┌ sess-1 turn 1 \"words 60 40\"",
        "│ ← agent_message_chunk",
        "└ sess-1 turn 1: end_turn in ",
        "client closed its end",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
    // Every word once, in order, across the runs of chunks.
    let said: String = text
        .lines()
        .filter(|l| l.contains("← agent_message_chunk"))
        .map(|l| {
            let quoted = &l[l.find('"').unwrap()..];
            serde_json::from_str::<String>(quoted).unwrap()
        })
        .collect();
    assert_eq!(said, words(60), "{text}");
    assert!(watched.stderr.contains("closed"), "{}", watched.stderr);
}

mod chat {
    use super::*;
    use expectrl::session::OsSession as Session;
    use expectrl::{Eof, Expect};
    use std::process::Command;

    /// `acp chat --agent URL` in a pty, without colour.
    fn chat(sb: &Sandbox, url: &str) -> Session {
        let mut command = Command::new(ACP);
        command
            .args(["chat", "--agent", url])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", sb.dir.path().join("home"))
            .env("XDG_CONFIG_HOME", sb.dir.path().join("config"))
            .env("XDG_STATE_HOME", sb.dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .current_dir(sb.work());
        let mut session = Session::spawn(command).expect("spawn acp chat in a pty");
        session
            .get_process_mut()
            .set_window_size(160, 40)
            .expect("set the pty's size");
        session.set_expect_timeout(Some(Duration::from_secs(60)));
        session.expect("Ctrl-D quits.").expect("the banner");
        session.expect("> ").expect("the first prompt");
        session
    }

    fn quit(mut session: Session) {
        session
            .send(expectrl::ControlCode::EndOfTransmission)
            .unwrap();
        session.expect(Eof).expect("acp chat ends after Ctrl-D");
    }

    /// A turn severed mid-way: chat says "[reconnecting…]", then
    /// "[reconnected]", and the turn goes on to its end.
    #[test]
    fn chat_shows_reconnecting_and_the_turn_completes() {
        let sb = Sandbox::new();
        let served = Served::start(&sb, &[], &[test_agent()]);
        let proxy = Proxy::start(Proxy::addr_of(&served.url));
        let mut s = chat(&sb, &proxy.ws_url());
        s.type_line("words 200 15").unwrap();
        s.expect("w20 ").unwrap();
        proxy.sever();
        s.expect("[reconnecting…] the connection to the agent broke")
            .unwrap();
        s.expect("[reconnected] after").unwrap();
        s.expect("w199 w200").unwrap();
        s.expect("> ").unwrap();
        // The session goes on over the resumed connection.
        s.type_line("stream").unwrap();
        s.expect("Hello, world!").unwrap();
        s.expect("> ").unwrap();
        quit(s);
    }

    /// The server restarts mid-turn: chat says the server no longer has
    /// the connection, offers to load the session on a new one, and on yes
    /// goes on in it.
    #[test]
    fn chat_offers_to_load_the_session_when_the_server_lost_it() {
        let sb = Sandbox::new();
        let log = sb.root().join("agent.log");
        let sb = sb.env("ACP_TEST_AGENT_LOG", &log.display().to_string());
        let served = Served::start(&sb, &[], &[test_agent()]);
        let again = Served::start(&sb, &[], &[test_agent()]);
        let proxy = Proxy::start(Proxy::addr_of(&served.url));
        let mut s = chat(&sb, &proxy.http_url());
        s.type_line("words 400 15").unwrap();
        s.expect("w5 ").unwrap();
        proxy.retarget(Proxy::addr_of(&again.url));
        proxy.sever();
        s.expect("the server no longer has the connection").unwrap();
        s.expect("Load session sess-1 again, on a new connection? [y/N] ")
            .unwrap();
        s.type_line("y").unwrap();
        s.expect("[session] sess-1 loaded on a new connection")
            .unwrap();
        s.expect("> ").unwrap();
        s.type_line("stream").unwrap();
        s.expect("Hello, world!").unwrap();
        s.expect("> ").unwrap();
        quit(s);
        // The new server's agent loaded the session.
        assert!(read(&log).contains("session/load sess-1"), "{}", read(&log));
    }

    /// The server restarts while the chat waits at the prompt: the break is
    /// noted there, and the next command that needs the agent offers to
    /// load the session on a new connection.
    #[test]
    fn a_server_lost_between_turns_is_offered_at_the_next_command() {
        let sb = Sandbox::new();
        let served = Served::start(&sb, &[], &[test_agent()]);
        let again = Served::start(&sb, &[], &[test_agent()]);
        let proxy = Proxy::start(Proxy::addr_of(&served.url));
        let mut s = chat(&sb, &proxy.ws_url());
        s.type_line("stream").unwrap();
        s.expect("Hello, world!").unwrap();
        s.expect("> ").unwrap();
        proxy.retarget(Proxy::addr_of(&again.url));
        proxy.sever();
        s.expect("[reconnecting…] the connection to the agent broke")
            .unwrap();
        s.type_line("/load sess-1").unwrap();
        s.expect("the server no longer has the connection").unwrap();
        s.expect("Load session sess-1 again, on a new connection? [y/N] ")
            .unwrap();
        s.type_line("y").unwrap();
        s.expect("[session] sess-1 loaded on a new connection")
            .unwrap();
        s.expect("> ").unwrap();
        s.type_line("stream").unwrap();
        s.expect("Hello, world!").unwrap();
        s.expect("> ").unwrap();
        quit(s);
    }

    /// Declined: the chat ends (exit 6), saying how to resume the session.
    #[test]
    fn chat_ends_when_loading_the_session_again_is_declined() {
        let sb = Sandbox::new();
        let served = Served::start(&sb, &[], &[test_agent()]);
        let again = Served::start(&sb, &[], &[test_agent()]);
        let proxy = Proxy::start(Proxy::addr_of(&served.url));
        let url = proxy.ws_url();
        let mut s = chat(&sb, &url);
        s.type_line("words 400 15").unwrap();
        s.expect("w5 ").unwrap();
        proxy.retarget(Proxy::addr_of(&again.url));
        proxy.sever();
        s.expect("Load session sess-1 again, on a new connection? [y/N] ")
            .unwrap();
        s.type_line("n").unwrap();
        s.expect(format!(
            "To resume the session: acp chat --agent {url} --session sess-1"
        ))
        .unwrap();
        s.expect(Eof).unwrap();
        let pid = s.get_process().pid();
        let status = s.get_process_mut().wait().unwrap();
        assert_eq!(status, expectrl::process::unix::WaitStatus::Exited(pid, 6));
    }
}
