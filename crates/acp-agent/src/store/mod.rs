//! Sessions that survive restarts, crashes and a second agent process: a
//! SQLite database holding each session's metadata, its turns, its
//! conversation with the model and the updates to replay when a client
//! loads it.
//!
//! # Guarantees
//! - **Appended, never rewritten.** A turn is a row of `turns`; the user's
//!   prompt is stored when the turn starts, and each model message and tool
//!   result as soon as it is complete, each in a transaction of its own with
//!   the updates that showed it. A crash (even `kill -9`) loses at most the
//!   message in flight. Compaction appends a summary that the conversation
//!   restarts from; what it summarised stays stored and is still replayed.
//! - **Several processes, one file.** The database is in WAL mode with a busy
//!   timeout of 5 s, and every write is an immediate transaction, so two
//!   agent processes on one data directory (two editor windows) never lose
//!   each other's writes. Each write to a session's conversation bumps
//!   `sessions.version`; a process that finds the version moved since it
//!   last looked reloads the conversation before the next turn, so both
//!   windows' turns are in it. Rows are read in turn order, so turns that ran
//!   at the same time are each kept whole.
//! - **Off the connection's reader.** The database is used by two threads of
//!   its own, one writing and one reading (WAL lets reads go on while a write
//!   waits); every call hands one of them a job and awaits the answer. So no
//!   request of the client waits behind the store unless it needs it, and
//!   reads (`session/list`, `session/load`) do not wait behind writes.
//! - **Damage is reported, never hidden.** Opening checks the file (an empty
//!   file, one that is not a database, `quick_check`, a newer format, a file
//!   that cannot be written); a store found damaged, then or later, refuses
//!   every call with a [`StoreError`] that says what is wrong and what to do,
//!   and nothing more is written to it. `acp-agent --check-store` and
//!   `--recover-store` (see [`recover`]) are the way out.
//! - **Durability**: `synchronous = NORMAL`. A crash of the agent loses
//!   nothing committed; a power cut or an operating system crash may lose
//!   the last commits, never the database's consistency.
//!
//! A store in an older format is brought up to date when opened, in one
//! transaction (see `schema`).

mod error;
pub mod recover;
mod schema;

pub use error::{Problem, StoreError};
pub use schema::{FILE_NAME, FORMAT};

use crate::llm::Message;
use acp::schema::{SessionUpdate, UsageUpdate};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, mpsc};

/// Sessions per page of `session/list`.
pub const PAGE_SIZE: usize = 50;

/// A stored session's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSession {
    /// The session id.
    pub id: String,
    /// Its working directory.
    pub cwd: String,
    /// Its other workspace roots.
    pub additional_dirs: Vec<String>,
    /// Its title, once known.
    pub title: Option<String>,
    /// Last activity, in milliseconds since the Unix epoch.
    pub updated_at_ms: i64,
    /// Its mode id.
    pub mode: String,
    /// Its model, as `provider:model`.
    pub model: String,
}

/// Starts a thread that owns the connection `open` makes and runs the jobs
/// sent to the returned queue, in order. A connection that cannot be made
/// breaks the store.
fn spawn_worker(
    name: &str,
    path: Option<PathBuf>,
    broken: Arc<OnceLock<StoreError>>,
    open: impl FnOnce() -> Result<Connection, StoreError> + Send + 'static,
) -> mpsc::Sender<Msg> {
    let (jobs, queue) = mpsc::channel::<Msg>();
    let thread_broken = broken.clone();
    let thread_path = path.clone();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut conn = match open() {
                Ok(conn) => Some(conn),
                Err(e) => {
                    let _ = thread_broken.set(e);
                    None
                }
            };
            let closed = StoreError::new(
                Problem::Other,
                thread_path.as_deref(),
                "the store is closed",
            );
            for msg in queue {
                match msg {
                    Msg::Close(done) => {
                        drop(conn.take());
                        let _ = done.send(());
                    }
                    Msg::Job(job) => match (&mut conn, thread_broken.get()) {
                        (_, Some(e)) => job(Err(e)),
                        (Some(conn), None) => job(Ok(conn)),
                        (None, None) => job(Err(&closed)),
                    },
                }
            }
        });
    if let Err(e) = spawned {
        let _ = broken.set(StoreError::new(
            Problem::Other,
            path.as_deref(),
            format!("the store's thread could not be started: {e}"),
        ));
    }
    jobs
}

