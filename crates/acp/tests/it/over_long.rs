//! A line over the size limit is skipped unread, but the reader still finds
//! its top-level `id` while the bytes pass: an over-long answer fails exactly
//! the request it answers (the others go on), an over-long request is
//! refused under its own id, and an `"id"` inside a nested value or a string
//! is never taken for the message's.

use crate::support;

use acp::schema::*;
use acp::{ClientSideConnection, ConnectionError, ConnectionOptions, Dropped};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use support::*;
use tokio::task::JoinHandle;

const LIMIT: usize = 1024;

/// Larger than the connection's 64 KiB read buffer, so the id after it
/// arrives in another read.
fn filler() -> String {
    "x".repeat(200 * 1024)
}

type Reports = Arc<Mutex<Vec<Dropped>>>;

struct Calls {
    client: ClientSideConnection,
    peer: RawPeer,
    reports: Reports,
    /// Three `logout` calls in flight, with their ids as sent.
    calls: Vec<(Value, JoinHandle<Result<LogoutResponse, ConnectionError>>)>,
}

async fn three_calls() -> Calls {
    let reports = Reports::default();
    let seen = reports.clone();
    let options = ConnectionOptions::default()
        .max_message_size(LIMIT)
        .on_dropped(move |d: &Dropped| seen.lock().unwrap().push(d.clone()));
    let (client, mut peer, _io) = raw_client(options, |_| Bare);
    let mut calls = Vec::new();
    for _ in 0..3 {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.logout(LogoutRequest::new()).await }
        });
        let request = peer.recv_json().await;
        assert_eq!(request["method"], "logout");
        calls.push((request["id"].clone(), call));
    }
    Calls {
        client,
        peer,
        reports,
        calls,
    }
}

impl Calls {
    /// Sends `line`, then answers every call but `failed` properly; asserts
    /// that `failed` (if any) fails with the size of `line` and that the
    /// others succeed.
    async fn answer(mut self, line: &str, failed: Option<usize>) -> Self {
        assert!(line.len() > LIMIT);
        self.peer.send(line).await;
        if let Some(n) = failed {
            let (_, call) = self.calls.remove(n);
            let err = within("the failed call", call).await.unwrap().unwrap_err();
            assert!(
                matches!(err, ConnectionError::TooLong { size, limit: LIMIT } if size == line.len()),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "the peer's answer of {} bytes was over the limit of {LIMIT} bytes for one \
                     message and was dropped",
                    line.len()
                )
            );
        }
        // The others still wait; answered now, they succeed.
        for (id, call) in self.calls.drain(..) {
            assert!(!call.is_finished(), "call {id} ended early");
            self.peer
                .send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#))
                .await;
            within("a call answered after the over-long line", call)
                .await
                .unwrap()
                .unwrap();
        }
        self
    }

    /// Closes the connection and asserts the peer was sent exactly `lines`
    /// after the three requests.
    async fn sent_after(mut self, lines: &[String]) -> Vec<Dropped> {
        self.client.close();
        for line in lines {
            assert_eq!(&self.peer.recv().await, line);
        }
        assert_eq!(self.peer.next_line().await, None);
        reports_of(&self.reports, 1).await
    }
}

/// The reports, once there are `n` (they come in order on the notification lane).
async fn reports_of(reports: &Reports, n: usize) -> Vec<Dropped> {
    within("the reports", async {
        loop {
            let got = reports.lock().unwrap().clone();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    })
    .await
}

fn too_long(size: usize, id: Option<RequestId>) -> Dropped {
    Dropped::TooLong {
        size,
        limit: LIMIT,
        id,
    }
}

#[tokio::test]
async fn an_answer_with_its_id_first_fails_that_request_alone() {
    let calls = three_calls().await;
    let id = calls.calls[1].0.clone();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"f":"{}"}}}}"#,
        filler()
    );
    let reports = calls.answer(&line, Some(1)).await.sent_after(&[]).await;
    let id = RequestId::Number(id.as_i64().unwrap());
    assert_eq!(reports, [too_long(line.len(), Some(id))]);
}

