//! `ConnectionOptions::on_dropped`: every message the engine drops instead of
//! handling is reported once, in arrival order with the notification
//! handlers, and the connection keeps serving.

use crate::support;

use acp::schema::*;
use acp::{Client, ConnectionOptions, Dropped};
use std::sync::{Arc, Mutex};
use support::*;

type Log = Arc<Mutex<Vec<String>>>;

/// Logs each agent message it receives.
struct Recorder(Log);

impl Client for Recorder {
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        // Give a report that overtook this handler the time to show it.
        tokio::task::yield_now().await;
        self.0
            .lock()
            .unwrap()
            .push(format!("update {}", message_text(&n).unwrap_or_default()));
        Ok(())
    }
}

fn update(text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
    )
}

const LIMIT: usize = 256;

fn recording_client() -> (Log, RawPeer) {
    let log = Log::default();
    let reports = log.clone();
    let options = ConnectionOptions::default()
        .max_message_size(LIMIT)
        .on_dropped(move |d: &Dropped| reports.lock().unwrap().push(format!("dropped {d:?}")));
    let (conn, peer, _io) = raw_client(options, {
        let log = log.clone();
        move |_| Recorder(log)
    });
    // The handle may go: the I/O task keeps the connection open.
    drop(conn);
    (log, peer)
}

/// Waits until `log` holds `n` entries.
async fn settle(log: &Log, n: usize) -> Vec<String> {
    within("the reports", async {
        loop {
            let entries = log.lock().unwrap().clone();
            if entries.len() >= n {
                return entries;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    })
    .await
}

#[tokio::test]
async fn each_dropped_message_is_reported_in_order_with_the_notifications() {
    let (log, mut peer) = recording_client();
    let too_long = update(&"x".repeat(LIMIT));
    let lines = [
        update("one"),
        too_long.clone(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":42}}}"#.to_string(),
        update("two"),
        "{not json".to_string(),
        r#"{"jsonrpc":"2.0","method":"session/update"}"#.to_string(),
        "[1,2]".to_string(),
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":[1]}}"#.to_string(),
        update("three"),
    ];
    for line in &lines {
        peer.send(line).await;
    }
    let entries = settle(&log, 9).await;
    let expected: Vec<String> = vec![
        "update one".into(),
        format!(
            "dropped TooLong {{ size: {}, limit: {LIMIT}, id: None }}",
            too_long.len()
        ),
        r#"dropped BadNotification { method: "session/update", reason: "update.content: invalid type: integer `42`, expected a map" }"#.into(),
        "update two".into(),
        r#"dropped Unparsable { reason: "key must be a string" }"#.into(),
        r#"dropped BadNotification { method: "session/update", reason: "missing field `sessionId`" }"#.into(),
        r#"dropped Invalid { reason: "a message must be a JSON object" }"#.into(),
        r#"dropped BadNotification { method: "$/cancel_request", reason: "requestId: invalid type: sequence, expected null, an integer or a string" }"#.into(),
        "update three".into(),
    ];
    assert_eq!(entries, expected);

    // The requests among them were answered; the notifications were not.
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(peer.recv().await);
    }
    assert_eq!(
        answers,
        [
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"Invalid request","data":"message of {} bytes exceeds the limit of {LIMIT} bytes"}}}}"#,
                too_long.len()
            ),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"key must be a string"}}"#.to_string(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#.to_string(),
        ]
    );
}

#[test]
fn reports_read_as_sentences() {
    let shown = [
        Dropped::TooLong {
            size: 300,
            limit: 256,
            id: None,
        },
        Dropped::TooLong {
            size: 300,
            limit: 256,
            id: Some(RequestId::Str("7".into())),
        },
        Dropped::Unparsable {
            reason: "EOF while parsing".into(),
        },
        Dropped::Invalid {
            reason: "a response needs an `id`".into(),
        },
        Dropped::BadNotification {
            method: "session/update".into(),
            reason: "update: missing field `sessionUpdate`".into(),
        },
    ]
    .map(|d| d.to_string());
    assert_eq!(
        shown,
        [
            "a message of 300 bytes, over the limit of 256 bytes, was skipped",
            r#"a message of 300 bytes with id "7", over the limit of 256 bytes, was skipped"#,
            "a line that is not JSON: EOF while parsing",
            "not a JSON-RPC message: a response needs an `id`",
            "a session/update notification with bad params: update: missing field `sessionUpdate`",
        ]
    );
}