/// A stored turn's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnId(pub i64);

/// A session's conversation as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The messages the model sees: from the last compaction on.
    pub messages: Vec<Message>,
    /// The session's write count when it was read.
    pub version: i64,
    /// How many tokens the conversation took at its last model call.
    pub context_tokens: Option<u64>,
}

/// The start of a turn, as [`Store::begin_turn`] stores it.
#[derive(Debug, Clone)]
pub struct TurnStart {
    /// The session.
    pub session_id: String,
    /// The session's write count as this process last knew it; when the
    /// store's differs, the conversation is read again.
    pub known_version: i64,
    /// The session's working directory.
    pub cwd: String,
    /// The session's title, if it has one now (the first title sticks).
    pub title: Option<String>,
    /// The user's message to the model (none for `/compact`).
    pub message: Option<Message>,
    /// The updates that show the prompt, for replay.
    pub updates: Vec<SessionUpdate>,
}

/// What [`Store::begin_turn`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnStarted {
    /// The new turn.
    pub turn: TurnId,
    /// The session's write count now.
    pub version: i64,
    /// The conversation before this turn's message, when another process
    /// wrote to it since `known_version`.
    pub reloaded: Option<Conversation>,
}

/// Messages and updates to add to a running turn.
#[derive(Debug, Clone, Default)]
pub struct Append {
    /// Each message with its position in the turn (the user's prompt is 0;
    /// a compaction summary takes negative positions, before it).
    pub messages: Vec<(i64, Message)>,
    /// Whether the first message starts the conversation the model sees
    /// (a compaction summary).
    pub starts_history: bool,
    /// Updates to replay.
    pub updates: Vec<SessionUpdate>,
    /// The conversation's size at the last model call, if known.
    pub context_tokens: Option<u64>,
    /// Set when the turn ends: how it ended.
    pub outcome: Option<String>,
}

/// What [`Store::append`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The session's write count now.
    pub version: i64,
    /// Whether another process wrote to the session since `known_version`.
    pub others_wrote: bool,
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `ms` since the epoch as an RFC 3339 UTC timestamp, to the second
/// (clamped to the years 9999 BC to 9999 AD, which `jiff` can represent).
pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000).clamp(
        jiff::Timestamp::MIN.as_second(),
        jiff::Timestamp::MAX.as_second(),
    );
    let at = jiff::Timestamp::from_second(secs).expect("a second within jiff's range");
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The database's work, handed to its thread.
type Job = Box<dyn FnOnce(Result<&mut Connection, &StoreError>) + Send>;

/// What a store thread is sent.
enum Msg {
    /// Work to run.
    Job(Job),
    /// Close the connection, then say so.
    Close(tokio::sync::oneshot::Sender<()>),
}

/// The session store: cheap to clone, all clones share one database and
/// its thread.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: Option<PathBuf>,
    /// The writing thread's queue (which also opens and checks the file).
    writes: mpsc::Sender<Msg>,
    /// The reading thread's queue (the writing thread's for a store in
    /// memory).
    reads: mpsc::Sender<Msg>,
    /// Set when the store is found damaged (or cannot be opened): every
    /// later call fails with it.
    broken: Arc<OnceLock<StoreError>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .field("broken", &self.inner.broken.get())
            .finish()
    }
}

