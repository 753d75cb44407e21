//! Remote sessions through a faulty network (features `websocket`, `http`,
//! `server`): a loopback TCP proxy between our client and our server severs
//! connections mid-turn, drops the resume itself, delays the server; a client
//! that never comes back, and a server that restarts.

use crate::remote_support;
use crate::support;

use acp::remote::server::{ServerOptions, Upstream};
use acp::remote::{ClientOptions, LinkEvent, LinkLost};
use acp::schema::*;
use remote_support::*;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use support::*;

/// How long the echo agent waits between words.
const PAUSE: Duration = Duration::from_millis(15);

fn urls(proxy: &Proxy) -> [String; 2] {
    [
        format!("ws://{}/acp", proxy.addr),
        format!("http://{}/acp", proxy.addr),
    ]
}

/// Waits until `done` holds, polling.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    within(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// The headline: a 200-word echo turn through a connection severed 1.5 s
/// in completes with every word once, in order, over both profiles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_severed_mid_way_completes_with_every_word_once_in_order() {
    let served = Served::start(ServerOptions::default(), PAUSE).await;
    let proxy = Proxy::start(served.addr).await;
    let text = words(200);
    for url in urls(&proxy) {
        let desk = Desk::default();
        let events = Events::default();
        let client = client(&url, reconnecting(&events), &desk).await;
        let session = open_session(&client).await;
        let started = Instant::now();
        let turn = tokio::spawn({
            let client = client.clone();
            let text = text.clone();
            async move { client.prompt(prompt(session.as_ref(), &text)).await }
        });
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let before = desk.words();
        proxy.sever();
        let reply = within("the turn", turn).await.unwrap();
        assert_eq!(
            reply.unwrap().stop_reason,
            StopReason::EndTurn,
            "{url}: {:?}",
            events.all()
        );
        assert_eq!(desk.text(), format!("{text} "), "{url}");
        assert!(
            before > 0 && before < 200,
            "{url}: the sever came mid-turn ({before} words had come)"
        );
        assert!(events.reconnecting() >= 1, "{url}: {:?}", events.all());
        assert!(events.resumed() >= 1, "{url}: {:?}", events.all());
        eprintln!(
            "{url}: 200 words in {:?}, severed after {before}; events {:?}",
            started.elapsed(),
            events.all()
        );
    }
    // Each prompt reached its agent once.
    assert_eq!(served.seen.prompts.load(Ordering::SeqCst), 2);
}

/// The resume itself is cut: the server takes it, the client never hears;
/// the client tries again and goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_cut_on_its_way_back_is_tried_again() {
    let served = Served::start(ServerOptions::default(), PAUSE).await;
    let proxy = Proxy::start(served.addr).await;
    let text = words(60);
    for url in urls(&proxy) {
        let desk = Desk::default();
        let events = Events::default();
        let client = client(&url, reconnecting(&events), &desk).await;
        let session = open_session(&client).await;
        let turn = tokio::spawn({
            let client = client.clone();
            let text = text.clone();
            async move { client.prompt(prompt(session.as_ref(), &text)).await }
        });
        until("some words", || desk.words() >= 10).await;
        proxy.cut_answers(2);
        proxy.sever();
        let reply = within("the turn", turn).await.unwrap();
        assert_eq!(reply.unwrap().stop_reason, StopReason::EndTurn, "{url}");
        assert_eq!(desk.text(), format!("{text} "), "{url}");
        assert!(events.reconnecting() >= 2, "{url}: {:?}", events.all());
    }
}

