//! Memory stays bounded against a peer that sends requests and never reads
//! the answers: past the hard cap on queued output the engine stops reading,
//! and when the peer reads nothing for the stall timeout the connection
//! closes with an error that says so.
#![cfg(target_os = "linux")]

use crate::ONE_AT_A_TIME;
use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, ConnectionError, ConnectionOptions, Transport};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::*;

/// Answers every extension request at once with its params.
struct Echo;

impl Agent for Echo {
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        Ok(ExtResponse(req.params))
    }
}

/// The peak resident set size of this process so far, in bytes.
fn peak_resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kib * 1024
}

const REQUESTS: usize = 1_000_000;
const CAP: usize = 16 << 20;

/// What [`flood`] starts: the connection, its I/O task, how many requests the
/// peer has written, and the peer's thread.
type Flood = (
    AgentSideConnection,
    tokio::task::JoinHandle<Result<(), ConnectionError>>,
    Arc<AtomicUsize>,
    std::thread::JoinHandle<()>,
);

/// An agent connection over a socket whose other end is a peer that sends
/// up to a million requests (each answer ~250 bytes: ~250 MB in all) and
/// never reads. Returns the I/O task, the count of requests the peer got
/// written so far, and the peer's thread (which stops when its writes fail,
/// once the connection has closed).
fn flood(options: ConnectionOptions) -> Flood {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socket pair");
    ours.set_nonblocking(true).expect("non-blocking");
    let ours = tokio::net::UnixStream::from_std(ours).expect("tokio socket");
    let (read, write) = ours.into_split();
    let (conn, io) = AgentSideConnection::new(Transport::new(read, write), options, |_| Echo);
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let peer = std::thread::spawn(move || {
        let mut peer = std::io::BufWriter::new(theirs);
        let padding = "p".repeat(200);
        for id in 0..REQUESTS {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"_test/echo","params":{{"pad":"{padding}"}}}}"#
            );
            if writeln!(peer, "{line}").is_err() {
                return;
            }
            counter.store(id + 1, Ordering::SeqCst);
        }
        let _ = peer.flush();
    });
    (conn, tokio::spawn(io), sent, peer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_on_queued_output_the_engine_stops_reading() {
    let _one = ONE_AT_A_TIME.lock().await;
    let before = peak_resident();
    let options = ConnectionOptions::default()
        .max_queued_output(CAP)
        .output_stall_timeout(Duration::from_secs(3600));
    let (conn, io, sent, peer) = flood(options);
    // Wait until the peer can write no more (or has written everything).
    let stopped_at = within("the peer to be held up", async {
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = sent.load(Ordering::SeqCst);
            if now == last || now == REQUESTS {
                return now;
            }
            last = now;
        }
    })
    .await;
    assert!(
        stopped_at < REQUESTS,
        "the engine read all {stopped_at} requests"
    );
    let grown = peak_resident().saturating_sub(before);
    assert!(
        grown < CAP + (48 << 20),
        "peak resident memory grew by {} MiB with a cap of {} MiB",
        grown >> 20,
        CAP >> 20
    );
    conn.close();
    within("the I/O task", io).await.unwrap().unwrap();
    tokio::task::spawn_blocking(move || peer.join().expect("the peer thread"))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_reads_nothing_for_the_stall_timeout_is_closed_with_why() {
    let _one = ONE_AT_A_TIME.lock().await;
    let options = ConnectionOptions::default()
        .max_queued_output(CAP)
        .output_stall_timeout(Duration::from_secs(2));
    let (_conn, io, sent, peer) = flood(options);
    let ended = within("the connection to close", io).await.unwrap();
    match ended {
        Err(ConnectionError::Stalled { waited, queued }) => {
            assert_eq!(waited, Duration::from_secs(2));
            assert!(queued > 0, "closed with nothing queued");
            let message = ConnectionError::Stalled { waited, queued }.to_string();
            assert!(message.contains("read nothing for 2 s"), "{message}");
        }
        other => panic!("expected a stall, got {other:?}"),
    }
    tokio::task::spawn_blocking(move || peer.join().expect("the peer thread"))
        .await
        .unwrap();
    assert!(sent.load(Ordering::SeqCst) < REQUESTS);
}
