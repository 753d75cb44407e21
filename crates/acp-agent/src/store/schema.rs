//! Opening the database file: creating it whole, checking it, and bringing
//! an older format up to date.
//!
//! Formats, by `PRAGMA user_version`:
//! - 0: the first format. `messages` held each session's whole conversation,
//!   rewritten at the end of every turn; `updates` the replay journal; both
//!   keyed by `(session_id, seq)`.
//! - 2: this one. Turns are rows of `turns`; `messages` and `updates` are
//!   appended per turn and never rewritten; compaction appends a summary
//!   that starts the conversation the model sees (`starts_history`).
//!   `sessions.version` counts the writes to a session's conversation, so
//!   a process can tell that another one wrote to it.

use super::error::{Problem, StoreError};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// The format this code writes.
pub const FORMAT: i64 = 2;

/// The name of the database file in the data directory.
pub const FILE_NAME: &str = "sessions.sqlite3";

/// How long a statement waits for another process's lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The tables of format 2 (in schema `main`).
const SCHEMA: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    title TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    mode TEXT NOT NULL,
    model TEXT NOT NULL,
    additional_dirs TEXT NOT NULL DEFAULT '[]',
    context_tokens INTEGER,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_time ON sessions(updated_at DESC, id);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    outcome TEXT
);
CREATE INDEX turns_by_session ON turns(session_id, id);
CREATE TABLE messages (
    turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    pos INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    starts_history INTEGER NOT NULL DEFAULT 0,
    json TEXT NOT NULL,
    PRIMARY KEY (turn_id, pos)
);
CREATE INDEX messages_by_session ON messages(session_id, turn_id, pos);
CREATE TABLE updates (
    id INTEGER PRIMARY KEY,
    turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX updates_by_session ON updates(session_id, turn_id, id);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
";

/// Format 0 to format 2, in place: each session's stored conversation and
/// replay become its one (migrated) turn.
const MIGRATE_0_TO_2: &str = "
ALTER TABLE sessions ADD COLUMN additional_dirs TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sessions ADD COLUMN context_tokens INTEGER;
ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages RENAME TO messages_v0;
ALTER TABLE updates RENAME TO updates_v0;
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    outcome TEXT
);
CREATE INDEX turns_by_session ON turns(session_id, id);
CREATE TABLE messages (
    turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    pos INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    starts_history INTEGER NOT NULL DEFAULT 0,
    json TEXT NOT NULL,
    PRIMARY KEY (turn_id, pos)
);
CREATE INDEX messages_by_session ON messages(session_id, turn_id, pos);
CREATE TABLE updates (
    id INTEGER PRIMARY KEY,
    turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX updates_by_session ON updates(session_id, turn_id, id);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO turns (session_id, started_at, ended_at, outcome)
    SELECT id, created_at, updated_at, 'migrated' FROM sessions
    WHERE id IN (SELECT session_id FROM messages_v0 UNION SELECT session_id FROM updates_v0)
    ORDER BY created_at, id;
INSERT INTO messages (turn_id, pos, session_id, json)
    SELECT t.id, m.seq, m.session_id, m.json
    FROM messages_v0 m JOIN turns t ON t.session_id = m.session_id;
INSERT INTO updates (turn_id, session_id, json)
    SELECT t.id, u.session_id, u.json
    FROM updates_v0 u JOIN turns t ON t.session_id = u.session_id
    ORDER BY u.session_id, u.seq;
UPDATE sessions SET version = (SELECT COUNT(*) FROM messages WHERE messages.session_id = sessions.id);
DROP TABLE messages_v0;
DROP TABLE updates_v0;
";

/// Settings every connection gets.
fn configure(conn: &Connection, path: Option<&Path>) -> Result<(), StoreError> {
    let fail = |e: rusqlite::Error| StoreError::sqlite(path, &e);
    conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
        .map_err(fail)?;
    Ok(())
}

/// A fresh database in memory.
pub fn open_in_memory() -> Result<Connection, StoreError> {
    let conn = Connection::open_in_memory().map_err(|e| StoreError::sqlite(None, &e))?;
    configure(&conn, None)?;
    conn.execute_batch(SCHEMA)
        .and_then(|()| conn.pragma_update(None, "user_version", FORMAT))
        .map_err(|e| StoreError::sqlite(None, &e))?;
    Ok(conn)
}

/// Opens the store in `dir`, creating it (and the directory) if there is
/// none yet. Checks what is there: an empty file, a file that is not a
/// database, damaged pages (`quick_check`), a newer format and a file that
/// cannot be written are errors; an older format is brought up to date.
pub fn open(dir: &Path) -> Result<Connection, StoreError> {
    let path = dir.join(FILE_NAME);
    let at = Some(path.as_path());
    std::fs::create_dir_all(dir).map_err(|e| {
        StoreError::io(
            at,
            &format!("the data directory {} cannot be created", dir.display()),
            &e,
        )
    })?;
    match std::fs::metadata(&path) {
        Ok(m) if m.len() == 0 => {
            return Err(StoreError::new(Problem::Empty, at, "the file has 0 bytes"));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let wal = dir.join(format!("{FILE_NAME}-wal"));
            if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                return Err(StoreError::new(
                    Problem::Corrupt,
                    at,
                    format!(
                        "the file is missing but its write-ahead log {} is still there",
                        wal.display()
                    ),
                ));
            }
            create(dir, &path)?;
        }
        Err(e) => return Err(StoreError::io(at, "the file cannot be read", &e)),
    }
    // Never create the file here: a missing file was handled above.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn =
        Connection::open_with_flags(&path, flags).map_err(|e| StoreError::sqlite(at, &e))?;
    // Until the file is known to be sound, closing must not fold the log
    // into it: nothing is written to a damaged store.
    let no_checkpoint = |conn: &Connection, on: bool| {
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on)
            .map_err(|e| StoreError::sqlite(at, &e))
    };
    no_checkpoint(&conn, true)?;
    configure(&conn, at)?;
    check_and_migrate(&mut conn, at)?;
    no_checkpoint(&conn, false)?;
    Ok(conn)
}

