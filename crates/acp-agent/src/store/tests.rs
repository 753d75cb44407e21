use super::*;
use crate::llm::ToolCallRequest;

fn session(id: &str, cwd: &str, t: i64) -> StoredSession {
    StoredSession {
        id: id.into(),
        cwd: cwd.into(),
        additional_dirs: Vec::new(),
        title: None,
        updated_at_ms: t,
        mode: "ask".into(),
        model: "openai:m".into(),
    }
}

fn start(id: &str, known: i64, text: &str) -> TurnStart {
    TurnStart {
        session_id: id.into(),
        known_version: known,
        cwd: "/p".into(),
        title: Some(text.into()),
        message: Some(Message::user(text)),
        updates: vec![SessionUpdate::user_message(text)],
    }
}

fn append(pos: i64, m: Message, update: &str) -> Append {
    Append {
        messages: vec![(pos, m)],
        updates: vec![SessionUpdate::agent_message(update)],
        ..Append::default()
    }
}

/// The sorted names of the files in `dir`.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn timestamps() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_709_251_199_000), "2024-02-29T23:59:59Z");
    assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
}

#[tokio::test]
async fn turns_are_appended_and_read_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path());
    store.health().await.unwrap();
    store.create(session("a", "/p", 1)).await.unwrap();
    store.create(session("b", "/q", 2)).await.unwrap();
    let t1 = store.begin_turn(start("a", 0, "Hi")).await.unwrap();
    assert_eq!((t1.version, t1.reloaded.clone()), (1, None));
    let call = ToolCallRequest {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: "{}".into(),
    };
    let asked = Message::Assistant {
        text: "Reading.".into(),
        tool_calls: vec![call],
        thinking: vec![],
    };
    let a1 = store
        .append("a", t1.turn, 1, append(1, asked.clone(), "Reading."))
        .await
        .unwrap();
    assert_eq!(
        a1,
        Appended {
            version: 2,
            others_wrote: false
        }
    );
    let result = Message::Tool {
        call_id: "c1".into(),
        content: "text".into(),
    };
    let mut last = append(2, result.clone(), "");
    last.outcome = Some("end_turn".into());
    last.context_tokens = Some(1234);
    store.append("a", t1.turn, 2, last).await.unwrap();
    // A second turn; the first title sticks.
    let t2 = store.begin_turn(start("a", 3, "Other")).await.unwrap();
    assert_eq!(t2.reloaded, None);
    store.close().await;

    let store = Store::open(dir.path());
    let c = store.conversation("a").await.unwrap();
    assert_eq!(
        c.messages,
        [Message::user("Hi"), asked, result, Message::user("Other")]
    );
    assert_eq!((c.version, c.context_tokens), (4, Some(1234)));
    assert_eq!(store.updates("a").await.unwrap().len(), 4);
    let a = store.get("a").await.unwrap().unwrap();
    assert_eq!(a.title.as_deref(), Some("Hi"), "the first title sticks");
    let (all, next) = store.list(None, 0).await.unwrap();
    assert_eq!(
        all.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(next, None);
    let (only_q, _) = store.list(Some("/q".into()), 0).await.unwrap();
    assert_eq!(only_q.len(), 1);
    assert!(store.delete("a").await.unwrap());
    assert!(!store.delete("a").await.unwrap());
    assert!(store.updates("a").await.unwrap().is_empty());
    assert!(store.conversation("a").await.is_err());
}

#[tokio::test]
async fn pages() {
    let store = Store::in_memory();
    for i in 0..(PAGE_SIZE + 3) {
        store
            .create(session(&format!("s{i:03}"), "/p", i as i64))
            .await
            .unwrap();
    }
    let (first, next) = store.list(None, 0).await.unwrap();
    assert_eq!(first.len(), PAGE_SIZE);
    assert_eq!(first[0].id, format!("s{:03}", PAGE_SIZE + 2));
    let (second, next2) = store.list(None, next.unwrap()).await.unwrap();
    assert_eq!(second.len(), 3);
    assert_eq!(next2, None);
}

