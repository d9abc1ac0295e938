//! The session store: SQLite (bundled), WAL, foreign keys on, schema by `user_version`.
//!
//! All writes go through [`Store::apply`], called only by the engine's outbox thread, which
//! commits a batch before delivering the frames that announced it — so whatever reached the
//! client is on disk, and a `kill -9` leaves a database that opens cleanly (WAL).
//! Reads use a second connection so they never wait behind a write (file stores), opened at
//! the first read: the engine's start (and its `initialize` answer) needs only the writer,
//! which is what checks and migrates the file. Short reads made on the calling thread
//! ([`Store::try_reader`]) take the writer instead when no write holds it, for its page
//! cache; a commit then waits for them.
//!
//! Several processes (several engines) may share the file. Each engine's turns are recorded
//! under its id, and the engine holds a lock in the data dir that tells the others it is
//! alive (`engines.rs`); what the others committed shows in [`Store::foreign_version`].

mod checkpoints;
mod engines;
mod event;
mod fork;
mod ops;
mod rules;
mod schema;
mod sessions;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use serde_json::value::RawValue;

use crate::config::StoreLocation;
pub use checkpoints::{CheckpointOp, CheckpointRecord, CheckpointRow};
pub use engines::Lease;
pub use event::Event;
use event::{Fold, Merge, Stored, coalesce};
pub use rules::RuleRow;
pub use sessions::{Cursor, ListPage, ListedSession, SessionRecord, TitleSource};

/// One write, applied by the outbox thread in order.
#[derive(Debug)]
pub enum StoreOp {
    CreateSession(SessionRecord),
    /// Creates a fork (`parent_id` names its parent) holding a copy of the parent's events
    /// with an id below `before`, or all of them (see `fork.rs`).
    Fork {
        fork: SessionRecord,
        before: Option<i64>,
    },
    Append {
        session_id: Arc<str>,
        event: Event,
        at: String,
    },
    SetTitle {
        session_id: Arc<str>,
        title: String,
        source: TitleSource,
    },
    SetDirs {
        session_id: Arc<str>,
        cwd: String,
        additional_dirs: Vec<String>,
    },
    DeleteSession {
        session_id: Arc<str>,
    },
    /// Records that engine `engine` runs a turn of the session (`running`), or no longer
    /// does (a `running_turns` row, schema migration 7).
    TurnRunning {
        session_id: Arc<str>,
        engine: Arc<str>,
        running: bool,
    },
    /// Closes turns that no engine will finish (see [`Interrupted`]).
    CloseInterrupted(Interrupted),
    /// Replaces the session's config values (model, mode, thought level).
    SetConfig {
        session_id: Arc<str>,
        config: serde_json::Value,
    },
    /// Replaces what the client adds to the session's system prompt.
    SetClientSystemPrompt {
        session_id: Arc<str>,
        text: String,
    },
    /// Stores an "always" answer for a workspace (replacing an earlier one).
    AddRule {
        workspace: String,
        rule: RuleRow,
    },
    /// Records or updates the checkpoints of the files the agent changed.
    Checkpoint(CheckpointOp),
}

/// The turns of a session that crash recovery closes: those of engines found gone, and the
/// one no engine owns (`sessions.turn_running`), with the rows that close their open tool
/// calls. Applied by whichever write claims the turns first: the rows are appended only if
/// one of the turns was still recorded, so two engines recovering a session at once close it
/// once.
#[derive(Debug)]
pub struct Interrupted {
    pub session_id: Arc<str>,
    /// The gone engines whose turns it closes.
    pub engines: Vec<String>,
    /// Whether it closes the turn no engine owns.
    pub orphaned: bool,
    pub closing: Vec<Event>,
    pub at: String,
}

#[derive(Debug, Clone)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(e.to_string())
    }
}

/// A connection that `Store::close` can take away; afterwards every call fails cleanly.
type Slot = Arc<Mutex<Option<Connection>>>;

pub struct Store {
    writer: Slot,
    reader: Slot,
    /// A file store's path, which its read connection is opened from at the first read;
    /// `None` in memory, where the reader is the writer.
    file: Option<PathBuf>,
    /// Set by `close`, so that no read opens the read connection again afterwards.
    closed: AtomicBool,
    /// Whether the writer still has to be told `synchronous=NORMAL`, before its first
    /// commit: the pragma makes SQLite parse the schema, which `initialize` does not need.
    untuned: AtomicBool,
    /// This engine's id, and the lock that tells other processes it is alive (`engines.rs`).
    lease: Lease,
}

