//! `acp serve`, `acp connect` and `--agent URL`, run as users run them:
//! `acp exec` against `acp serve -- acp-test-agent` over both profiles, the
//! token, TLS, a connection dropped mid-turn (the agent's process tree gone,
//! the client told why), and 200 sessions at once with the server's memory
//! and descriptors bounded.

use crate::common;

use common::served::{Served, group_alive, wait_until};
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

/// The pid `acp-test-agent` logged at `initialize` (the leader of its group).
fn logged_pids(log: &str) -> Vec<i32> {
    log.lines()
        .filter_map(|l| l.strip_prefix("pid "))
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

#[test]
fn exec_reaches_an_agent_served_over_websocket_and_over_http() {
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[], &[test_agent()]);
    let file = sb.work().join("notes.txt");
    std::fs::write(&file, "served notes\n").unwrap();
    for url in [served.url.clone(), served.http_url()] {
        let out = sb.run(&["exec", "--agent", &url, "stream"]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "Hello, world!\n", "{url}");
        let out = sb.run(&["exec", "--agent", &url, "--approve-all", "permission"]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "permission: selected allow\n", "{url}");
        let read = format!("read {}", file.display());
        let out = sb.run(&["exec", "--agent", &url, &read]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "served notes\n", "{url}");
    }
    let logs = served.stop();
    assert_eq!(logs.matches("connection opened").count(), 6, "{logs}");
    assert_eq!(logs.matches("connection closed").count(), 6, "{logs}");
    assert!(
        logs.contains("profile=\"websocket\"") && logs.contains("profile=\"http\""),
        "{logs}"
    );
}

#[test]
fn a_token_is_refused_or_accepted() {
    let sb = Sandbox::new();
    let token_file = sb.root().join("token");
    std::fs::write(&token_file, "tok-8f2c\n").unwrap();
    let wrong_file = sb.root().join("wrong");
    std::fs::write(&wrong_file, "tok-0000\n").unwrap();
    let token_arg = token_file.display().to_string();
    let served = Served::start(&sb, &["--token-file", &token_arg], &[test_agent()]);
    for url in [served.url.clone(), served.http_url()] {
        let out = sb.run(&["exec", "--agent", &url, "stream"]);
        assert_ne!(out.code, 0, "{url}: {}", out.stdout);
        assert!(
            out.stderr
                .contains("HTTP 401 Unauthorized (a missing or wrong token)"),
            "{url}: {}",
            out.stderr
        );
        let wrong = wrong_file.display().to_string();
        let out = sb.run(&["exec", "--agent", &url, "--token-file", &wrong, "stream"]);
        assert!(out.stderr.contains("HTTP 401"), "{url}: {}", out.stderr);
        let out = sb.run(&[
            "exec",
            "--agent",
            &url,
            "--token-file",
            &token_arg,
            "stream",
        ]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "Hello, world!\n");
    }
    // From the environment too.
    let out = sb
        .command(&[
            "exec",
            "--agent",
            &served.url,
            "--token-env",
            "SERVE_TOKEN",
            "stream",
        ])
        .env("SERVE_TOKEN", "tok-8f2c")
        .output()
        .unwrap();
    let out = sb.output(out);
    assert_code(&out, 0);
}

#[test]
fn a_listener_beyond_loopback_needs_a_token() {
    let sb = Sandbox::new();
    let out = sb.run(&["serve", "--listen", "0.0.0.0:0", "--", test_agent()]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .contains("refusing to serve on 0.0.0.0:0 without a token"),
        "{}",
        out.stderr
    );
    let empty = sb.root().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let out = sb.run(&[
        "serve",
        "--token-file",
        &empty.display().to_string(),
        "--",
        test_agent(),
    ]);
    assert_code(&out, 2);
    assert!(out.stderr.contains("is empty"), "{}", out.stderr);
}