/// A slow server (every chunk held 30 ms), severed twice: still every word
/// once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_server_severed_twice() {
    let served = Served::start(ServerOptions::default(), Duration::from_millis(5)).await;
    let proxy = Proxy::start(served.addr).await;
    proxy.delay(Duration::from_millis(30));
    let text = words(80);
    for url in urls(&proxy) {
        let desk = Desk::default();
        let events = Events::default();
        let client = client(&url, reconnecting(&events), &desk).await;
        let session = open_session(&client).await;
        let turn = tokio::spawn({
            let client = client.clone();
            let text = text.clone();
            async move { client.prompt(prompt(session.as_ref(), &text)).await }
        });
        until("some words", || desk.words() >= 5).await;
        proxy.sever();
        let seen = desk.words();
        until("more words", || desk.words() >= seen + 5).await;
        proxy.sever();
        let reply = within("the turn", turn).await.unwrap();
        assert_eq!(reply.unwrap().stop_reason, StopReason::EndTurn, "{url}");
        assert_eq!(desk.text(), format!("{text} "), "{url}");
        assert!(events.resumed() >= 2, "{url}: {:?}", events.all());
    }
}

/// The network goes away without a word (the proxy passes nothing on, and
/// closes nothing): the client notices the silence, resumes through a new
/// connection, and the server hands it the connection from the old one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_gone_silent_is_noticed_and_resumed() {
    // Three keep-alives and pings per 0.9 s; the client takes 0.9 s of
    // silence for a broken link.
    let options = ServerOptions::default().idle_timeout(Duration::from_millis(900));
    let served = Served::start(options, PAUSE).await;
    let proxy = Proxy::start(served.addr).await;
    let text = words(100);
    for url in urls(&proxy) {
        let desk = Desk::default();
        let events = Events::default();
        let log = std::sync::Arc::clone(&events.0);
        let options = ClientOptions::default()
            .reconnect(
                acp::remote::Reconnect::default()
                    .first_delay(Duration::from_millis(50))
                    .ping_every(Duration::from_millis(300)),
            )
            .on_event(move |e| log.lock().unwrap().push(e.clone()));
        let client = client(&url, options, &desk).await;
        let session = open_session(&client).await;
        let turn = tokio::spawn({
            let client = client.clone();
            let text = text.clone();
            async move { client.prompt(prompt(session.as_ref(), &text)).await }
        });
        until("some words", || desk.words() >= 10).await;
        proxy.freeze();
        let reply = within("the turn", turn).await.unwrap();
        assert_eq!(reply.unwrap().stop_reason, StopReason::EndTurn, "{url}");
        assert_eq!(desk.text(), format!("{text} "), "{url}");
        assert!(
            events.all().iter().any(|e| matches!(
                e,
                LinkEvent::Reconnecting { why, .. } if why.contains("no word from the server")
            )),
            "{url}: {:?}",
            events.all()
        );
        assert!(events.resumed() >= 1, "{url}: {:?}", events.all());
    }
}