#[tokio::test]
async fn a_compaction_restarts_the_conversation_and_keeps_the_replay() {
    let store = Store::in_memory();
    store.create(session("a", "/p", 1)).await.unwrap();
    let t1 = store.begin_turn(start("a", 0, "one")).await.unwrap();
    store
        .append("a", t1.turn, 1, append(1, Message::assistant("1"), "1"))
        .await
        .unwrap();
    // The next turn compacts before its prompt, which stays after the summary.
    let t2 = store.begin_turn(start("a", 2, "two")).await.unwrap();
    let summary = Append {
        messages: vec![
            (-2, Message::user("Summary: one")),
            (-1, Message::assistant("Understood.")),
        ],
        starts_history: true,
        ..Append::default()
    };
    store.append("a", t2.turn, 3, summary).await.unwrap();
    store
        .append("a", t2.turn, 4, append(1, Message::assistant("2"), "2"))
        .await
        .unwrap();
    let c = store.conversation("a").await.unwrap();
    assert_eq!(
        c.messages,
        [
            Message::user("Summary: one"),
            Message::assistant("Understood."),
            Message::user("two"),
            Message::assistant("2")
        ]
    );
    // Everything shown is still replayed.
    assert_eq!(store.updates("a").await.unwrap().len(), 4);
}

#[tokio::test]
async fn two_stores_on_one_file_see_each_others_turns() {
    let dir = tempfile::tempdir().unwrap();
    let one = Store::open(dir.path());
    let two = Store::open(dir.path());
    one.create(session("s", "/p", 1)).await.unwrap();
    // Both start a turn knowing version 0; the second is told to reload.
    let a = one.begin_turn(start("s", 0, "from one")).await.unwrap();
    let b = two.begin_turn(start("s", 0, "from two")).await.unwrap();
    assert_eq!(a.reloaded, None);
    assert_eq!(
        b.reloaded.as_ref().map(|c| c.messages.clone()),
        Some(vec![Message::user("from one")])
    );
    // Their answers interleave; each turn is read back whole.
    let x = one
        .append(
            "s",
            a.turn,
            a.version,
            append(1, Message::assistant("one's answer"), "x"),
        )
        .await
        .unwrap();
    assert!(x.others_wrote, "two wrote in between");
    let y = two
        .append(
            "s",
            b.turn,
            b.version,
            append(1, Message::assistant("two's answer"), "y"),
        )
        .await
        .unwrap();
    assert!(y.others_wrote);
    let c = one.conversation("s").await.unwrap();
    assert_eq!(
        c.messages,
        [
            Message::user("from one"),
            Message::assistant("one's answer"),
            Message::user("from two"),
            Message::assistant("two's answer")
        ]
    );
    assert_eq!(c.version, 4);
}

#[tokio::test]
async fn a_new_store_is_never_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("data"));
    store.health().await.unwrap();
    let data = dir.path().join("data");
    assert!(std::fs::metadata(data.join(FILE_NAME)).unwrap().len() > 0);
    assert!(
        files(&data).iter().all(|n| n.starts_with(FILE_NAME)),
        "no temporary files are left: {:?}",
        files(&data)
    );
}

async fn open_error(dir: &Path) -> StoreError {
    let store = Store::open(dir);
    let e = store.health().await.unwrap_err();
    // Every later call fails the same way, and nothing is written.
    assert_eq!(store.create(session("x", "/p", 1)).await.unwrap_err(), e);
    assert_eq!(store.list(None, 0).await.unwrap_err(), e);
    store.close().await;
    e
}

#[tokio::test]
async fn an_empty_file_is_reported_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(FILE_NAME), b"").unwrap();
    let e = open_error(dir.path()).await;
    assert_eq!(e.problem, Problem::Empty);
    assert_eq!(
        std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().len(),
        0
    );
    let rpc = e.to_rpc();
    assert_eq!(rpc.code, acp::schema::ErrorCode::INTERNAL_ERROR);
    assert!(
        rpc.message.contains("is empty (0 bytes)"),
        "{}",
        rpc.message
    );
    assert!(
        rpc.message.contains("--recover-store --data-dir"),
        "{}",
        rpc.message
    );
    assert_eq!(rpc.data.as_ref().unwrap().to_value()["problem"], "empty");
}