impl Store {
    /// The store `sessions.sqlite3` in `dir`, created if there is none. It is
    /// opened and checked on the store's thread, so this returns at once; a
    /// problem found there fails every call (see [`Store::health`]).
    pub fn open(dir: &Path) -> Store {
        let dir = dir.to_path_buf();
        let file = dir.join(FILE_NAME);
        let path = Some(file.clone());
        let broken = Arc::new(OnceLock::new());
        let (opened_tx, opened_rx) = mpsc::channel::<bool>();
        let first = broken.clone();
        let writes = spawn_worker("acp-agent-store", path.clone(), broken.clone(), move || {
            let conn = schema::open(&dir);
            // The writer's problem is the one reported, not the reader's.
            if let Err(e) = &conn {
                let _ = first.set(e.clone());
            }
            let _ = opened_tx.send(conn.is_ok());
            conn
        });
        let reads = spawn_worker(
            "acp-agent-store-reads",
            path.clone(),
            broken.clone(),
            move || {
                // Opened once the writer has checked (or made) the file.
                if opened_rx.recv() != Ok(true) {
                    return Err(StoreError::new(
                        Problem::Other,
                        Some(&file),
                        "the store could not be opened",
                    ));
                }
                schema::open_reader(&file)
            },
        );
        Store {
            inner: Arc::new(Inner {
                path,
                writes,
                reads,
                broken,
            }),
        }
    }

    /// A store that lives in memory only (nothing survives a restart).
    pub fn in_memory() -> Store {
        let broken = Arc::new(OnceLock::new());
        let writes = spawn_worker(
            "acp-agent-store",
            None,
            broken.clone(),
            schema::open_in_memory,
        );
        Store {
            inner: Arc::new(Inner {
                path: None,
                reads: writes.clone(),
                writes,
                broken,
            }),
        }
    }

    /// The database file (`None` for a store in memory).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Waits until the store is open; the problem that stops it from being
    /// used, if any.
    pub async fn health(&self) -> Result<(), StoreError> {
        self.call(|_, _| Ok(())).await?;
        self.read(|_, _| Ok(())).await
    }

