//! No request waits behind the store unless it needs it: while another
//! process holds the store's write lock, 10,000 `session/new` requests wait
//! for it, and requests that only read or do not touch the store
//! (`initialize`, `authenticate`, `session/list`, `session/load`) are
//! answered all the same. Once the lock is released every `session/new`
//! succeeds. (How fast, under load, is measured by `benches/store_flood.rs`.)

use crate::support;

use acp::schema::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_session_news_do_not_hold_up_other_requests() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![]).await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let first = r.new_session(&cwd).await;

    // Another process (this test) takes the store's write lock.
    let blocker = rusqlite::Connection::open(data.path().join("sessions.sqlite3")).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let locked_at = std::time::Instant::now();

    let answered = Arc::new(AtomicUsize::new(0));
    let mut news = Vec::with_capacity(10_000);
    for _ in 0..10_000 {
        let conn = r.conn.clone();
        let answered = answered.clone();
        let cwd = cwd.display().to_string();
        news.push(tokio::spawn(async move {
            let result = conn.new_session(NewSessionRequest::new(cwd)).await;
            answered.fetch_add(1, Ordering::SeqCst);
            result
        }));
    }
    for _ in 0..25 {
        r.initialize().await;
        r.conn
            .authenticate(AuthenticateRequest::new("environment"))
            .await
            .unwrap();
        let listed = r
            .conn
            .list_sessions(ListSessionsRequest::new())
            .await
            .unwrap();
        assert_eq!(listed.sessions[0].session_id, first);
        r.conn
            .load_session(LoadSessionRequest::new(
                first.clone(),
                cwd.display().to_string(),
            ))
            .await
            .unwrap();
    }
    assert_eq!(
        answered.load(Ordering::SeqCst),
        0,
        "every session/new waits for the lock"
    );
    let held = locked_at.elapsed();
    assert!(
        held < std::time::Duration::from_secs(5),
        "the lock was held {held:?}, past the agent's busy timeout: this machine is too slow for this test"
    );
    blocker.execute_batch("ROLLBACK").unwrap();
    drop(blocker);

    for n in news {
        n.await
            .unwrap()
            .expect("session/new succeeds once the lock is gone");
    }
    let conn = rusqlite::Connection::open(data.path().join("sessions.sqlite3")).unwrap();
    let count: i64 = conn
        .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 10_001);
}