#[tokio::test]
async fn a_file_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(FILE_NAME), vec![b'x'; 8192]).unwrap();
    let e = open_error(dir.path()).await;
    assert_eq!(e.problem, Problem::NotADatabase, "{e}");
}

/// A store with enough sessions to fill many pages, closed cleanly.
async fn big_store(dir: &Path) {
    let store = Store::open(dir);
    for i in 0..200 {
        let id = format!("s{i:03}");
        store.create(session(&id, "/p", i)).await.unwrap();
        let t = store
            .begin_turn(start(&id, 0, &"words ".repeat(50)))
            .await
            .unwrap();
        store
            .append(
                &id,
                t.turn,
                1,
                append(1, Message::assistant("answer ".repeat(50)), "a"),
            )
            .await
            .unwrap();
    }
    // Closing folds the log into the file.
    store.close().await;
    assert!(!dir.join(format!("{FILE_NAME}-wal")).exists());
}

/// Overwrites 8 KiB in the middle of the store's file with garbage.
fn garble(dir: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let path = dir.join(FILE_NAME);
    let len = std::fs::metadata(&path).unwrap().len();
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.seek(SeekFrom::Start(len / 2 / 4096 * 4096)).unwrap();
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 13) as u8).collect();
    f.write_all(&garbage).unwrap();
}

#[tokio::test]
async fn garbage_in_the_middle_is_found_at_open_and_recovered_from() {
    let dir = tempfile::tempdir().unwrap();
    big_store(dir.path()).await;
    let before = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
    garble(dir.path());
    let garbled = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
    assert!(before != garbled);
    let e = open_error(dir.path()).await;
    assert_eq!(e.problem, Problem::Corrupt, "{e}");
    let after = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
    let diff: Vec<usize> = (0..after.len().max(garbled.len()))
        .filter(|&i| after.get(i) != garbled.get(i))
        .take(20)
        .collect();
    assert!(
        diff.is_empty(),
        "nothing was written to the damaged file: {} vs {} bytes, first differences at {diff:?}",
        after.len(),
        garbled.len()
    );

    let report = recover::check(dir.path());
    assert!(!report.is_ok());
    assert!(
        report.to_string().contains("acp-agent --recover-store"),
        "{report}"
    );

    let done = recover::recover(dir.path()).unwrap();
    let backup = done.backup.clone().unwrap();
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        garbled,
        "the backup is the old file as it was"
    );
    assert!(
        done.recovered > 0 && done.recovered + done.lost <= 200,
        "{done}"
    );
    let store = Store::open(dir.path());
    store.health().await.unwrap();
    let mut all = Vec::new();
    let mut offset = Some(0);
    while let Some(o) = offset {
        let (page, next) = store.list(None, o).await.unwrap();
        all.extend(page);
        offset = next;
    }
    assert_eq!(all.len(), done.recovered);
    for s in &all {
        let c = store.conversation(&s.id).await.unwrap();
        assert_eq!(c.messages.len(), 2, "{} is whole", s.id);
    }
    assert!(recover::check(dir.path()).is_ok());
}

#[tokio::test]
async fn a_newer_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path());
    store.health().await.unwrap();
    store.close().await;
    let conn = Connection::open(dir.path().join(FILE_NAME)).unwrap();
    conn.pragma_update(None, "user_version", FORMAT + 1)
        .unwrap();
    drop(conn);
    let e = open_error(dir.path()).await;
    assert_eq!(e.problem, Problem::NewerFormat, "{e}");
    assert!(e.detail.contains("format 3"), "{e}");
}

/// Makes `path` unwritable, even for root (`chattr +i`, undone on drop);
/// `None` if that cannot be done here.
#[cfg(unix)]
pub(crate) struct ReadOnly(PathBuf);

#[cfg(unix)]
impl ReadOnly {
    pub(crate) fn make(path: &Path) -> Option<ReadOnly> {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::fs::PermissionsExt;
        // A file this process made belongs to its effective user.
        let probe = tempfile::tempfile().ok()?;
        if probe.metadata().ok()?.uid() != 0 {
            let mode = if path.is_dir() { 0o555 } else { 0o444 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).ok()?;
            return Some(ReadOnly(path.to_path_buf()));
        }
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| ReadOnly(path.to_path_buf()))
    }
}