    /// Runs `f` on the writing thread.
    async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection, Option<&Path>) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.run(&self.inner.writes, f).await
    }

    /// Runs `f` on the reading thread (`f` must not write).
    async fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection, Option<&Path>) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.run(&self.inner.reads, f).await
    }

    /// Closes the database (folding its log into the file when this is the
    /// last connection to it) and waits until it is closed; every later call
    /// fails.
    pub async fn close(&self) {
        for queue in [&self.inner.writes, &self.inner.reads] {
            let (tx, rx) = tokio::sync::oneshot::channel();
            if queue.send(Msg::Close(tx)).is_ok() {
                let _ = rx.await;
            }
        }
    }

    /// Runs `f` on the thread of `queue`. A failure that shows the file
    /// damaged breaks the store for good.
    async fn run<R: Send + 'static>(
        &self,
        queue: &mpsc::Sender<Msg>,
        f: impl FnOnce(&mut Connection, Option<&Path>) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        if let Some(e) = self.inner.broken.get() {
            return Err(e.clone());
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let path = self.inner.path.clone();
        let broken = self.inner.broken.clone();
        let job: Job = Box::new(move |conn| {
            let result = match conn {
                Err(e) => Err(e.clone()),
                Ok(conn) => {
                    let at = path.as_deref();
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(conn, at))).unwrap_or_else(
                        |_| {
                            Err(StoreError::new(
                                Problem::Other,
                                at,
                                "a store operation panicked",
                            ))
                        },
                    )
                }
            };
            if let Err(e) = &result
                && e.problem.is_damage()
            {
                let _ = broken.set(e.clone());
            }
            let _ = tx.send(result);
        });
        let gone = || {
            StoreError::new(
                Problem::Other,
                self.path(),
                "the store's thread has stopped",
            )
        };
        queue.send(Msg::Job(job)).map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// Records a new session.
    pub async fn create(&self, s: StoredSession) -> Result<(), StoreError> {
        self.call(move |db, at| {
            let dirs = serde_json::to_string(&s.additional_dirs).unwrap_or_else(|_| "[]".into());
            db.execute(
                "INSERT INTO sessions (id, cwd, title, created_at, updated_at, mode, model, additional_dirs)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)",
                params![s.id, s.cwd, s.title, s.updated_at_ms, s.mode, s.model, dirs],
            )
            .map(|_| ())
            .map_err(|e| StoreError::sqlite(at, &e))
        })
        .await
    }

    /// A session's metadata.
    pub async fn get(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        let id = id.to_string();
        self.read(move |db, at| {
            db.query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                params![id],
                row_to_session,
            )
            .optional()
            .map_err(|e| StoreError::sqlite(at, &e))
        })
        .await
    }

    /// Updates a session's mode and model.
    pub async fn set_settings(&self, id: &str, mode: &str, model: &str) -> Result<(), StoreError> {
        let (id, mode, model) = (id.to_string(), mode.to_string(), model.to_string());
        self.call(move |db, at| {
            db.execute(
                "UPDATE sessions SET mode = ?2, model = ?3 WHERE id = ?1",
                params![id, mode, model],
            )
            .map(|_| ())
            .map_err(|e| StoreError::sqlite(at, &e))
        })
        .await
    }

    /// A session's conversation with the model, from its last compaction on.
    pub async fn conversation(&self, id: &str) -> Result<Conversation, StoreError> {
        let id = id.to_string();
        self.read(move |db, at| read_conversation(db, &id).map_err(|e| e.at(at)))
            .await
    }

    /// The updates to replay when loading a session, in turn order (any
    /// that no longer decode are left out).
    pub async fn updates(&self, id: &str) -> Result<Vec<SessionUpdate>, StoreError> {
        let id = id.to_string();
        self.read(move |db, at| {
            let mut stmt = db
                .prepare("SELECT json FROM updates WHERE session_id = ?1 ORDER BY turn_id, id")
                .map_err(|e| StoreError::sqlite(at, &e))?;
            let rows = stmt
                .query_map(params![id], |r| r.get::<_, String>(0))
                .map_err(|e| StoreError::sqlite(at, &e))?;
            let mut out = Vec::new();
            for row in rows {
                let json = row.map_err(|e| StoreError::sqlite(at, &e))?;
                if let Ok(update) = acp::schema::decode::<SessionUpdate>(&json) {
                    out.push(update);
                }
            }
            Ok(out)
        })
        .await
    }

    /// The last `usage_update` stored for the session, if any (one that no
    /// longer decodes counts as none).
    pub async fn last_usage(&self, id: &str) -> Result<Option<UsageUpdate>, StoreError> {
        let id = id.to_string();
        self.read(move |db, at| {
            // `json_valid` first: a damaged row is skipped, not an error.
            let json: Option<String> = db
                .query_row(
                    "SELECT json FROM updates WHERE session_id = ?1
                     AND CASE WHEN json_valid(json)
                         THEN json_extract(json, '$.sessionUpdate') END = 'usage_update'
                     ORDER BY turn_id DESC, id DESC LIMIT 1",
                    params![id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| StoreError::sqlite(at, &e))?;
            Ok(
                json.and_then(|json| match acp::schema::decode::<SessionUpdate>(&json) {
                    Ok(SessionUpdate::UsageUpdate(u)) => Some(u),
                    _ => None,
                }),
            )
        })
        .await
    }

    /// Starts a turn: stores the user's message and the updates that show
    /// it, the title and the time, in one transaction. When another process
    /// wrote to the session since `known_version`, the conversation before
    /// this message is read again and returned.
    pub async fn begin_turn(&self, start: TurnStart) -> Result<TurnStarted, StoreError> {
        self.call(move |db, at| begin_turn(db, start).map_err(|e| e.at(at)))
            .await
    }

    /// Adds complete messages and updates to a running turn, in one
    /// transaction; with `outcome`, also ends the turn.
    pub async fn append(
        &self,
        session_id: &str,
        turn: TurnId,
        known_version: i64,
        append: Append,
    ) -> Result<Appended, StoreError> {
        let session_id = session_id.to_string();
        self.call(move |db, at| {
            append_to_turn(db, &session_id, turn, known_version, append).map_err(|e| e.at(at))
        })
        .await
    }

    /// One page of sessions, most recent first, optionally only those in
    /// `cwd`; `offset` comes from the previous page's cursor. Returns the
    /// sessions and the next offset, if there are more.
    pub async fn list(
        &self,
        cwd: Option<String>,
        offset: usize,
    ) -> Result<(Vec<StoredSession>, Option<usize>), StoreError> {
        self.read(move |db, at| {
            let fail = |e: rusqlite::Error| StoreError::sqlite(at, &e);
            let mut stmt = db
                .prepare(&format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions
                     WHERE ?1 IS NULL OR cwd = ?1
                     ORDER BY updated_at DESC, id LIMIT ?2 OFFSET ?3"
                ))
                .map_err(fail)?;
            let rows = stmt
                .query_map(
                    params![cwd, (PAGE_SIZE + 1) as i64, offset as i64],
                    row_to_session,
                )
                .map_err(fail)?;
            let mut out = rows.collect::<Result<Vec<_>, _>>().map_err(fail)?;
            let more = out.len() > PAGE_SIZE;
            out.truncate(PAGE_SIZE);
            Ok((out, more.then_some(offset + PAGE_SIZE)))
        })
        .await
    }

    /// Deletes a session and everything stored with it. Returns whether it
    /// existed.
    pub async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.call(move |db, at| {
            db.execute("DELETE FROM sessions WHERE id = ?1", params![id])
                .map(|n| n > 0)
                .map_err(|e| StoreError::sqlite(at, &e))
        })
        .await
    }
}