impl Store {
    /// Opens (creating if needed) and migrates the store. A corrupt, read-only or newer
    /// database is a clear error here, and nothing in it is overwritten.
    pub fn open(location: &StoreLocation) -> Result<Store, StoreError> {
        match location {
            StoreLocation::Memory => {
                let mut conn = Connection::open_in_memory()?;
                configure(&conn)?;
                schema::migrate(&mut conn)?;
                // One in-memory database is one connection: readers share the writer's.
                let shared = Arc::new(Mutex::new(Some(conn)));
                Ok(Store {
                    writer: shared.clone(),
                    reader: shared,
                    file: None,
                    closed: AtomicBool::new(false),
                    // Nothing is synced in memory.
                    untuned: AtomicBool::new(false),
                    lease: Lease::new(None),
                })
            }
            StoreLocation::File(path) => Self::open_file(path).map_err(|e| cannot_open(path, e)),
        }
    }

    fn open_file(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError(e.to_string()))?;
        }
        let mut writer = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        configure(&writer)?;
        // WAL mode is kept in the file; setting it makes SQLite parse the schema, so only a
        // file not yet in it (new, or made by another program) is set.
        if !in_wal_mode(path) {
            let mode: String = writer.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError(format!(
                    "could not enable WAL (journal mode is {mode})"
                )));
            }
        }
        // Reads the header (`user_version`) under the write lock: a file that is not a
        // database, or one that cannot be written, fails here, before anything is written.
        schema::migrate(&mut writer)?;
        Ok(Store {
            writer: Arc::new(Mutex::new(Some(writer))),
            reader: Arc::new(Mutex::new(None)),
            file: Some(path.to_path_buf()),
            closed: AtomicBool::new(false),
            untuned: AtomicBool::new(true),
            lease: Lease::new(path.parent().map(|dir| dir.join("engines"))),
        })
    }

    /// Closes both connections (the engine is done with the file) and lets the engine's
    /// lock go: a turn it did not end is interrupted from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for slot in [&self.writer, &self.reader] {
            lock(slot).take();
        }
        self.lease.release();
    }

    /// This engine's id and lock (see `engines.rs`).
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// A count that moves with every commit another connection makes to the file — another
    /// process's, never this engine's (its read connection writes nothing): `PRAGMA
    /// data_version` on the writer. One cheap statement, which tells whether anything but this
    /// engine changed the store since it was last read; in memory it never moves.
    pub fn foreign_version(&self) -> Result<i64, StoreError> {
        let writer = lock(&self.writer);
        let conn = writer.as_ref().ok_or_else(closed)?;
        let version = conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |row| row.get(0))?;
        Ok(version)
    }

    /// The read connection, waiting while another read uses it.
    pub fn reader(&self) -> Reader<'_> {
        self.opened(lock(&self.reader))
    }

    /// A connection to read on right now, if one is free: for a file store the writer when
    /// no write holds it, else the read connection if no other read (or, in memory, write)
    /// is using it. The writer's page cache outlives its own commits, while the read
    /// connection drops its whole cache at every commit and reads each page again: a page
    /// of 50 sessions of 10,000 filtered by `cwd`, right after a commit, reads in two thirds
    /// of the time on the writer. Only for short reads: a commit waits for them.
    pub fn try_reader(&self) -> Option<Reader<'_>> {
        if self.file.is_some()
            && let Some(writer) = try_lock(&self.writer)
            && writer.is_some()
        {
            return Some(Reader {
                conn: writer,
                failed: None,
                writer: true,
            });
        }
        try_lock(&self.reader).map(|guard| self.opened(guard))
    }

    /// The read connection held by `guard`, opened now if this is a file store's first read
    /// (opening it at start cost a second SQLite connection's set-up before the first
    /// answer). An open that fails is the read's error, and the next read tries again.
    fn opened<'a>(&self, mut guard: MutexGuard<'a, Option<Connection>>) -> Reader<'a> {
        let mut failed = None;
        if let Some(path) = &self.file
            && guard.is_none()
            && !self.closed.load(Ordering::Acquire)
        {
            match open_reader(path) {
                Ok(conn) => *guard = Some(conn),
                Err(e) => failed = Some(cannot_open(path, e)),
            }
        }
        Reader {
            conn: guard,
            failed,
            writer: false,
        }
    }

    /// Applies a batch in one transaction, folding adjacent chunks of one message into one
    /// row. A failing op (say, an append to a session deleted meanwhile) is logged and
    /// skipped; the rest of the batch still commits.
    pub fn apply(&self, ops: Vec<StoreOp>) -> Result<(), StoreError> {
        let ops = fold_chunks(ops);
        let mut conn = lock(&self.writer);
        let conn = conn.as_mut().ok_or_else(closed)?;
        if self.untuned.swap(false, Ordering::AcqRel) {
            // NORMAL is durable against process crashes in WAL mode; only power loss can
            // drop the last commits, and it never corrupts. Without it (FULL) commits are
            // slower, never less safe, so a failure costs the batch nothing.
            if let Err(e) = conn.pragma_update(None, "synchronous", "NORMAL") {
                tracing::warn!(error = %e, "cannot set the store's synchronous mode");
            }
        }
        let tx = conn.transaction()?;
        for op in ops {
            if let Err(e) = ops::apply(&tx, &op) {
                tracing::error!(error = %e, op = op_name(&op), "store write failed");
            }
        }
        tx.commit()?;
        Ok(())
    }
}

