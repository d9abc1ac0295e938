//! The schema and its migrations, versioned with `PRAGMA user_version`.
//!
//! Each migration runs once, in order, inside the transaction that bumps the version, so a
//! crash mid-migration leaves the previous version intact.

use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: sessions and their append-only event log.
    r#"
    CREATE TABLE sessions (
        id              TEXT PRIMARY KEY,
        cwd             TEXT NOT NULL,
        additional_dirs TEXT NOT NULL DEFAULT '[]',
        title           TEXT,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        parent_id       TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        fork_event_id   INTEGER,
        config          TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX sessions_by_update ON sessions(updated_at DESC, id DESC);
    CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at DESC, id DESC);
    CREATE TABLE events (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        kind        TEXT NOT NULL,
        at          TEXT NOT NULL,
        update_json TEXT,
        model_json  TEXT
    );
    CREATE INDEX events_by_session ON events(session_id, id);
    "#,
    // 2: "always" permission answers, per workspace.
    r#"
    CREATE TABLE permission_rules (
        workspace  TEXT NOT NULL,
        tool       TEXT NOT NULL,
        pattern    TEXT NOT NULL,
        allow      INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace, tool, pattern)
    );
    "#,
    // 3: whether a turn was running — set when one starts, cleared when it ends, so a
    // session restored with it set was interrupted and needs its open tool calls closed
    // (until 7, which says whose turn it is).
    r#"
    ALTER TABLE sessions ADD COLUMN turn_running INTEGER NOT NULL DEFAULT 0;
    "#,
    // 4: what the client adds to the system prompt (ACP `systemPrompt`, `append` mode), kept
    // so that a load or resume without one goes on with it.
    r#"
    ALTER TABLE sessions ADD COLUMN client_system_prompt TEXT;
    "#,
    // 5: checkpoints of the files the agent's write and edit tools changed: per prompt and
    // path, what the file held before the prompt's first change to it (`existed`, `content`;
    // NULL content when it did not exist) and the hash of what the agent left (`after_hash`,
    // NULL when absent), so an undo can tell whether someone changed the file since.
    // `message_id` is the prompt's user message id; one row per prompt and path.
    r#"
    CREATE TABLE checkpoints (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        message_id   TEXT NOT NULL,
        path         TEXT NOT NULL,
        existed      INTEGER NOT NULL,
        content      BLOB,
        content_hash TEXT,
        after_hash   TEXT,
        undone       INTEGER NOT NULL DEFAULT 0,
        created_at   TEXT NOT NULL,
        UNIQUE (session_id, message_id, path)
    );
    "#,
    // 6: who named the session (`agent`, `user`, or `fork`: a fork's inherited title, until
    // the fork's own first prompt names it), so that a user's title outlives a restart and
    // the agent never replaces it. Titles stored before were the agent's.
    r#"
    ALTER TABLE sessions ADD COLUMN title_source TEXT;
    UPDATE sessions SET title_source = 'agent' WHERE title IS NOT NULL;
    "#,
    // 7: which engine runs a session's turn — a row per session and engine while one runs
    // (an engine runs one turn of a session at a time), so that a turn is taken for
    // interrupted only once its engine is gone (`engines.rs`), not while another process on
    // the same file still runs it. `turn_running` (3) now means a turn no engine will finish:
    // one an older Hearth recorded (it named no engine) or a fork copied mid-turn.
    r#"
    CREATE TABLE running_turns (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        engine     TEXT NOT NULL,
        PRIMARY KEY (session_id, engine)
    ) WITHOUT ROWID;
    "#,
];

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

pub fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    // BEGIN IMMEDIATE takes the write lock up front: it fails at once on a read-only
    // database instead of letting the engine start and lose its first write.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "the database has schema version {current}, newer than this Hearth ({VERSION}); upgrade Hearth"
        )));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A title stored before `title_source` existed was the agent's: the agent's rule for
    /// replacing titles must treat it so, and never as the user's or as no title.
    #[test]
    fn titles_stored_before_their_source_was_kept_are_the_agents() {
        let mut conn = Connection::open_in_memory().unwrap();
        let tx = conn.transaction().unwrap();
        for sql in &MIGRATIONS[..4] {
            tx.execute_batch(sql).unwrap();
        }
        tx.pragma_update(None, "user_version", 4).unwrap();
        tx.execute_batch(
            "INSERT INTO sessions (id, cwd, title, created_at, updated_at) VALUES
               ('titled', '/w', 'Fix it', 't', 't'), ('untitled', '/w', NULL, 't', 't');",
        )
        .unwrap();
        tx.commit().unwrap();
        migrate(&mut conn).unwrap();
        let source = |id: &str| -> Option<String> {
            conn.query_row(
                "SELECT title_source FROM sessions WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert_eq!(source("titled").as_deref(), Some("agent"));
        assert_eq!(source("untitled"), None);
    }

    /// A turn an older Hearth recorded as running (the flag, no engine) is still one no
    /// engine will finish after the migration that names engines: recovered as before.
    #[test]
    fn a_turn_an_older_hearth_left_running_stays_interrupted() {
        let mut conn = Connection::open_in_memory().unwrap();
        let tx = conn.transaction().unwrap();
        for sql in &MIGRATIONS[..6] {
            tx.execute_batch(sql).unwrap();
        }
        tx.pragma_update(None, "user_version", 6).unwrap();
        tx.execute_batch(
            "INSERT INTO sessions (id, cwd, created_at, updated_at, turn_running) VALUES
               ('cut', '/w', 't', 't', 1), ('ended', '/w', 't', 't', 0);",
        )
        .unwrap();
        tx.commit().unwrap();
        migrate(&mut conn).unwrap();
        let session = |id: &str| super::super::sessions::get(&conn, id).unwrap().unwrap();
        assert!(session("cut").orphaned_turn);
        assert!(!session("ended").orphaned_turn);
        let turns = super::super::sessions::running_turns(&conn, "cut").unwrap();
        assert!(turns.is_empty(), "an older Hearth named no engine");
    }
}
