//! The way out of a damaged store: checking it (`acp-agent --check-store`)
//! and recovering from it (`acp-agent --recover-store`).
//!
//! Recovering moves the store's files aside under a new name (they are kept
//! as they are, as the backup), creates a fresh store, and copies into it
//! every session that can still be read whole from the backup: its metadata,
//! turns, conversation and replay, in either format. A session any part of
//! which cannot be read is left out (and counted); the backup still holds
//! whatever it had.

use super::error::StoreError;
use super::schema::{self, FILE_NAME, FORMAT};
use rusqlite::{Connection, OpenFlags, params};
use std::path::{Path, PathBuf};

/// What `--check-store` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The database file.
    pub path: PathBuf,
    /// What is wrong, if anything.
    pub problem: Option<StoreError>,
    /// Problems `integrity_check` reported (at most ten).
    pub integrity: Vec<String>,
    /// How many sessions, turns and messages it holds, when it can be read.
    pub counts: Option<(i64, i64, i64)>,
}

impl CheckReport {
    /// Whether the store is sound.
    pub fn is_ok(&self) -> bool {
        self.problem.is_none() && self.integrity.is_empty()
    }
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_ok() {
            write!(f, "ok: {}", self.path.display())?;
        } else {
            write!(f, "damaged: {}", self.path.display())?;
        }
        if let Some((sessions, turns, messages)) = self.counts {
            write!(
                f,
                "\n  {sessions} sessions, {turns} turns, {messages} messages (format {FORMAT})"
            )?;
        }
        if let Some(problem) = &self.problem {
            write!(f, "\n  {problem}")?;
        }
        for line in &self.integrity {
            write!(f, "\n  integrity_check: {line}")?;
        }
        if !self.is_ok() {
            let dir = self.path.parent().unwrap_or(Path::new("."));
            write!(
                f,
                "\nTo move it aside (kept as a backup) and start a fresh store with every session \
                 that can still be read:\n  acp-agent --recover-store --data-dir {}",
                dir.display()
            )?;
        }
        Ok(())
    }
}

/// Checks the store in `dir` as opening it does (creating it if missing),
/// then runs the full `integrity_check` and counts what it holds.
pub fn check(dir: &Path) -> CheckReport {
    let path = dir.join(FILE_NAME);
    let mut report = CheckReport {
        path: path.clone(),
        problem: None,
        integrity: Vec::new(),
        counts: None,
    };
    let conn = match schema::open(dir) {
        Ok(conn) => conn,
        Err(e) => {
            report.problem = Some(e);
            return report;
        }
    };
    let at = Some(path.as_path());
    match schema::integrity_check(&conn) {
        Ok(lines) => report.integrity = lines,
        Err(e) => report.problem = Some(StoreError::sqlite(at, &e)),
    }
    let count =
        |table: &str| conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0));
    match (count("sessions"), count("turns"), count("messages")) {
        (Ok(s), Ok(t), Ok(m)) => report.counts = Some((s, t, m)),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            report.problem.get_or_insert(StoreError::sqlite(at, &e));
        }
    }
    report
}

/// What `--recover-store` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverReport {
    /// Where the old files now are (the main file; its log beside it).
    pub backup: Option<PathBuf>,
    /// The fresh store.
    pub path: PathBuf,
    /// Sessions copied into the fresh store.
    pub recovered: usize,
    /// Sessions that could not be read whole (left in the backup).
    pub lost: usize,
    /// Why reading the backup stopped early, if it did.
    pub note: Option<String>,
}

impl std::fmt::Display for RecoverReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backup {
            Some(b) => write!(f, "moved the old store aside: {}", b.display())?,
            None => write!(f, "there was no store to move aside")?,
        }
        write!(
            f,
            "\nnew store: {}\n{} sessions recovered, {} could not be read",
            self.path.display(),
            self.recovered,
            self.lost
        )?;
        if let Some(note) = &self.note {
            write!(f, " ({note})")?;
        }
        Ok(())
    }
}