#[test]
fn tls_with_a_test_certificate() {
    let sb = Sandbox::new();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert_file = sb.root().join("cert.pem");
    let key_file = sb.root().join("key.pem");
    std::fs::write(&cert_file, cert.cert.pem()).unwrap();
    std::fs::write(&key_file, cert.signing_key.serialize_pem()).unwrap();
    let (c, k) = (
        cert_file.display().to_string(),
        key_file.display().to_string(),
    );
    let served = Served::start(&sb, &["--tls-cert", &c, "--tls-key", &k], &[test_agent()]);
    assert!(served.url.starts_with("wss://127.0.0.1:"), "{}", served.url);
    let port = served
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/acp")
        .to_owned();
    for url in [
        format!("wss://localhost:{port}/acp"),
        format!("https://localhost:{port}/acp"),
    ] {
        let out = sb.run(&["exec", "--agent", &url, "--ca-cert", &c, "stream"]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "Hello, world!\n", "{url}");
        // Without the test certificate the server is not trusted.
        let out = sb.run(&["exec", "--agent", &url, "stream"]);
        assert_ne!(out.code, 0);
        assert!(
            out.stderr.to_lowercase().contains("certificate"),
            "{url}: {}",
            out.stderr
        );
    }
}

/// `acp connect URL` as an editor runs it: JSON lines on its stdin and
/// stdout. Returns it once the slow turn has ticked.
fn connect_mid_turn(
    sb: &Sandbox,
    url: &str,
    options: &[&str],
) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let mut child = sb
        .command(&[&["connect", url], options].concat())
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
    assert!(line.contains(r#""sessionId":"sess-1""#), "{line}");
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
    // Keep its input open: the client is still there, mid-turn.
    std::mem::forget(stdin);
    (child, stdout)
}

#[test]
fn a_client_dropped_mid_turn_takes_the_agent_process_tree_with_it() {
    let sb = Sandbox::new();
    let log = sb.root().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", &log.display().to_string());
    // The agent has a grandchild that ignores its input closing.
    let agent = format!("sleep 300 & exec {}", test_agent());
    let served = Served::start(
        &sb,
        &["--idle-timeout", "1", "--keep-sessions", "0"],
        &["sh", "-c", &agent],
    );
    for url in [served.url.clone(), served.http_url()] {
        let (mut client, _out) = connect_mid_turn(&sb, &url, &[]);
        let pids = logged_pids(&read(&log));
        let pgid = *pids.last().expect("the agent logged its pid");
        assert!(group_alive(pgid));
        // The client dies without a word: no WebSocket close, no DELETE.
        client.kill().unwrap();
        client.wait().unwrap();
        assert!(
            wait_until(Duration::from_secs(30), || !group_alive(pgid)),
            "{url}: the agent's process group {pgid} outlived the connection"
        );
    }
    let logs = served.stop();
    assert!(
        logs.contains("the client closed the connection") || logs.contains("broke"),
        "{logs}"
    );
    assert!(logs.contains("idle for 1 s"), "{logs}");
}

#[test]
fn a_server_gone_mid_turn_is_a_clear_error_and_leaves_no_agent() {
    let sb = Sandbox::new();
    let log = sb.root().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", &log.display().to_string());
    for http in [false, true] {
        let served = Served::start(&sb, &[], &[test_agent()]);
        let url = if http {
            served.http_url()
        } else {
            served.url.clone()
        };
        // Over HTTP a server that stops is not told from a network that
        // broke: the client tries to resume, here for a second.
        let options: &[&str] = if http { &["--reconnect-for", "1"] } else { &[] };
        let (mut client, mut out) = connect_mid_turn(&sb, &url, options);
        let pgid = *logged_pids(&read(&log)).last().unwrap();
        let logs = served.stop();
        assert!(logs.contains("shutting down"), "{logs}");
        // The mirror sees the end and says why, then exits with status 1.
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut rest);
        let status = client.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{url}");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut client.stderr.take().unwrap(), &mut stderr).unwrap();
        let expected = if http {
            "acp connect: [lost] could not reconnect to the server"
        } else {
            "the server closed the WebSocket (code 1001): the server is shutting down"
        };
        assert!(stderr.contains(expected), "{url}: {stderr}");
        assert!(!group_alive(pgid), "{url}: the agent outlived acp serve");
    }
}

/// The resident memory (kB) and open descriptors of process `pid`.
fn usage(pid: i32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (rss, fds)
}