#[cfg(unix)]
impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
        let mode = if self.0.is_dir() { 0o755 } else { 0o644 };
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(mode));
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_read_only_store_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = Store::open(&data);
    store.health().await.unwrap();
    // Closed, so that no connection of this process keeps the file open for
    // writing (SQLite would reuse it).
    store.close().await;
    let Some(_guard) = ReadOnly::make(&data.join(FILE_NAME)) else {
        eprintln!("skipped: cannot make a file read-only here");
        return;
    };
    let e = open_error(&data).await;
    assert_eq!(e.problem, Problem::Unwritable, "{e}");
    assert!(e.to_rpc().message.contains("cannot be written"), "{e}");
    // A directory that cannot be written, without a store yet.
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let Some(_guard) = ReadOnly::make(&ro) else {
        return;
    };
    let e = open_error(&ro).await;
    assert_eq!(e.problem, Problem::Unwritable, "{e}");
}

/// The store file written by the first format (see
/// `tests/fixtures/store-v1/README.md`) opens with its sessions whole.
#[tokio::test]
async fn the_first_format_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(FILE_NAME),
        include_bytes!("../../tests/fixtures/store-v1/sessions.sqlite3"),
    )
    .unwrap();
    let store = Store::open(dir.path());
    store.health().await.unwrap();
    let (all, _) = store.list(None, 0).await.unwrap();
    assert_eq!(all.len(), 3);
    let a = store
        .get("sess-18ed421c4cc8fa7a-15128-0")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (a.title.as_deref(), a.mode.as_str(), a.cwd.as_str()),
        (Some("Fix the bug"), "auto", "/home/user/project-one")
    );
    let c = store.conversation(&a.id).await.unwrap();
    assert_eq!(c.messages.len(), 4);
    assert_eq!(c.messages[0], Message::user("Fix the bug\nin bug.rs"));
    assert_eq!(c.version, 4);
    let updates = store.updates(&a.id).await.unwrap();
    let kinds: Vec<&str> = updates.iter().map(|u| u.kind()).collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    // New turns go after the migrated one.
    let t = store.begin_turn(start(&a.id, 4, "more")).await.unwrap();
    assert_eq!(t.reloaded, None);
    let c = store.conversation(&a.id).await.unwrap();
    assert_eq!(c.messages.last(), Some(&Message::user("more")));
}

#[tokio::test]
async fn the_last_usage_is_found_and_a_damaged_row_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path());
    store.create(session("a", "/p", 1)).await.unwrap();
    store.create(session("b", "/p", 2)).await.unwrap();
    assert_eq!(store.last_usage("a").await.unwrap(), None);
    let t1 = store.begin_turn(start("a", 0, "Hi")).await.unwrap();
    let usage = |used| SessionUpdate::from(UsageUpdate::new(used, 1000));
    let with_usage = |used| Append {
        updates: vec![usage(used), SessionUpdate::agent_message("x")],
        ..Append::default()
    };
    store.append("a", t1.turn, 1, with_usage(10)).await.unwrap();
    store.append("a", t1.turn, 2, with_usage(20)).await.unwrap();
    // Another session's usage is not this one's.
    let t2 = store.begin_turn(start("b", 0, "Yo")).await.unwrap();
    store.append("b", t2.turn, 1, with_usage(99)).await.unwrap();
    assert_eq!(
        store.last_usage("a").await.unwrap(),
        Some(UsageUpdate::new(20, 1000))
    );
    // A row that is not JSON (damage, or an older agent's bug) after it is
    // skipped, not an error.
    let path = dir.path().join(FILE_NAME);
    let conn = Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO updates (turn_id, session_id, json) VALUES (?1, 'a', '{not json')",
        params![t1.turn.0],
    )
    .unwrap();
    drop(conn);
    assert_eq!(
        store.last_usage("a").await.unwrap(),
        Some(UsageUpdate::new(20, 1000))
    );
}