/// How far a replay has read a session's log (see [`Reader::next_updates`]): past which
/// row, and the update the next rows may still fold into.
#[derive(Default)]
pub struct LogPlace {
    after: i64,
    fold: Fold<Stored>,
    done: bool,
}

impl LogPlace {
    /// Whether the whole log was handed over.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

/// A point in the store's history as one connection sees it (see [`Reader::version`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// Read on a file store's writer: its counts are not the read connection's.
    writer: bool,
    data_version: i64,
    own_changes: u64,
}

/// A connection to read on, held for as long as this lives.
pub struct Reader<'a> {
    conn: MutexGuard<'a, Option<Connection>>,
    /// Why the connection could not be opened, when it could not.
    failed: Option<StoreError>,
    /// Whether this is a file store's writer (`Store::try_reader`).
    writer: bool,
}

impl Reader<'_> {
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let conn = self
            .conn
            .as_ref()
            .ok_or_else(|| self.failed.clone().unwrap_or_else(closed))?;
        Ok(f(conn)?)
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.read(|conn| sessions::get(conn, id))
    }

    /// The engines that recorded a running turn of the session (schema migration 7).
    pub fn running_turns(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.read(|conn| sessions::running_turns(conn, id))
    }

    /// The session's log, oldest first, with streamed chunks folded back into messages.
    pub fn events(&self, id: &str) -> Result<Vec<Event>, StoreError> {
        self.read(|conn| sessions::events(conn, id)).map(coalesce)
    }

    /// A page of what the model's context is rebuilt from when a session comes up, row by
    /// row (see `sessions::for_each_context_event`).
    pub fn for_each_context_event(
        &self,
        id: &str,
        page: (i64, usize),
        each: impl FnMut(Event),
    ) -> Result<(usize, i64), StoreError> {
        self.read(|conn| sessions::for_each_context_event(conn, id, page, each))
    }

    /// What the session had spent when it last reported a cost (`sessions::spent`).
    pub fn spent(&self, id: &str) -> Result<Option<f64>, StoreError> {
        self.read(|conn| sessions::spent(conn, id))
    }

    /// Hands `each` the session's next `session/update` payloads as the client first saw
    /// them, oldest first, with streamed chunks folded back into messages: `events` without
    /// the model's part, and kept as stored JSON text, so replay builds no JSON tree but for
    /// the chunks. It reads at most `rows` rows past `place` and hands each update over as
    /// soon as it is read (and folded), so a replay holds a few updates, never the whole log.
    pub fn next_updates(
        &self,
        id: &str,
        place: &mut LogPlace,
        rows: usize,
        mut each: impl FnMut(&RawValue),
    ) -> Result<(), StoreError> {
        let mut hand_over = |row: Option<Stored>| {
            if let Some(update) = row.and_then(Stored::into_update) {
                each(&update);
            }
        };
        let fold = &mut place.fold;
        let (read, last) = self.read(|conn| {
            sessions::for_each_stored(conn, id, (place.after, rows), |row| {
                hand_over(fold.push(row))
            })
        })?;
        place.after = last;
        if read < rows {
            place.done = true;
            hand_over(std::mem::take(&mut place.fold).finish());
        }
        Ok(())
    }

    /// The session's checkpoints, oldest first.
    pub fn checkpoints(&self, id: &str) -> Result<Vec<CheckpointRow>, StoreError> {
        self.read(|conn| checkpoints::list(conn, id))
    }

    /// Where the prompt `message_id` of a session begins in its log (see `fork.rs`).
    pub fn prompt_start(&self, id: &str, message_id: &str) -> Result<Option<i64>, StoreError> {
        self.read(|conn| fork::prompt_start(conn, id, message_id))
    }

    /// The "always" rules stored for `workspace`.
    pub fn rules(&self, workspace: &str) -> Result<Vec<RuleRow>, StoreError> {
        self.read(|conn| rules::read(conn, workspace))
    }

    /// Where the store is at: it changes with every commit, this engine's or another
    /// process's on the same file — what a cached read is keyed by. One cheap statement:
    /// `PRAGMA data_version`, which counts the commits of every other connection to the file
    /// (on the read connection, our writer's among them), and this connection's own changes
    /// (the writer's, when the read is made on it; the one connection of a `:memory:`
    /// store's), which `data_version` does not count. Which connection read it is part of
    /// the version: the two count differently.
    pub fn version(&self) -> Result<Version, StoreError> {
        self.read(|conn| {
            let data_version = conn
                .prepare_cached("PRAGMA data_version")?
                .query_row([], |row| row.get(0))?;
            Ok(Version {
                writer: self.writer,
                data_version,
                own_changes: conn.total_changes(),
            })
        })
    }

    pub fn list(
        &self,
        cwd: Option<&str>,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        self.read(|conn| sessions::list(conn, cwd, cursor, limit))
    }
}