/// The names the store's files get when moved aside: `sessions.sqlite3`
/// becomes `sessions.sqlite3.damaged-<UTC time>` (with a counter if that is
/// taken), and its `-wal` and `-shm` files follow it.
fn backup_name(dir: &Path) -> PathBuf {
    let now = super::rfc3339(super::now_ms()).replace([':', '-'], "");
    let mut n = 0;
    loop {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = dir.join(format!("{FILE_NAME}.damaged-{now}{suffix}"));
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Moves the store in `dir` aside and starts a fresh one holding every
/// session that can be read whole from the old one. Run it while no agent
/// uses the directory.
pub fn recover(dir: &Path) -> Result<RecoverReport, StoreError> {
    let path = dir.join(FILE_NAME);
    let at = Some(path.as_path());
    let backup = if path.exists() {
        let backup = backup_name(dir);
        std::fs::rename(&path, &backup)
            .map_err(|e| StoreError::io(at, "the file cannot be moved aside", &e))?;
        for suffix in ["-wal", "-shm"] {
            let from = with_suffix(&path, suffix);
            if from.exists() {
                std::fs::rename(&from, with_suffix(&backup, suffix)).map_err(|e| {
                    StoreError::io(at, &format!("{} cannot be moved aside", from.display()), &e)
                })?;
            }
        }
        Some(backup)
    } else {
        None
    };
    let mut fresh = schema::open(dir)?;
    let mut report = RecoverReport {
        backup: backup.clone(),
        path: path.clone(),
        recovered: 0,
        lost: 0,
        note: None,
    };
    let Some(backup) = backup else {
        return Ok(report);
    };
    if std::fs::metadata(&backup).is_ok_and(|m| m.len() == 0) {
        report.note = Some("the old file was empty".into());
        return Ok(report);
    }
    // Read from a scratch copy, so that the backup stays exactly as it was
    // (reading a database in WAL mode may write to its log).
    let scratch = with_suffix(&backup, ".reading");
    let copied = std::fs::copy(&backup, &scratch).and_then(|_| {
        let wal = with_suffix(&backup, "-wal");
        if wal.exists() {
            std::fs::copy(&wal, with_suffix(&scratch, "-wal"))?;
        }
        Ok(())
    });
    let result = match copied {
        Ok(()) => salvage(&mut fresh, &scratch, &mut report).map_err(|e| e.to_string()),
        Err(e) => Err(format!("the backup cannot be copied to read it: {e}")),
    };
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(&scratch, suffix));
    }
    if let Err(e) = result {
        report.note = Some(format!("reading the old store stopped: {e}"));
    }
    Ok(report)
}

/// Copies each session of the store at `old_path` that reads whole into
/// `fresh`, each in a savepoint of its own.
fn salvage(
    fresh: &mut Connection,
    old_path: &Path,
    report: &mut RecoverReport,
) -> rusqlite::Result<()> {
    let old = Connection::open_with_flags(
        old_path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let version: i64 = old.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let ids: Vec<String> = {
        let mut stmt = old.prepare("SELECT id FROM sessions")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut ids = Vec::new();
        for row in rows {
            match row {
                Ok(id) => ids.push(id),
                // The rest of the table cannot be read.
                Err(e) => {
                    report.note = Some(format!("the list of sessions breaks off: {e}"));
                    break;
                }
            }
        }
        ids
    };
    drop(old);
    fresh.execute(
        "ATTACH DATABASE ?1 AS old",
        params![old_path.display().to_string()],
    )?;
    let copy = if version >= 2 { COPY_V2 } else { COPY_V0 };
    for id in ids {
        let sp = fresh.savepoint()?;
        match sp.execute_batch(&copy.replace("?1", &quote(&id))) {
            Ok(()) => {
                sp.commit()?;
                report.recovered += 1;
            }
            Err(_) => {
                drop(sp);
                report.lost += 1;
            }
        }
    }
    fresh.execute_batch("DETACH DATABASE old")?;
    Ok(())
}

/// `s` as an SQL string literal.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Copies session `?1` from a format-2 store attached as `old`.
const COPY_V2: &str = "
INSERT INTO main.sessions SELECT id, cwd, title, created_at, updated_at, mode, model,
    additional_dirs, context_tokens, version FROM old.sessions WHERE id = ?1;
INSERT INTO main.turns SELECT id, session_id, started_at, ended_at, outcome
    FROM old.turns WHERE session_id = ?1;
INSERT INTO main.messages SELECT turn_id, pos, session_id, starts_history, json
    FROM old.messages WHERE session_id = ?1;
INSERT INTO main.updates SELECT id, turn_id, session_id, json
    FROM old.updates WHERE session_id = ?1;
";

/// Copies session `?1` from a format-0 store attached as `old`: its stored
/// conversation and replay become one turn, as the migration does.
const COPY_V0: &str = "
INSERT INTO main.sessions (id, cwd, title, created_at, updated_at, mode, model)
    SELECT id, cwd, title, created_at, updated_at, mode, model FROM old.sessions WHERE id = ?1;
INSERT INTO main.turns (session_id, started_at, ended_at, outcome)
    SELECT id, created_at, updated_at, 'recovered' FROM old.sessions WHERE id = ?1;
INSERT INTO main.messages (turn_id, pos, session_id, json)
    SELECT (SELECT MAX(id) FROM main.turns WHERE session_id = ?1), seq, session_id, json
    FROM old.messages WHERE session_id = ?1;
INSERT INTO main.updates (turn_id, session_id, json)
    SELECT (SELECT MAX(id) FROM main.turns WHERE session_id = ?1), session_id, json
    FROM old.updates WHERE session_id = ?1 ORDER BY seq;
UPDATE main.sessions SET version = (SELECT COUNT(*) FROM main.messages WHERE session_id = ?1)
    WHERE id = ?1;
";