/// Another client resumes our client's connection: ours is told it was
/// taken over, and stops (it does not take the connection back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_taken_over_stops_with_a_clear_error() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let served = Served::start(ServerOptions::default(), PAUSE).await;
    let addr = served.addr;
    for http in [false, true] {
        let url = if http {
            format!("http://{addr}/acp")
        } else {
            format!("ws://{addr}/acp")
        };
        let desk = Desk::default();
        let events = Events::default();
        let client = client(&url, reconnecting(&events), &desk).await;
        let session = open_session(&client).await;
        // Its id, from the list, once its streams are open.
        let profile = if http { "http" } else { "websocket" };
        let id = within("the connection listed", async {
            loop {
                let (_, body) = list_connections(addr, "").await;
                let list: serde_json::Value = serde_json::from_str(&body).unwrap();
                let found = list["connections"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find_map(|c| {
                        (c["profile"] == profile && c["state"] == "attached")
                            .then(|| c["id"].as_str().unwrap().to_owned())
                    });
                if let Some(id) = found {
                    return id;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        let turn = tokio::spawn({
            let client = client.clone();
            async move { client.prompt(prompt(session.as_ref(), &words(500))).await }
        });
        until("some words", || desk.words() >= 3).await;
        // The other client.
        let mut taker = None;
        let mut stream = None;
        if http {
            let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            use tokio::io::AsyncWriteExt;
            tcp.write_all(
                format!(
                    "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {id}\r\nLast-Event-ID: 0\r\n\r\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
            stream = Some(tcp);
        } else {
            let mut request = url.as_str().into_client_request().unwrap();
            request
                .headers_mut()
                .insert("acp-connection-id", id.parse().unwrap());
            request
                .headers_mut()
                .insert("last-event-id", "0".parse().unwrap());
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            taker = Some(
                within(
                    "the take-over",
                    tokio_tungstenite::client_async(request, tcp),
                )
                .await
                .unwrap(),
            );
        }
        let error = within("the turn's end", turn).await.unwrap().unwrap_err();
        assert_eq!(
            LinkLost::of(&error),
            Some(&LinkLost::TakenOver),
            "{url}: {error}; {:?}",
            events.all()
        );
        assert_eq!(events.reconnecting(), 0, "{url}: {:?}", events.all());
        drop((taker, stream));
    }
}

/// A client that never comes back: after the keep time the connection is
/// closed and its in-process agent dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_returns_lets_its_agent_go_after_the_keep_time() {
    let keep = Duration::from_millis(400);
    let served = Served::start(ServerOptions::default().keep_sessions(keep), PAUSE).await;
    let proxy = Proxy::start(served.addr).await;
    for (n, url) in urls(&proxy).into_iter().enumerate() {
        let desk = Desk::default();
        // No reconnecting: the client is gone for good.
        let client = client(&url, ClientOptions::default(), &desk).await;
        let session = open_session(&client).await;
        let turn = tokio::spawn({
            let client = client.clone();
            async move { client.prompt(prompt(session.as_ref(), &words(500))).await }
        });
        until("some words", || desk.words() >= 3).await;
        proxy.refuse(true);
        proxy.sever();
        let error = within("the turn's end", turn).await.unwrap().unwrap_err();
        assert!(!error.to_string().is_empty());
        until("the agent dropped", || {
            served.seen.dropped.load(Ordering::SeqCst) == n + 1
        })
        .await;
        proxy.refuse(false);
    }
}

/// The same with an agent in a child process: after the keep time no
/// process is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_process_agent_is_gone_after_the_keep_time() {
    use std::sync::{Arc, Mutex};
    let keep = Duration::from_millis(400);
    let pids = Arc::new(Mutex::new(Vec::new()));
    let spawned = Arc::clone(&pids);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // A shell answers each line with an initialize response: enough to be an
    // upstream.
    let script = r#"while read -r line; do printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'; done"#;
    let server = acp::remote::server::Server::new(
        ServerOptions::default().keep_sessions(keep),
        move |_info| {
            let (child, transport) = acp::process::AgentCommand::new("/bin/sh")
                .arg("-c")
                .arg(script)
                .spawn_stdio()?;
            spawned.lock().unwrap().push(child.id().unwrap() as i32);
            Ok(Upstream::new(transport).owned_by(child).label("sh"))
        },
    );
    let _stop = server.shutdown_token().drop_guard();
    tokio::spawn(server.serve(listener));
    let proxy = Proxy::start(addr).await;
    let initialize =
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    for (n, url) in urls(&proxy).into_iter().enumerate() {
        let transport = within(
            "connect",
            acp::remote::connect(&url, ClientOptions::default()),
        )
        .await
        .unwrap();
        let (mut reader, mut writer) = transport.into_parts();
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        writer
            .write_all(format!("{initialize}\n").as_bytes())
            .await
            .unwrap();
        let mut echoed = String::new();
        let mut lines = tokio::io::BufReader::new(&mut reader);
        within("the echo", lines.read_line(&mut echoed))
            .await
            .unwrap();
        assert_eq!(
            echoed.trim_end(),
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            "{url}"
        );
        let pid = pids.lock().unwrap()[n];
        assert!(alive(pid), "{url}");
        // Over HTTP, the client opens its stream after initialize.
        until_attached(addr).await;
        proxy.sever();
        until(&format!("{url}: the agent's process gone"), || !alive(pid)).await;
    }
}

/// Whether process `pid` runs (and is not a zombie).
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    !stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
}

/// The server dies mid-turn (its connections break without a word) and
/// comes back on the same port: the client's resume is answered "unknown
/// connection", and it stops at once with an error that says the server no
/// longer has the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_is_a_clear_error_and_no_hang() {
    for http in [false, true] {
        let served = Served::start(ServerOptions::default(), PAUSE).await;
        let addr = served.addr;
        let proxy = Proxy::start(addr).await;
        let url = if http {
            format!("http://{}/acp", proxy.addr)
        } else {
            format!("ws://{}/acp", proxy.addr)
        };
        let desk = Desk::default();
        let events = Events::default();
        let client = client(&url, reconnecting(&events), &desk).await;
        let session = open_session(&client).await;
        let turn = tokio::spawn({
            let client = client.clone();
            async move { client.prompt(prompt(session.as_ref(), &words(500))).await }
        });
        until("some words", || desk.words() >= 3).await;
        proxy.refuse(true);
        proxy.sever();
        served.stop().await;
        let again = Served::start_on(&addr.to_string(), ServerOptions::default(), PAUSE).await;
        proxy.refuse(false);
        let error = within("the turn's end", turn).await.unwrap().unwrap_err();
        let lost = LinkLost::of(&error).cloned();
        assert_eq!(
            lost,
            Some(LinkLost::Gone { reason: None }),
            "{url}: {error}; {:?}",
            events.all()
        );
        assert!(
            error
                .to_string()
                .contains("the server no longer has the connection"),
            "{error}"
        );
        assert!(
            events
                .all()
                .iter()
                .any(|e| matches!(e, LinkEvent::GaveUp(LinkLost::Gone { .. }))),
            "{:?}",
            events.all()
        );
        again.stop().await;
    }
}

/// A server that shuts down says so over WebSocket, and a reconnecting
/// client believes it: the error comes at once, with no attempt to resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_shutting_down_is_not_resumed() {
    let served = Served::start(ServerOptions::default(), PAUSE).await;
    let url = format!("ws://{}/acp", served.addr);
    let desk = Desk::default();
    let events = Events::default();
    let client = client(&url, reconnecting(&events), &desk).await;
    let session = open_session(&client).await;
    let turn = tokio::spawn({
        let client = client.clone();
        async move { client.prompt(prompt(session.as_ref(), &words(500))).await }
    });
    until("some words", || desk.words() >= 3).await;
    served.stop().await;
    let error = within("the turn's end", turn).await.unwrap().unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the server closed the WebSocket (code 1001): the server is shutting down"),
        "{error}"
    );
    assert_eq!(events.reconnecting(), 0, "{:?}", events.all());
}

/// A client that closes its connection over HTTP is not taken for one whose
/// link broke: the streams the server ends after its `DELETE` are not
/// resumed (no "reconnecting" for a UI to show).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_closing_over_http_is_not_a_break_to_resume() {
    let served = Served::start(ServerOptions::default(), PAUSE).await;
    let url = format!("http://{}/acp", served.addr);
    for _ in 0..5 {
        let desk = Desk::default();
        let events = Events::default();
        let client = client(&url, reconnecting(&events), &desk).await;
        let session = open_session(&client).await;
        let reply = within(
            "the turn",
            client.prompt(prompt(session.as_ref(), &words(3))),
        )
        .await;
        assert_eq!(reply.unwrap().stop_reason, StopReason::EndTurn);
        client.close();
        within("the server's close", async {
            while list_connections(served.addr, "").await.1.contains("\"id\"") {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        // What the client does once its streams end, it does at once.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(events.reconnecting(), 0, "{:?}", events.all());
    }
}