#[tokio::test]
async fn an_answer_with_its_id_last_after_megabytes_fails_that_request_alone() {
    let calls = three_calls().await;
    let id = calls.calls[2].0.clone();
    let line = format!(
        r#"{{"jsonrpc":"2.0","error":{{"code":1,"message":"{}","data":[{{}},[]]}},"id":{id}}}"#,
        filler().repeat(10)
    );
    let reports = calls.answer(&line, Some(2)).await.sent_after(&[]).await;
    let id = RequestId::Number(id.as_i64().unwrap());
    assert_eq!(reports, [too_long(line.len(), Some(id))]);
}

#[tokio::test]
async fn an_id_inside_the_result_is_not_the_answers_id() {
    let calls = three_calls().await;
    let id = calls.calls[0].0.clone();
    let line = format!(
        r#"{{"jsonrpc":"2.0","result":{{"id":{id},"f":"{}"}}}}"#,
        filler()
    );
    // Nothing fails: the line is answered as an unknown one, under null.
    let sent = format!(
        r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"Invalid request","data":"message of {} bytes exceeds the limit of {LIMIT} bytes"}}}}"#,
        line.len()
    );
    let reports = calls.answer(&line, None).await.sent_after(&[sent]).await;
    assert_eq!(reports, [too_long(line.len(), None)]);
}

#[tokio::test]
async fn an_id_inside_a_string_is_not_the_answers_id() {
    let calls = three_calls().await;
    let (decoy, real) = (calls.calls[0].0.clone(), calls.calls[1].0.clone());
    let line = format!(
        r#"{{"jsonrpc":"2.0","result":{{"f":"{}\",\"id\":{decoy},\"g\":\"","h":["\"id\":{decoy}"]}},"id":{real}}}"#,
        filler()
    );
    let reports = calls.answer(&line, Some(1)).await.sent_after(&[]).await;
    let real = RequestId::Number(real.as_i64().unwrap());
    assert_eq!(reports, [too_long(line.len(), Some(real))]);
}

#[tokio::test]
async fn escaped_quotes_and_backslashes_do_not_end_a_string_early() {
    let calls = three_calls().await;
    let (decoy, real) = (calls.calls[2].0.clone(), calls.calls[0].0.clone());
    // `\"` is a quote inside the string and `\\` a backslash; the `"` after
    // `\\` ends the string, so `"id":{real}` is a member and the decoy is not.
    let line = format!(
        r#"{{"jsonrpc":"2.0","result":"{}\",\"id\":{decoy},\\","id":{real}}}"#,
        filler()
    );
    let reports = calls.answer(&line, Some(0)).await.sent_after(&[]).await;
    let real = RequestId::Number(real.as_i64().unwrap());
    assert_eq!(reports, [too_long(line.len(), Some(real))]);
}

#[tokio::test]
async fn an_over_long_request_is_refused_under_its_string_id() {
    let reports = Reports::default();
    let seen = reports.clone();
    let options = ConnectionOptions::default()
        .max_message_size(LIMIT)
        .on_dropped(move |d: &Dropped| seen.lock().unwrap().push(d.clone()));
    let (_client, mut peer, _io) = raw_client(options, |_| Bare);
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"fs/write_text_file","params":{{"sessionId":"s","path":"/a","content":"{}","id":7}},"id":"w\"1"}}"#,
        filler()
    );
    assert_eq!(
        peer.call(&line).await,
        format!(
            r#"{{"jsonrpc":"2.0","id":"w\"1","error":{{"code":-32600,"message":"Invalid request","data":"message of {} bytes exceeds the limit of {LIMIT} bytes"}}}}"#,
            line.len()
        )
    );
    // A notification has no id to answer under; it is refused under null
    // as before, and the connection serves on.
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"id":3,"t":"{}"}}}}"#,
        filler()
    );
    assert_eq!(
        peer.call(&note).await,
        format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"Invalid request","data":"message of {} bytes exceeds the limit of {LIMIT} bytes"}}}}"#,
            note.len()
        )
    );
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#).await,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}}"#
    );
    assert_eq!(
        reports_of(&reports, 2).await,
        [
            too_long(line.len(), Some(RequestId::Str("w\"1".into()))),
            too_long(note.len(), None)
        ]
    );
}
