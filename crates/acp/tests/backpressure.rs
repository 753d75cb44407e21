//! The outgoing queue is bounded in bytes: a sender waits while the peer
//! does not read, whatever the sizes of the lines, and everything arrives in
//! order once the peer reads again, including a line larger than the queue.

mod support;

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