/// The columns [`row_to_session`] reads.
const SESSION_COLUMNS: &str = "id, cwd, title, updated_at, mode, model, additional_dirs";

fn row_to_session(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredSession> {
    let dirs: String = r.get(6)?;
    Ok(StoredSession {
        id: r.get(0)?,
        cwd: r.get(1)?,
        title: r.get(2)?,
        updated_at_ms: r.get(3)?,
        mode: r.get(4)?,
        model: r.get(5)?,
        additional_dirs: serde_json::from_str(&dirs).unwrap_or_default(),
    })
}

/// A failure inside a store operation, before it is given its file.
enum OpError {
    Sqlite(rusqlite::Error),
    /// A stored row that does not decode, or a missing session.
    Data(String),
}

impl From<rusqlite::Error> for OpError {
    fn from(e: rusqlite::Error) -> Self {
        OpError::Sqlite(e)
    }
}

impl OpError {
    fn at(self, path: Option<&Path>) -> StoreError {
        match self {
            OpError::Sqlite(e) => StoreError::sqlite(path, &e),
            OpError::Data(detail) => StoreError::new(Problem::Other, path, detail),
        }
    }
}

fn read_conversation(db: &Connection, id: &str) -> Result<Conversation, OpError> {
    let Some((version, context_tokens)) = db
        .query_row(
            "SELECT version, context_tokens FROM sessions WHERE id = ?1",
            params![id],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?)),
        )
        .optional()?
    else {
        return Err(OpError::Data(format!("there is no session {id}")));
    };
    let start: (i64, i64) = db
        .query_row(
            "SELECT turn_id, pos FROM messages WHERE session_id = ?1 AND starts_history = 1
             ORDER BY turn_id DESC, pos DESC LIMIT 1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .unwrap_or((i64::MIN, i64::MIN));
    let mut stmt = db.prepare_cached(
        "SELECT json FROM messages WHERE session_id = ?1 AND (turn_id, pos) >= (?2, ?3)
         ORDER BY turn_id, pos",
    )?;
    let rows = stmt.query_map(params![id, start.0, start.1], |r| r.get::<_, String>(0))?;
    let mut messages = Vec::new();
    for row in rows {
        let json = row?;
        let message = serde_json::from_str(&json).map_err(|e| {
            OpError::Data(format!(
                "a stored message of session {id} does not decode: {e}"
            ))
        })?;
        messages.push(message);
    }
    Ok(Conversation {
        messages,
        version,
        context_tokens: context_tokens.map(|n| n.max(0) as u64),
    })
}

