//! The tap sees every line in and out, with the right direction, exactly as it
//! crossed the transport (without the newline), unparsable lines included.

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, ConnectionOptions, Direction};
use std::sync::{Arc, Mutex};
use support::*;

type Log = Arc<Mutex<Vec<(Direction, Vec<u8>)>>>;

fn tapped(log: &Log) -> ConnectionOptions {
    let log = log.clone();
    ConnectionOptions::default().tap(move |event| {
        assert!(event.at <= std::time::SystemTime::now());
        log.lock()
            .unwrap()
            .push((event.direction, event.line.to_vec()));
    })
}

fn entry(direction: Direction, line: &str) -> (Direction, Vec<u8>) {
    (direction, line.as_bytes().to_vec())
}

#[tokio::test]
async fn the_tap_sees_every_line_with_its_direction() {
    use Direction::{Incoming, Outgoing};
    let log = Log::default();
    let (_conn, mut peer, _io) = raw_agent(tapped(&log).max_message_size(200), |_| Trivial);

    let request = r#"{"jsonrpc":"2.0","id":1,"method":"logout"}"#;
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_eq!(peer.call(request).await, answer);

    // Unparsable bytes (not even UTF-8) are seen as they came.
    let garbage: &[u8] = b"\xff\xfe not json \x00";
    peer.send_bytes(&[garbage, b"\n"].concat()).await;
    let parse_error = peer.recv().await;
    assert!(parse_error.contains("-32700"), "{parse_error}");

    // A notification (no answer), blank lines (skipped: nothing to see) and an
    // over-long line (discarded unread: nothing to see), then a request.
    let notification = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
    peer.send(notification).await;
    peer.send_bytes(b"\n  \n").await;
    peer.send(&"x".repeat(500)).await;
    let too_long = peer.recv().await;
    assert!(too_long.contains("exceeds the limit"), "{too_long}");
    // CRLF: the tap sees the line without its line ending.
    let request2 = r#"{"jsonrpc":"2.0","id":"two","method":"no/such"}"#;
    peer.send_bytes(format!("{request2}\r\n").as_bytes()).await;
    let answer2 = peer.recv().await;

    let expected = vec![
        entry(Incoming, request),
        entry(Outgoing, answer),
        (Incoming, garbage.to_vec()),
        entry(Outgoing, &parse_error),
        entry(Incoming, notification),
        entry(Outgoing, &too_long),
        entry(Incoming, request2),
        entry(Outgoing, &answer2),
    ];
    assert_eq!(*log.lock().unwrap(), expected);
}

/// Over a pair, one side's outgoing lines are the other side's incoming lines,
/// in the same order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_taps_of_a_pair_agree() {
    struct Talker(AgentSideConnection);
    impl Agent for Talker {
        async fn prompt(
            &self,
            req: PromptRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<PromptResponse, Error> {
            for i in 0..50 {
                self.0
                    .session_notification(message(&req.session_id, i.to_string()))
                    .await?;
            }
            Ok(PromptResponse::new(StopReason::EndTurn))
        }
    }
    let (agent_log, client_log) = (Log::default(), Log::default());
    let pair = connect_with(tapped(&agent_log), tapped(&client_log), Talker, |_| Bare);
    for s in 0..3 {
        within("prompt", pair.client.prompt(prompt(&format!("s{s}"), "go")))
            .await
            .unwrap();
    }
    pair.client.close();
    within("the agent to close", pair.agent.closed()).await;
    within("the agent's I/O", pair.agent_io)
        .await
        .unwrap()
        .unwrap();
    within("the client's I/O", pair.client_io)
        .await
        .unwrap()
        .unwrap();

    let lines = |log: &Log, direction: Direction| -> Vec<Vec<u8>> {
        log.lock()
            .unwrap()
            .iter()
            .filter(|(d, _)| *d == direction)
            .map(|(_, l)| l.clone())
            .collect()
    };
    let agent_out = lines(&agent_log, Direction::Outgoing);
    let client_in = lines(&client_log, Direction::Incoming);
    assert_eq!(agent_out.len(), 3 * 51);
    assert_eq!(agent_out, client_in);
    let client_out = lines(&client_log, Direction::Outgoing);
    assert_eq!(client_out.len(), 3);
    assert_eq!(client_out, lines(&agent_log, Direction::Incoming));
}
