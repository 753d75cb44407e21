//! A damaged session store is shown, never hidden: each kind of damage
//! makes `session/new`, `session/load` and `session/list` fail with the exact
//! JSON-RPC error below, nothing is written to the file, and the recovery
//! path (`--check-store`, `--recover-store`) works. A turn that cannot be
//! saved says so in the turn and ends with an error.

use crate::support;

use acp::schema::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;

const FILE: &str = "sessions.sqlite3";

/// The advice every error about a damaged file ends with.
fn damage_advice(dir: &Path) -> String {
    let dir = dir.display();
    format!(
        "Nothing is written to it until this is dealt with. Run `acp-agent --check-store --data-dir {dir}` \
         for details, or `acp-agent --recover-store --data-dir {dir}` to move the file aside (it is kept as a \
         backup) and start a fresh store with every session that can still be read; or start the agent \
         with another --data-dir."
    )
}

/// Starts the agent on `data` and checks that every request needing the
/// store fails with `message` and `data`; returns the agent.
async fn every_store_request_fails(data: &Path, message: &str, problem: &str) -> Running {
    let mock = MockLlm::start(vec![]).await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data).await;
    r.initialize().await;
    let store = data.join(FILE).display().to_string();
    let check = |e: acp::ConnectionError, what: &str| {
        let e = e.remote().unwrap_or_else(|| panic!("{what}: {e}")).clone();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{what}");
        assert_eq!(e.message, message, "{what}");
        let d = e.data.unwrap().to_value();
        assert_eq!(d["store"], json!(store), "{what}");
        assert_eq!(d["problem"], problem, "{what}");
        d["detail"].as_str().unwrap().to_string()
    };
    let cwd = data.display().to_string();
    let new = r
        .conn
        .new_session(NewSessionRequest::new(cwd.clone()))
        .await
        .unwrap_err();
    check(new, "session/new");
    let load = r
        .conn
        .load_session(LoadSessionRequest::new("sess-1", cwd))
        .await
        .unwrap_err();
    check(load, "session/load");
    let list = r
        .conn
        .list_sessions(ListSessionsRequest::new())
        .await
        .unwrap_err();
    check(list, "session/list");
    r
}

fn run_agent(data: &Path, arg: &str) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acp-agent"))
        .arg(arg)
        .arg("--data-dir")
        .arg(data)
        .env_clear()
        .env("HOME", data)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The files in `dir` whose names start with `prefix`.
fn files_starting(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn an_empty_store_file() {
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join(FILE);
    std::fs::write(&file, b"").unwrap();
    let message = format!(
        "The session store {} is empty (0 bytes): the sessions it held are gone. {}",
        file.display(),
        damage_advice(data.path())
    );
    let mut r = every_store_request_fails(data.path(), &message, "empty").await;
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0, "left as it was");
    // Standard error says it too, at startup.
    r.process.shutdown().await.unwrap();
    let tail = r.process.stderr_tail().join("\n");
    assert!(tail.contains("is empty (0 bytes)"), "{tail}");

    let (code, out, _) = run_agent(data.path(), "--check-store");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with(&format!("damaged: {}", file.display())),
        "{out}"
    );
    let (code, out, err) = run_agent(data.path(), "--recover-store");
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("0 sessions recovered, 0 could not be read (the old file was empty)"),
        "{out}"
    );
    let backups = files_starting(data.path(), "sessions.sqlite3.damaged-");
    assert_eq!(backups.len(), 1, "{backups:?}");
    let (code, out, _) = run_agent(data.path(), "--check-store");
    assert_eq!(code, 0, "{out}");
}

#[tokio::test]
async fn a_store_file_that_is_not_a_database() {
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join(FILE);
    let junk = b"not sqlite at all\n".repeat(500);
    std::fs::write(&file, &junk).unwrap();
    let message = format!(
        "The session store {} is not a SQLite database (file is not a database). {}",
        file.display(),
        damage_advice(data.path())
    );
    every_store_request_fails(data.path(), &message, "not_a_database").await;
    assert_eq!(std::fs::read(&file).unwrap(), junk, "left as it was");
}

/// Overwrites 8 KiB in the middle of the file with garbage.
fn garble(file: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let len = std::fs::metadata(file).unwrap().len();
    let mut f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.seek(SeekFrom::Start(len / 2 / 4096 * 4096)).unwrap();
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 + 7) as u8).collect();
    f.write_all(&garbage).unwrap();
}

