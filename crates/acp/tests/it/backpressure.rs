//! The outgoing queue is bounded in bytes: a sender waits while the peer
//! does not read, whatever the sizes of the lines, and everything arrives in
//! order once the peer reads again, including a line larger than the queue.
//! Requests never wait for room: they go out in call order behind what is
//! queued.

use crate::support;

use acp::schema::*;
use acp::{AgentSideConnection, ConnectionOptions};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::*;

/// Bytes the queue holds: two of the lines below.
const QUEUE: usize = 20 * 1024;
const LINE_TEXT: usize = 10 * 1024;
const LINES: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sender_waits_for_a_peer_that_does_not_read() {
    let (agent, mut peer, _io): (AgentSideConnection, _, _) =
        raw_agent(ConnectionOptions::default().outgoing_queue(QUEUE), |_| {
            Trivial
        });
    let sent = Arc::new(AtomicUsize::new(0));
    let sender = tokio::spawn({
        let (agent, sent) = (agent.clone(), sent.clone());
        async move {
            let session = SessionId::new("s");
            for i in 0..LINES {
                let text = format!("{i:04}{}", "x".repeat(LINE_TEXT));
                agent.session_notification(message(&session, text)).await?;
                sent.fetch_add(1, Ordering::SeqCst);
            }
            // Larger than the whole queue: it waits for the queue to empty.
            let big = "y".repeat(10 * QUEUE);
            agent.session_notification(message(&session, big)).await
        }
    });

    // Wait until the sender stops making progress.
    let stalled_at = within("the sender to stall", async {
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = sent.load(Ordering::SeqCst);
            if now == last {
                return now;
            }
            last = now;
        }
    })
    .await;
    // What can be in flight: the in-memory pipe (256 KiB), the writer's
    // buffer (64 KiB), the queue, and the line in the sender's hands.
    let in_flight = (256 + 64) * 1024 + QUEUE + LINE_TEXT;
    assert!(
        stalled_at <= in_flight / LINE_TEXT + 1,
        "{stalled_at} lines of 10 KiB went out to a peer that reads nothing"
    );
    assert!(!sender.is_finished());

    // The peer reads again: every line arrives, in order, then the big one.
    for i in 0..LINES {
        let line = peer.recv_json().await;
        let text = line["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap();
        assert_eq!(&text[..4], format!("{i:04}"), "line {i}");
        assert_eq!(text.len(), 4 + LINE_TEXT);
    }
    let big = peer.recv_json().await;
    assert_eq!(
        big["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap()
            .len(),
        10 * QUEUE
    );
    within("the sender to finish", sender)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_made_against_a_full_queue_go_out_in_call_order() {
    let (agent, mut peer, _io): (AgentSideConnection, _, _) =
        raw_agent(ConnectionOptions::default().outgoing_queue(QUEUE), |_| {
            Trivial
        });
    let session = SessionId::new("s");
    // Fill the queue (and the pipe behind it) with notifications the peer
    // does not read yet.
    let filler = tokio::spawn({
        let (agent, session) = (agent.clone(), session.clone());
        async move {
            for _ in 0..LINES {
                let text = "x".repeat(LINE_TEXT);
                agent.session_notification(message(&session, text)).await?;
            }
            Ok::<_, acp::ConnectionError>(())
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!filler.is_finished(), "the queue should be full by now");

    // Calls made now are queued at once, whatever the queue holds, in order.
    let calls: Vec<_> = (0..50)
        .map(|i| agent.read_text_file(ReadTextFileRequest::new(session.clone(), format!("/f{i}"))))
        .collect();
    let mut seen = Vec::new();
    let mut notifications = 0;
    while seen.len() < 50 {
        let line = peer.recv_json().await;
        if line["method"] == "session/update" {
            notifications += 1;
        } else {
            seen.push(line["params"]["path"].as_str().unwrap().to_string());
            let id = &line["id"];
            peer.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":"{}"}}}}"#,
                seen.len()
            ))
            .await;
        }
    }
    let expected: Vec<_> = (0..50).map(|i| format!("/f{i}")).collect();
    assert_eq!(seen, expected);
    for (i, call) in calls.into_iter().enumerate() {
        let read = within("a read", call).await.unwrap();
        assert_eq!(read.content, (i + 1).to_string());
    }
    // The notifications that waited for room all arrive as well.
    while notifications < LINES {
        assert_eq!(peer.recv_json().await["method"], "session/update");
        notifications += 1;
    }
    within("the notifications", filler).await.unwrap().unwrap();
}

/// Answers every extension request at once with its params.
struct EchoExt;

impl acp::Agent for EchoExt {
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        Ok(ExtResponse(req.params))
    }
}

impl acp::Client for EchoExt {
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ExtResponse, Error> {
        Ok(ExtResponse(req.params))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_peers_flooding_each_other_with_requests_do_not_deadlock() {
    // Each side sends far more than the pipe and its small queue hold, and
    // both answer at once: if a reader waited for room to answer, both
    // readers could wait on each other's full pipes forever.
    const CALLS: usize = 3000;
    let small = || ConnectionOptions::default().outgoing_queue(4096);
    let pair = connect_with(small(), small(), |_| EchoExt, |_| EchoExt);
    let payload = "z".repeat(200);
    let from_agent = futures::future::join_all((0..CALLS).map(|i| {
        let request = ExtRequest::new("_test/echo", &format!("a{i}{payload}")).unwrap();
        pair.agent.ext_method(request)
    }));
    let from_client = futures::future::join_all((0..CALLS).map(|i| {
        let request = ExtRequest::new("_test/echo", &format!("c{i}{payload}")).unwrap();
        pair.client.ext_method(request)
    }));
    let (answers_to_agent, answers_to_client) = within(
        "both floods to be answered",
        futures::future::join(from_agent, from_client),
    )
    .await;
    for (i, answer) in answers_to_agent.into_iter().enumerate() {
        let text: String = serde_json::from_str(answer.unwrap().0.get()).unwrap();
        assert_eq!(text, format!("a{i}{payload}"));
    }
    for (i, answer) in answers_to_client.into_iter().enumerate() {
        let text: String = serde_json::from_str(answer.unwrap().0.get()).unwrap();
        assert_eq!(text, format!("c{i}{payload}"));
    }
}
