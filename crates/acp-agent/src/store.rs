//! Sessions that survive restarts: a SQLite database holding each session's
//! metadata, its conversation with the model, and the updates to replay when
//! a client loads it.

use crate::llm::Message;
use acp::schema::SessionUpdate;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::Mutex;

/// Sessions per page of `session/list`.
pub const PAGE_SIZE: usize = 50;

/// A stored session's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSession {
    /// The session id.
    pub id: String,
    /// Its working directory.
    pub cwd: String,
    /// Its title, once known.
    pub title: Option<String>,
    /// Last activity, in milliseconds since the Unix epoch.
    pub updated_at_ms: i64,
    /// Its mode id.
    pub mode: String,
    /// Its model, as `provider:model`.
    pub model: String,
}

/// The session database.
pub struct Store {
    db: Mutex<Connection>,
}

fn err(e: rusqlite::Error) -> String {
    format!("session database error: {e}")
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `ms` since the epoch as an RFC 3339 UTC timestamp.
pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl Store {
    /// Opens (creating if needed) the database `sessions.sqlite3` in `dir`.
    pub fn open(dir: &Path) -> Result<Store, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("could not create the data directory {}: {e}", dir.display()))?;
        let conn = Connection::open(dir.join("sessions.sqlite3")).map_err(err)?;
        Self::init(conn)
    }

    /// A database that lives in memory only (nothing survives a restart).
    pub fn in_memory() -> Result<Store, String> {
        Self::init(Connection::open_in_memory().map_err(err)?)
    }

    fn init(conn: Connection) -> Result<Store, String> {
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA foreign_keys = ON;
             CREATE TABLE IF NOT EXISTS sessions (
                 id TEXT PRIMARY KEY,
                 cwd TEXT NOT NULL,
                 title TEXT,
                 created_at INTEGER NOT NULL,
                 updated_at INTEGER NOT NULL,
                 mode TEXT NOT NULL,
                 model TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS messages (
                 session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                 seq INTEGER NOT NULL,
                 json TEXT NOT NULL,
                 PRIMARY KEY (session_id, seq)
             );
             CREATE TABLE IF NOT EXISTS updates (
                 session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                 seq INTEGER NOT NULL,
                 json TEXT NOT NULL,
                 PRIMARY KEY (session_id, seq)
             );
             CREATE INDEX IF NOT EXISTS sessions_by_time ON sessions(updated_at DESC, id);",
        )
        .map_err(err)?;
        Ok(Store {
            db: Mutex::new(conn),
        })
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a new session.
    pub fn create(&self, s: &StoredSession) -> Result<(), String> {
        self.db()
            .execute(
                "INSERT INTO sessions (id, cwd, title, created_at, updated_at, mode, model)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)",
                params![s.id, s.cwd, s.title, s.updated_at_ms, s.mode, s.model],
            )
            .map(|_| ())
            .map_err(err)
    }

    /// A session's metadata.
    pub fn get(&self, id: &str) -> Result<Option<StoredSession>, String> {
        self.db()
            .query_row(
                "SELECT id, cwd, title, updated_at, mode, model FROM sessions WHERE id = ?1",
                params![id],
                row_to_session,
            )
            .optional()
            .map_err(err)
    }

    /// Updates a session's mode and model.
    pub fn set_settings(&self, id: &str, mode: &str, model: &str) -> Result<(), String> {
        self.db()
            .execute(
                "UPDATE sessions SET mode = ?2, model = ?3 WHERE id = ?1",
                params![id, mode, model],
            )
            .map(|_| ())
            .map_err(err)
    }

    /// Saves the end of a turn: the whole conversation, the new updates to
    /// replay, the cwd, the title and the time.
    pub fn save_turn(
        &self,
        id: &str,
        cwd: &str,
        title: Option<&str>,
        history: &[Message],
        updates: &[SessionUpdate],
    ) -> Result<(), String> {
        let mut db = self.db();
        let tx = db.transaction().map_err(err)?;
        tx.execute(
            "UPDATE sessions SET updated_at = ?2, cwd = ?3, title = COALESCE(title, ?4) WHERE id = ?1",
            params![id, now_ms(), cwd, title],
        )
        .map_err(err)?;
        tx.execute("DELETE FROM messages WHERE session_id = ?1", params![id])
            .map_err(err)?;
        for (i, m) in history.iter().enumerate() {
            let json = serde_json::to_string(m).map_err(|e| e.to_string())?;
            tx.execute(
                "INSERT INTO messages (session_id, seq, json) VALUES (?1, ?2, ?3)",
                params![id, i as i64, json],
            )
            .map_err(err)?;
        }
        let next: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM updates WHERE session_id = ?1",
                params![id],
                |r| r.get(0),
            )
            .map_err(err)?;
        for (i, u) in updates.iter().enumerate() {
            let json = serde_json::to_string(u).map_err(|e| e.to_string())?;
            tx.execute(
                "INSERT INTO updates (session_id, seq, json) VALUES (?1, ?2, ?3)",
                params![id, next + i as i64, json],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// The JSON column of a session's rows in `table`, in order.
    fn json_rows(&self, table: &str, id: &str) -> Result<Vec<String>, String> {
        let db = self.db();
        let mut stmt = db
            .prepare(&format!(
                "SELECT json FROM {table} WHERE session_id = ?1 ORDER BY seq"
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map(params![id], |r| r.get::<_, String>(0))
            .map_err(err)?;
        rows.map(|row| row.map_err(err)).collect()
    }

    /// A session's conversation with the model.
    pub fn history(&self, id: &str) -> Result<Vec<Message>, String> {
        self.json_rows("messages", id)?
            .iter()
            .map(|json| {
                serde_json::from_str(json).map_err(|e| format!("corrupt stored message: {e}"))
            })
            .collect()
    }

    /// The updates to replay when loading a session (any that no longer
    /// decode are left out).
    pub fn updates(&self, id: &str) -> Result<Vec<SessionUpdate>, String> {
        Ok(self
            .json_rows("updates", id)?
            .iter()
            .filter_map(|json| acp::schema::decode::<SessionUpdate>(json).ok())
            .collect())
    }

    /// One page of sessions, most recent first, optionally only those in
    /// `cwd`; `offset` comes from the previous page's cursor. Returns the
    /// sessions and the next offset, if there are more.
    pub fn list(
        &self,
        cwd: Option<&str>,
        offset: usize,
    ) -> Result<(Vec<StoredSession>, Option<usize>), String> {
        let db = self.db();
        let mut stmt = db
            .prepare(
                "SELECT id, cwd, title, updated_at, mode, model FROM sessions
                 WHERE ?1 IS NULL OR cwd = ?1
                 ORDER BY updated_at DESC, id LIMIT ?2 OFFSET ?3",
            )
            .map_err(err)?;
        let rows = stmt
            .query_map(
                params![cwd, (PAGE_SIZE + 1) as i64, offset as i64],
                row_to_session,
            )
            .map_err(err)?;
        let mut out = rows.collect::<Result<Vec<_>, _>>().map_err(err)?;
        let more = out.len() > PAGE_SIZE;
        out.truncate(PAGE_SIZE);
        Ok((out, more.then_some(offset + PAGE_SIZE)))
    }

    /// Deletes a session and everything stored with it. Returns whether it existed.
    pub fn delete(&self, id: &str) -> Result<bool, String> {
        self.db()
            .execute("DELETE FROM sessions WHERE id = ?1", params![id])
            .map(|n| n > 0)
            .map_err(err)
    }
}

fn row_to_session(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredSession> {
    Ok(StoredSession {
        id: r.get(0)?,
        cwd: r.get(1)?,
        title: r.get(2)?,
        updated_at_ms: r.get(3)?,
        mode: r.get(4)?,
        model: r.get(5)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, cwd: &str, t: i64) -> StoredSession {
        StoredSession {
            id: id.into(),
            cwd: cwd.into(),
            title: None,
            updated_at_ms: t,
            mode: "ask".into(),
            model: "openai:m".into(),
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_709_251_199_000), "2024-02-29T23:59:59Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn round_trip_list_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.create(&session("a", "/p", 1)).unwrap();
        store.create(&session("b", "/q", 2)).unwrap();
        let history = vec![Message::user("hi")];
        let updates = vec![SessionUpdate::user_message("hi")];
        store
            .save_turn("a", "/p", Some("Hi"), &history, &updates)
            .unwrap();
        store
            .save_turn("a", "/p", Some("Other"), &history, &updates)
            .unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.history("a").unwrap(), history);
        assert_eq!(store.updates("a").unwrap().len(), 2);
        let a = store.get("a").unwrap().unwrap();
        assert_eq!(a.title.as_deref(), Some("Hi"), "the first title sticks");
        let (all, next) = store.list(None, 0).unwrap();
        assert_eq!(
            all.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(next, None);
        let (only_q, _) = store.list(Some("/q"), 0).unwrap();
        assert_eq!(only_q.len(), 1);
        assert!(store.delete("a").unwrap());
        assert!(!store.delete("a").unwrap());
        assert!(store.history("a").unwrap().is_empty());
        assert!(store.updates("a").unwrap().is_empty());
    }

    #[test]
    fn pages() {
        let store = Store::in_memory().unwrap();
        for i in 0..(PAGE_SIZE + 3) {
            store
                .create(&session(&format!("s{i:03}"), "/p", i as i64))
                .unwrap();
        }
        let (first, next) = store.list(None, 0).unwrap();
        assert_eq!(first.len(), PAGE_SIZE);
        assert_eq!(first[0].id, format!("s{:03}", PAGE_SIZE + 2));
        let (second, next2) = store.list(None, next.unwrap()).unwrap();
        assert_eq!(second.len(), 3);
        assert_eq!(next2, None);
    }
}