#[tokio::test]
async fn garbage_in_the_middle_of_the_store() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    // A store with enough turns to fill many pages.
    let mock = MockLlm::start(vec![]).await;
    let env = openai_env(&mock);
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    for i in 0..40 {
        let sid = r.new_session(&cwd).await;
        mock.push(text_reply(&"an answer of some length ".repeat(40)));
        r.prompt(&sid, &format!("prompt {i} {}", "words ".repeat(100)))
            .await;
    }
    r.process.shutdown().await.unwrap();
    let (code, out, _) = run_agent(data.path(), "--check-store");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("40 sessions, 40 turns, 80 messages"), "{out}");
    let file = data.path().join(FILE);
    garble(&file);
    let garbled = std::fs::read(&file).unwrap();

    let mock = MockLlm::start(vec![]).await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let e = r
        .conn
        .new_session(NewSessionRequest::new(cwd.display().to_string()))
        .await
        .unwrap_err();
    let e = e.remote().unwrap().clone();
    let d = e.data.clone().unwrap().to_value();
    assert_eq!(d["problem"], "corrupt");
    let detail = d["detail"].as_str().unwrap();
    assert_eq!(
        e.message,
        format!(
            "The session store {} is damaged ({detail}). {}",
            file.display(),
            damage_advice(data.path())
        )
    );
    drop(r);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        garbled,
        "nothing was written to it"
    );

    let (code, out, _) = run_agent(data.path(), "--check-store");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("acp-agent --recover-store --data-dir"),
        "{out}"
    );
    let (code, out, err) = run_agent(data.path(), "--recover-store");
    assert_eq!(code, 0, "{out}{err}");
    let recovered: usize = out
        .lines()
        .find_map(|l| l.split_once(" sessions recovered, "))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(recovered > 0 && recovered <= 40, "{out}");
    let backup = &files_starting(data.path(), "sessions.sqlite3.damaged-")[0];
    assert_eq!(
        &std::fs::read(backup).unwrap(),
        &garbled,
        "the backup is the file as it was"
    );

    // The agent works again, with the sessions that could be read.
    let mock = MockLlm::start(vec![text_reply("fresh")]).await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let mut listed = 0;
    let mut cursor = None;
    loop {
        let mut req = ListSessionsRequest::new();
        if let Some(c) = cursor.take() {
            req = req.cursor(c);
        }
        let page = r.conn.list_sessions(req).await.unwrap();
        listed += page.sessions.len();
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(listed, recovered);
    let sid = r.new_session(&cwd).await;
    assert_eq!(r.prompt(&sid, "hi").await, StopReason::EndTurn);
}

#[tokio::test]
async fn a_store_that_cannot_be_written() {
    let data = tempfile::tempdir().unwrap();
    {
        let mock = MockLlm::start(vec![]).await;
        let env = openai_env(&mock);
        let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
        r.initialize().await;
        r.process.shutdown().await.unwrap();
    }
    let file = data.path().join(FILE);
    let Some(_guard) = ReadOnly::make(&file) else {
        eprintln!("skipped: the file cannot be made read-only here");
        return;
    };
    let message = format!(
        "The session store {} cannot be written (attempt to write a readonly database), so sessions \
         cannot be kept. Make {} and the files in it writable by this user, or start the agent with \
         a writable --data-dir.",
        file.display(),
        data.path().display()
    );
    every_store_request_fails(data.path(), &message, "unwritable").await;
}

#[tokio::test]
async fn a_turn_that_cannot_be_saved_says_so_and_fails() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![Reply::Delayed(
        std::time::Duration::from_millis(500),
        Box::new(text_reply("This answer cannot be kept.")),
    )])
    .await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    let turn = r.spawn_prompt(&sid, "hello");
    wait_until("the model call", || mock.requests().len() == 1).await;
    // The prompt is stored; now the store's log can no longer be written.
    let wal = data.path().join(format!("{FILE}-wal"));
    let Some(_guard) = ReadOnly::make(&wal) else {
        eprintln!("skipped: the log cannot be made read-only here");
        return;
    };
    let err = turn.await.unwrap().expect_err("the turn fails");
    let e = err.remote().unwrap().clone();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(
        e.message.starts_with(&format!(
            "The session store {}",
            data.path().join(FILE).display()
        )),
        "{}",
        e.message
    );
    let text = r.client.rec.message_text();
    assert!(
        text.starts_with("This answer cannot be kept.\n\n⚠️ This turn could not be saved: it will be missing when the session is loaded again. The session store "),
        "{text}"
    );
}