/// Bumps a session's write count; the new count and whether another process
/// wrote since `known`.
fn bump(tx: &rusqlite::Transaction<'_>, id: &str, known: i64) -> Result<(i64, bool), OpError> {
    let old: Option<i64> = tx
        .query_row(
            "UPDATE sessions SET version = version + 1, updated_at = ?2 WHERE id = ?1
             RETURNING version - 1",
            params![id, now_ms()],
            |r| r.get(0),
        )
        .optional()?;
    match old {
        Some(old) => Ok((old + 1, old != known)),
        None => Err(OpError::Data(format!(
            "the session {id} is no longer in the store (deleted by another process?)"
        ))),
    }
}

fn insert_updates(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    turn: TurnId,
    updates: &[SessionUpdate],
) -> Result<(), OpError> {
    let mut stmt =
        tx.prepare_cached("INSERT INTO updates (turn_id, session_id, json) VALUES (?1, ?2, ?3)")?;
    for u in updates {
        let json = serde_json::to_string(u).map_err(|e| OpError::Data(e.to_string()))?;
        stmt.execute(params![turn.0, id, json])?;
    }
    Ok(())
}

fn insert_messages(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    turn: TurnId,
    messages: &[(i64, Message)],
    starts_history: bool,
) -> Result<(), OpError> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO messages (turn_id, pos, session_id, starts_history, json)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (i, (pos, m)) in messages.iter().enumerate() {
        let json = serde_json::to_string(m).map_err(|e| OpError::Data(e.to_string()))?;
        stmt.execute(params![turn.0, pos, id, starts_history && i == 0, json])?;
    }
    Ok(())
}

fn begin_turn(db: &mut Connection, start: TurnStart) -> Result<TurnStarted, OpError> {
    let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let id = start.session_id.as_str();
    let current: Option<i64> = tx
        .query_row(
            "SELECT version FROM sessions WHERE id = ?1",
            params![id],
            |r| r.get(0),
        )
        .optional()?;
    let Some(current) = current else {
        return Err(OpError::Data(format!(
            "the session {id} is no longer in the store (deleted by another process?)"
        )));
    };
    let reloaded = if current != start.known_version {
        Some(read_conversation(&tx, id)?)
    } else {
        None
    };
    tx.execute(
        "INSERT INTO turns (session_id, started_at) VALUES (?1, ?2)",
        params![id, now_ms()],
    )?;
    let turn = TurnId(tx.last_insert_rowid());
    let (version, _) = bump(&tx, id, current)?;
    tx.execute(
        "UPDATE sessions SET cwd = ?2, title = COALESCE(title, ?3) WHERE id = ?1",
        params![id, start.cwd, start.title],
    )?;
    if let Some(m) = &start.message {
        insert_messages(&tx, id, turn, &[(0, m.clone())], false)?;
    }
    insert_updates(&tx, id, turn, &start.updates)?;
    tx.commit()?;
    Ok(TurnStarted {
        turn,
        version,
        reloaded,
    })
}

fn append_to_turn(
    db: &mut Connection,
    id: &str,
    turn: TurnId,
    known: i64,
    append: Append,
) -> Result<Appended, OpError> {
    let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (version, others_wrote) = bump(&tx, id, known)?;
    insert_messages(&tx, id, turn, &append.messages, append.starts_history)?;
    insert_updates(&tx, id, turn, &append.updates)?;
    if let Some(tokens) = append.context_tokens {
        tx.execute(
            "UPDATE sessions SET context_tokens = ?2 WHERE id = ?1",
            params![id, tokens as i64],
        )?;
    }
    if let Some(outcome) = &append.outcome {
        tx.execute(
            "UPDATE turns SET ended_at = ?2, outcome = ?3 WHERE id = ?1",
            params![turn.0, now_ms(), outcome],
        )?;
    }
    tx.commit()?;
    Ok(Appended {
        version,
        others_wrote,
    })
}

#[cfg(test)]
mod tests;