/// A second connection to the store at `path`, which [`open`] checked,
/// for reading only.
pub fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let at = Some(path);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| StoreError::sqlite(at, &e))?;
    configure(&conn, at)?;
    conn.pragma_update(None, "query_only", true)
        .map_err(|e| StoreError::sqlite(at, &e))?;
    Ok(conn)
}

/// Creates a complete, empty store at `path`: built beside it under a
/// temporary name and linked into place, so that `path` is never an empty or
/// half-made file, and a store another process made at the same moment is
/// kept.
fn create(dir: &Path, path: &Path) -> Result<(), StoreError> {
    let at = Some(path);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{FILE_NAME}.new-{}-{nanos}", std::process::id()));
    let built = (|| {
        let conn = Connection::open(&tmp)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA} PRAGMA user_version = {FORMAT}; COMMIT;"
        ))?;
        // Closing the last connection folds the log into the file.
        conn.close().map_err(|(_, e)| e)
    })();
    if let Err(e) = built {
        remove_with_log(&tmp);
        return Err(StoreError::sqlite(at, &e));
    }
    // A hard link never replaces an existing file.
    let linked = std::fs::hard_link(&tmp, path);
    remove_with_log(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::io(at, "the file cannot be created", &e)),
    }
}

/// Removes a database file and its log and shared-memory files.
fn remove_with_log(path: &Path) {
    let _ = std::fs::remove_file(path);
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// The checks of [`open`] on an open connection, then the migration and a
/// write that proves the file can be written.
fn check_and_migrate(conn: &mut Connection, at: Option<&Path>) -> Result<(), StoreError> {
    let fail = |e: rusqlite::Error| StoreError::sqlite(at, &e);
    // Reading the header is where a file that is not a database shows.
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(fail)?;
    let problems = quick_check(conn).map_err(fail)?;
    if !problems.is_empty() {
        return Err(StoreError::new(
            Problem::Corrupt,
            at,
            format!("quick_check: {}", problems.join("; ")),
        ));
    }
    if version > FORMAT {
        return Err(StoreError::new(
            Problem::NewerFormat,
            at,
            format!("format {version}; this acp-agent reads formats up to {FORMAT}"),
        ));
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(fail)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::new(
            Problem::Unwritable,
            at,
            format!("the journal mode cannot be set to WAL (it is {mode})"),
        ));
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    // Another process may have migrated it meanwhile.
    let version: i64 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(fail)?;
    if version == 0 {
        let old = table_exists(&tx, "sessions").map_err(fail)?;
        tx.execute_batch(if old { MIGRATE_0_TO_2 } else { SCHEMA })
            .and_then(|()| tx.pragma_update(None, "user_version", FORMAT))
            .map_err(fail)?;
    }
    // The proof that the file can be written.
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('last_opened_ms', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [super::now_ms().to_string()],
    )
    .map_err(fail)?;
    tx.commit().map_err(fail)
}

/// Whether `name` is a table of schema `main`.
pub fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [name],
        |r| r.get(0),
    )
}

/// `PRAGMA quick_check`: the problems found (none when the pages are sound),
/// at most ten.
pub fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    check_pragma(conn, "quick_check")
}

/// `PRAGMA integrity_check`: like [`quick_check`], and also checks that the
/// indexes match the tables.
pub fn integrity_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    check_pragma(conn, "integrity_check")
}

fn check_pragma(conn: &Connection, pragma: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA {pragma}(10)"))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut problems = Vec::new();
    for row in rows {
        let line = row?;
        if line != "ok" {
            problems.push(line);
        }
    }
    Ok(problems)
}