fn lock(slot: &Slot) -> MutexGuard<'_, Option<Connection>> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

fn try_lock(slot: &Slot) -> Option<MutexGuard<'_, Option<Connection>>> {
    match slot.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

fn closed() -> StoreError {
    StoreError("the session store is closed".into())
}

fn cannot_open(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError(format!(
        "cannot open the session store {}: {e}",
        path.display()
    ))
}

fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let reader = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure(&reader)?;
    Ok(reader)
}

/// Whether the file at `path` is a database in WAL mode: its header's read and write
/// versions (bytes 18 and 19) are 2. Anything else, a missing file included, is not.
fn in_wal_mode(path: &Path) -> bool {
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut header))
        .is_ok_and(|()| header.starts_with(b"SQLite format 3\0") && header[18..20] == [2, 2])
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // The same plan whatever the bound values. Without it SQLite plans a `LIMIT ?` with the
    // value bound, and binding that parameter again, even to the same value, then makes the
    // cached statement prepare itself anew on its next step: a quarter of a `session/list`
    // read afresh.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    // Room for every statement either connection runs (the writer reads too: `try_reader`),
    // so none is prepared again for being pushed out.
    conn.set_prepared_statement_cache_capacity(64);
    conn.pragma_update(None, "foreign_keys", true)
}

fn fold_chunks(ops: Vec<StoreOp>) -> Vec<StoreOp> {
    let mut out: Vec<StoreOp> = Vec::with_capacity(ops.len());
    for op in ops {
        if let (
            Some(StoreOp::Append {
                session_id: last_session,
                event: last_event,
                at: last_at,
            }),
            StoreOp::Append {
                session_id,
                event,
                at,
            },
        ) = (out.last_mut(), &op)
            && *last_session == *session_id
            && last_event.try_merge(event)
        {
            last_at.clone_from(at);
            continue;
        }
        out.push(op);
    }
    out
}

impl StoreOp {
    /// Whether it writes a permission rule (what `Reader::rules` reads).
    pub fn is_rule(&self) -> bool {
        matches!(self, StoreOp::AddRule { .. })
    }
}

fn op_name(op: &StoreOp) -> &'static str {
    match op {
        StoreOp::CreateSession(_) => "create_session",
        StoreOp::Fork { .. } => "fork",
        StoreOp::Append { .. } => "append",
        StoreOp::SetTitle { .. } => "set_title",
        StoreOp::SetDirs { .. } => "set_dirs",
        StoreOp::DeleteSession { .. } => "delete_session",
        StoreOp::SetConfig { .. } => "set_config",
        StoreOp::TurnRunning { .. } => "turn_running",
        StoreOp::CloseInterrupted(_) => "close_interrupted",
        StoreOp::SetClientSystemPrompt { .. } => "set_client_system_prompt",
        StoreOp::AddRule { .. } => "add_rule",
        StoreOp::Checkpoint(_) => "checkpoint",
    }
}