/// The processes whose parent is `pid`.
fn children(pid: i32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // pid (comm) state ppid …; comm may hold spaces.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok())
                == Some(pid)
        })
        .count()
}

#[test]
fn two_hundred_concurrent_sessions_with_bounded_memory_and_descriptors() {
    const SESSIONS: usize = 200;
    let sb = Sandbox::new();
    let served = Served::start(&sb, &["--max-connections", "256"], &[test_agent()]);
    let pid = served.pid();
    let (rss_before, fds_before) = usage(pid);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (peak_rss, peak_fds, texts) = runtime.block_on(sessions(&served, SESSIONS, pid));
    for (i, text) in texts.iter().enumerate() {
        assert_eq!(text, "Hello, world!", "session {i}");
    }
    // While all were open: three pipes to each agent, one socket per
    // WebSocket, three or four per HTTP client (its two streams, its POSTs
    // and a keep-alive connection), so at most six per session; and at most
    // a MiB of server memory per connection.
    let bound = fds_before + SESSIONS * 6 + 32;
    assert!(
        peak_fds <= bound,
        "{peak_fds} descriptors (from {fds_before}, bound {bound})"
    );
    assert!(
        peak_rss < rss_before + 200 * 1024,
        "{peak_rss} kB resident (from {rss_before} kB)"
    );
    // And once they closed, everything was given back.
    let settled = wait_until(Duration::from_secs(30), || {
        let (_, fds) = usage(pid);
        fds <= fds_before + 4 && children(pid) == 0
    });
    let (rss_after, fds_after) = usage(pid);
    assert!(
        settled,
        "{fds_after} descriptors (from {fds_before}), {} agents left",
        children(pid)
    );
    eprintln!(
        "acp serve with {SESSIONS} sessions: {peak_fds} descriptors at the peak ({fds_before} before, {fds_after} after), \
         {peak_rss} kB resident ({rss_before} kB before, {rss_after} kB after)"
    );
}

/// Opens `n` sessions at once (half WebSocket, half HTTP), measures the
/// server while all are open, then prompts each and closes them all.
async fn sessions(served: &Served, n: usize, pid: i32) -> (u64, usize, Vec<String>) {
    use acp::schema::*;
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(n + 1));
    let mut tasks = Vec::new();
    for i in 0..n {
        let url = if i % 2 == 0 {
            served.url.clone()
        } else {
            served.http_url()
        };
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let transport = acp::remote::connect(&url, acp::remote::ClientOptions::default())
                .await
                .expect("connect");
            let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
            let client = Collect(text.clone());
            let (conn, io) = acp::ClientSideConnection::new(
                transport,
                acp::ConnectionOptions::default(),
                |_| client,
            );
            let io = tokio::spawn(io);
            conn.initialize(InitializeRequest::new(ProtocolVersion::V1))
                .await
                .expect("initialize");
            let session = conn
                .new_session(NewSessionRequest::new("/"))
                .await
                .expect("session/new")
                .session_id;
            barrier.wait().await;
            let reply = conn
                .prompt(PromptRequest::new(session, vec!["stream".into()]))
                .await
                .expect("prompt");
            assert_eq!(reply.stop_reason, StopReason::EndTurn);
            conn.close();
            let _ = io.await;
            text.lock().unwrap().clone()
        }));
    }
    tokio::time::timeout(Duration::from_secs(120), barrier.wait())
        .await
        .expect("all sessions open");
    let (rss, fds) = usage(pid);
    let mut texts = Vec::new();
    for task in tasks {
        let text = tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the session's turn")
            .unwrap();
        texts.push(text);
    }
    (rss, fds, texts)
}

/// A client that keeps the message text.
struct Collect(std::sync::Arc<std::sync::Mutex<String>>);

impl acp::Client for Collect {
    async fn session_notification(
        &self,
        n: acp::schema::SessionNotification,
        _cx: acp::NotificationContext<acp::ClientSide>,
    ) -> Result<(), acp::schema::Error> {
        if let acp::schema::SessionUpdate::AgentMessageChunk(chunk) = &n.update
            && let Some(text) = chunk.content.as_text()
        {
            self.0.lock().unwrap().push_str(text);
        }
        Ok(())
    }
}
