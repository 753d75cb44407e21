//! `session/new` floods against the built agent (with a model configured,
//! so that sessions are stored), and how long other requests wait meanwhile.
//!
//! Each scenario sends `N` `session/new` requests at once and, while they
//! run, `initialize` and `session/list` requests one after another; it
//! prints how fast the sessions were created and the latency of the other
//! requests. In "store locked", another connection holds the database's
//! write lock for the first second, so every `session/new` waits for it;
//! the other requests must not.
//!
//! `cargo bench -p acp-agent --bench store_flood` (`-- N` for another N).

#[path = "../tests/it/support/mod.rs"]
mod support;

use acp::schema::*;
use std::time::{Duration, Instant};
use support::*;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Row {
    scenario: &'static str,
    news_per_s: f64,
    others: Vec<Duration>,
}

async fn flood(n: usize, lock_for: Option<Duration>) -> Row {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path()).display().to_string();
    let mock = MockLlm::start(vec![]).await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    r.new_session(work.path()).await;

    let blocker = lock_for.map(|_| {
        let c = rusqlite::Connection::open(data.path().join("sessions.sqlite3")).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        c
    });
    let started = Instant::now();
    let mut news = tokio::task::JoinSet::new();
    for _ in 0..n {
        let conn = r.conn.clone();
        let cwd = cwd.clone();
        news.spawn(async move { conn.new_session(NewSessionRequest::new(cwd)).await });
    }
    let mut others = Vec::new();
    let mut released = blocker.is_none();
    let mut blocker = blocker;
    while !news.is_empty() {
        if !released && started.elapsed() >= lock_for.unwrap() {
            blocker.take().unwrap().execute_batch("ROLLBACK").unwrap();
            released = true;
        }
        let t = Instant::now();
        r.initialize().await;
        others.push(t.elapsed());
        let t = Instant::now();
        r.conn
            .list_sessions(ListSessionsRequest::new())
            .await
            .unwrap();
        others.push(t.elapsed());
        while let Some(done) = news.try_join_next() {
            done.unwrap().expect("session/new succeeds");
        }
        tokio::task::yield_now().await;
    }
    let elapsed = started.elapsed();
    let creating = elapsed.saturating_sub(lock_for.unwrap_or_default());
    others.sort();
    Row {
        scenario: if lock_for.is_some() {
            "store locked 1 s"
        } else {
            "store free"
        },
        news_per_s: n as f64 / creating.as_secs_f64(),
        others,
    }
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rows = runtime.block_on(async {
        vec![
            flood(n, None).await,
            flood(n, Some(Duration::from_secs(1))).await,
        ]
    });
    println!(
        "{n} session/new at once; initialize and session/list sent one after another meanwhile"
    );
    println!(
        "| scenario | session/new per s (after the lock) | others sent | others p50 | p99 | max |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for row in rows {
        println!(
            "| {} | {:.0} | {} | {:.2?} | {:.2?} | {:.2?} |",
            row.scenario,
            row.news_per_s,
            row.others.len(),
            percentile(&row.others, 0.5),
            percentile(&row.others, 0.99),
            row.others.last().copied().unwrap_or_default()
        );
    }
}