/// The current time as RFC 3339 UTC with milliseconds: sortable as text.
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// A store op creating a bare session `id` (working in `/w`), for tests of the store.
#[cfg(test)]
fn create_session(id: &str) -> StoreOp {
    StoreOp::CreateSession(SessionRecord {
        id: id.to_string(),
        cwd: "/w".into(),
        additional_dirs: Vec::new(),
        title: None,
        created_at: now(),
        updated_at: now(),
        parent_id: None,
        config: serde_json::json!({}),
        orphaned_turn: false,
        client_system_prompt: None,
        title_source: None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn append(session: &Arc<str>, update: Option<Value>, model: Option<Value>) -> StoreOp {
        StoreOp::Append {
            session_id: session.clone(),
            event: Event { update, model },
            at: now(),
        }
    }

    fn chunk(session: &Arc<str>, kind: &str, message: &str, text: &str) -> StoreOp {
        let update = json!({"sessionUpdate": kind, "messageId": message, "content": {"type": "text", "text": text}});
        append(session, Some(update), None)
    }

    /// A cached read is keyed by the version: it moves with every commit, on a file (seen by
    /// the read connection) and in memory (one connection for both), and only then.
    #[test]
    fn the_version_moves_with_each_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = StoreLocation::File(dir.path().join("hearth.db"));
        for location in [StoreLocation::Memory, file] {
            let store = Store::open(&location).unwrap();
            let version = || store.reader().version().unwrap();
            let before = version();
            assert_eq!(version(), before, "{location:?}: no commit, same version");
            store.apply(vec![create_session("sess_1")]).unwrap();
            let after = version();
            assert_ne!(after, before, "{location:?}");
            assert_eq!(version(), after, "{location:?}");
        }
    }

    /// The foreign version moves with another connection's commit only: never with this
    /// store's own commits or reads, so that one process on the file never sees it move.
    #[test]
    fn the_foreign_version_moves_with_another_connections_commits_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hearth.db");
        let store = Store::open(&StoreLocation::File(path.clone())).unwrap();
        let before = store.foreign_version().unwrap();
        store.apply(vec![create_session("sess_1")]).unwrap();
        assert!(store.reader().session("sess_1").unwrap().is_some());
        assert!(
            store
                .try_reader()
                .unwrap()
                .session("sess_1")
                .unwrap()
                .is_some()
        );
        store.apply(vec![create_session("sess_2")]).unwrap();
        assert_eq!(store.foreign_version().unwrap(), before);
        let other = Connection::open(&path).unwrap();
        other
            .execute("UPDATE sessions SET title = 'x' WHERE id = 'sess_1'", [])
            .unwrap();
        let after = store.foreign_version().unwrap();
        assert_ne!(after, before);
        assert_eq!(store.foreign_version().unwrap(), after);
        let memory = Store::open(&StoreLocation::Memory).unwrap();
        let before = memory.foreign_version().unwrap();
        memory.apply(vec![create_session("sess_1")]).unwrap();
        assert_eq!(memory.foreign_version().unwrap(), before);
    }

    /// Interrupted turns are closed by the first write that claims them: the second, from an
    /// engine that read the same log before the first committed, appends nothing. A turn of
    /// a live engine, not named, stays recorded; a fork copied mid-turn owns none of them
    /// and is flagged as holding a turn no engine will finish.
    #[test]
    fn interrupted_turns_are_closed_once() {
        let store = Store::open(&StoreLocation::Memory).unwrap();
        let id: Arc<str> = Arc::from("sess_1");
        let running = |engine: &str| StoreOp::TurnRunning {
            session_id: id.clone(),
            engine: Arc::from(engine),
            running: true,
        };
        store
            .apply(vec![
                create_session(&id),
                running("engine_dead"),
                running("engine_live"),
            ])
            .unwrap();
        let mut fork = match create_session("sess_fork") {
            StoreOp::CreateSession(record) => record,
            _ => unreachable!(),
        };
        fork.parent_id = Some(id.to_string());
        store
            .apply(vec![StoreOp::Fork { fork, before: None }])
            .unwrap();
        let close = || {
            StoreOp::CloseInterrupted(Interrupted {
                session_id: id.clone(),
                engines: vec!["engine_dead".into()],
                orphaned: false,
                closing: vec![Event::update(json!({"sessionUpdate": "tool_call_update"}))],
                at: now(),
            })
        };
        store.apply(vec![close()]).unwrap();
        store.apply(vec![close()]).unwrap();
        let reader = store.reader();
        assert_eq!(reader.events(&id).unwrap().len(), 1);
        assert_eq!(reader.running_turns(&id).unwrap(), ["engine_live"]);
        assert!(!reader.session(&id).unwrap().unwrap().orphaned_turn);
        assert!(reader.running_turns("sess_fork").unwrap().is_empty());
        assert!(reader.session("sess_fork").unwrap().unwrap().orphaned_turn);
    }

    /// A read made right here goes to a file store's writer when no write holds it, else to
    /// the read connection. The writer's version moves with its own commits, and a version
    /// read on one connection is never taken for the other's.
    #[test]
    fn a_read_right_here_takes_the_free_writer_then_the_read_connection() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&StoreLocation::File(dir.path().join("hearth.db"))).unwrap();
        let on_writer = || {
            let reader = store.try_reader().unwrap();
            assert!(reader.writer);
            reader.version().unwrap()
        };
        let before = on_writer();
        store.apply(vec![create_session("sess_1")]).unwrap();
        let after = on_writer();
        assert_ne!(after, before);
        assert_eq!(on_writer(), after);
        let writing = lock(&store.writer);
        let reader = store.try_reader().unwrap();
        assert!(!reader.writer);
        assert!(reader.session("sess_1").unwrap().is_some());
        let on_reader = reader.version().unwrap();
        assert_ne!(
            on_reader, after,
            "the connection that read it is part of the version"
        );
        drop((reader, writing));
        assert_eq!(on_writer(), after);
        // The read connection counts the writer's commits too.
        store.apply(vec![create_session("sess_2")]).unwrap();
        let writing = lock(&store.writer);
        assert_ne!(store.try_reader().unwrap().version().unwrap(), on_reader);
        drop(writing);
    }

    /// A cached statement with a bound `LIMIT` runs again without being prepared again, in
    /// either store: `configure` asks SQLite for one plan whatever the values bound.
    #[test]
    fn a_bound_limit_does_not_prepare_the_list_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = StoreLocation::File(dir.path().join("hearth.db"));
        for location in [StoreLocation::Memory, file] {
            let store = Store::open(&location).unwrap();
            store.apply(vec![create_session("sess_1")]).unwrap();
            let reader = store.reader();
            for _ in 0..3 {
                assert_eq!(reader.list(None, None, 50).unwrap().sessions.len(), 1);
            }
            let conn = reader.conn.as_ref().unwrap();
            let list = conn
                .prepare_cached(sessions::list_query(false, false))
                .unwrap();
            let prepared_again = list.get_status(rusqlite::StatementStatus::RePrepare);
            assert_eq!(prepared_again, 0, "{location:?}");
        }
    }

    /// A file store is in WAL mode from its first open, and its writer commits with
    /// `synchronous=NORMAL` — told so at its first commit, not at start, since the pragma
    /// parses the schema. A file another program left in rollback mode is put back in WAL.
    #[test]
    fn a_file_store_is_in_wal_mode_and_commits_with_synchronous_normal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hearth.db");
        let synchronous = |store: &Store| -> i64 {
            let writer = lock(&store.writer);
            let writer = writer.as_ref().unwrap();
            writer
                .pragma_query_value(None, "synchronous", |r| r.get(0))
                .unwrap()
        };
        let journal_mode = || -> String {
            let other = Connection::open(&path).unwrap();
            other
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap()
        };
        let (full, normal) = (2, 1);
        for start in ["new", "reopened", "left in rollback mode"] {
            if start == "left in rollback mode" {
                let other = Connection::open(&path).unwrap();
                let mode: String = other
                    .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
                    .unwrap();
                assert_eq!(mode, "delete");
                assert!(!in_wal_mode(&path));
            }
            let store = Store::open(&StoreLocation::File(path.clone())).unwrap();
            assert!(in_wal_mode(&path), "{start}");
            assert_eq!(journal_mode(), "wal", "{start}");
            assert_eq!(
                synchronous(&store),
                full,
                "{start}: not told before a commit"
            );
            store.apply(vec![create_session(start)]).unwrap();
            assert_eq!(synchronous(&store), normal, "{start}");
            store.close();
        }
        assert!(!in_wal_mode(&dir.path().join("missing.db")));
    }

    /// A file store's read connection is opened at the first read, not at start; one that
    /// cannot be opened is that read's error, as clear as a failed start's, and the next read
    /// tries again. (Renaming a file SQLite holds open is Unix's.)
    #[cfg(unix)]
    #[test]
    fn a_file_stores_reader_opens_at_the_first_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hearth.db");
        let store = Store::open(&StoreLocation::File(path.clone())).unwrap();
        assert!(lock(&store.reader).is_none(), "not opened at start");
        store.apply(vec![create_session("sess_1")]).unwrap();
        // Moved away: the read connection, which never creates the file, cannot open.
        let aside = dir.path().join("aside.db");
        std::fs::rename(&path, &aside).unwrap();
        let error = store.reader().session("sess_1").unwrap_err().0;
        let expected = format!("cannot open the session store {}: ", path.display());
        assert!(error.starts_with(&expected), "{error}");
        std::fs::rename(&aside, &path).unwrap();
        {
            // A read right here while a write holds the writer opens it too.
            let _writing = lock(&store.writer);
            let reader = store.try_reader().unwrap();
            assert!(!reader.writer);
            assert!(reader.session("sess_1").unwrap().is_some());
        }
        assert!(store.reader().session("sess_1").unwrap().is_some());
        store.close();
        let error = store.reader().session("sess_1").unwrap_err().0;
        assert_eq!(error, closed().0, "closed, and not opened again");
    }

    /// Replay reads the stored text instead of parsing every row; it must still send exactly
    /// what serializing the parsed, folded log sends.
    #[test]
    fn updates_are_the_folded_log_byte_for_byte() {
        let store = Store::open(&StoreLocation::Memory).unwrap();
        let id: Arc<str> = Arc::from("sess_1");
        store.apply(vec![create_session(&id)]).unwrap();
        let (thought, message) = ("agent_thought_chunk", "agent_message_chunk");
        let prompt = json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}});
        let tool_call = json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "é \"q\"\n\u{1}", "rawInput": {"z": 1, "a": [0.1, -2, 1e300]}});
        let plan = json!({"sessionUpdate": "plan", "entries": [{"content": "ship", "priority": "high", "status": "pending"}]});
        let image = json!({"sessionUpdate": message, "messageId": "m2", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}});
        // Each inner list is one batch: chunks within a batch fold as they are written,
        // chunks of different batches are separate rows that must fold on the way out.
        let batches = vec![
            vec![append(&id, Some(prompt), None)],
            vec![
                chunk(&id, thought, "m1", "hm"),
                chunk(&id, thought, "m1", "m"),
            ],
            vec![chunk(&id, thought, "m1", "!")],
            vec![chunk(&id, message, "m1", "Hel")],
            vec![chunk(&id, message, "m1", "lo")],
            // Something only the model sees keeps the chunks around it apart.
            vec![append(&id, None, Some(json!({"message": "x"})))],
            vec![chunk(&id, message, "m1", " again")],
            vec![append(&id, Some(image), None)],
            vec![chunk(&id, message, "m2", "caption")],
            vec![
                append(&id, Some(tool_call), None),
                append(&id, Some(plan), None),
            ],
            vec![chunk(&id, message, "m3", "a")],
            vec![chunk(&id, thought, "m3", "b")],
            vec![chunk(&id, message, "m3", "c")],
        ];
        for batch in batches {
            store.apply(batch).unwrap();
        }
        // Two rows at a time: the chunks of one message fold across the reads too.
        let mut replayed: Vec<String> = Vec::new();
        let mut place = LogPlace::default();
        while !place.is_done() {
            store
                .reader()
                .next_updates(&id, &mut place, 2, |u| replayed.push(u.get().to_string()))
                .unwrap();
        }
        let expected: Vec<String> = store
            .reader()
            .events(&id)
            .unwrap()
            .iter()
            .filter_map(|e| e.update.as_ref().map(Value::to_string))
            .collect();
        assert_eq!(replayed, expected);
        assert_eq!(replayed.len(), 11);
        assert!(replayed[1].contains(r#""text":"hmm!""#), "{}", replayed[1]);
        assert!(replayed[2].contains(r#""text":"Hello""#), "{}", replayed[2]);
    }
}
