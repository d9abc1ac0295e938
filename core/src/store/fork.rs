//! Forks: a new session whose log starts as a copy of its parent's, up to a cut point.
//!
//! The copy is one op, applied inside the outbox's transaction and under a savepoint of its
//! own: the fork's row and its events appear together or not at all, and they are the
//! parent's log as committed at that point of the write order — every append queued before
//! the fork, none after it.
//!
//! The fork is a session row with `parent_id` (`ON DELETE SET NULL`: deleting the parent leaves
//! the fork, without lineage) and `fork_event_id` (the parent's last event copied); its events
//! are `INSERT INTO events SELECT … WHERE session_id = parent AND id < cut`. The cut is the
//! first logged block of the prompt the request names (`prompt_start`, by its `messageId`), or
//! none: the whole log. `History::observe` over the copied rows gives the fork its context.

use rusqlite::{Connection, Transaction, params};

use super::sessions::{SessionRecord, dirs_json};

/// Creates `fork` (its `parent_id` names the parent) and copies the parent's events with an
/// id below `before` — all of them when `None`. The fork records the id of the last event it
/// copied. Copied without a cut, a parent's running turn (any engine's, or one no engine owns)
/// comes along as far as it was logged, and no engine will finish it in the fork: the fork's
/// `turn_running` flag is set, and it comes up as an interrupted session does
/// (`session/recovery.rs`). Before a cut, every turn copied has ended.
pub fn apply(
    tx: &Transaction<'_>,
    fork: &SessionRecord,
    before: Option<i64>,
) -> rusqlite::Result<()> {
    tx.execute_batch("SAVEPOINT fork")?;
    match copy(tx, fork, before) {
        Ok(()) => tx.execute_batch("RELEASE fork"),
        Err(e) => {
            tx.execute_batch("ROLLBACK TO fork; RELEASE fork")?;
            Err(e)
        }
    }
}

fn copy(tx: &Transaction<'_>, fork: &SessionRecord, before: Option<i64>) -> rusqlite::Result<()> {
    let created = tx
        .prepare_cached(
            "INSERT INTO sessions (id, cwd, additional_dirs, title, title_source, created_at, updated_at,
                                   parent_id, fork_event_id, config, turn_running, client_system_prompt)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, id,
                    (SELECT MAX(e.id) FROM events e WHERE e.session_id = ?8 AND (?9 IS NULL OR e.id < ?9)),
                    ?10,
                    CASE WHEN ?9 IS NULL
                         THEN turn_running OR EXISTS (SELECT 1 FROM running_turns r WHERE r.session_id = ?8)
                         ELSE 0 END,
                    ?11
             FROM sessions WHERE id = ?8",
        )?
        .execute(params![
            fork.id,
            fork.cwd,
            dirs_json(&fork.additional_dirs),
            fork.title,
            fork.title_source.map(|s| s.as_str()),
            fork.created_at,
            fork.updated_at,
            fork.parent_id,
            before,
            fork.config.to_string(),
            fork.client_system_prompt,
        ])?;
    if created == 0 {
        // The parent was deleted before the fork reached the store.
        return Err(rusqlite::Error::QueryReturnedNoRows);
    }
    tx.prepare_cached(
        "INSERT INTO events (session_id, kind, at, update_json, model_json)
         SELECT ?1, kind, at, update_json, model_json FROM events
         WHERE session_id = ?2 AND (?3 IS NULL OR id < ?3) ORDER BY id",
    )?
    .execute(params![fork.id, fork.parent_id, before])?;
    Ok(())
}

/// The id of the first logged block of the prompt whose `messageId` is `message_id` (the
/// blocks of one prompt share it), or `None` if the session logged no such prompt.
pub fn prompt_start(
    conn: &Connection,
    session_id: &str,
    message_id: &str,
) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT MIN(id) FROM events
         WHERE session_id = ?1 AND kind = 'user_message_chunk'
           AND json_extract(update_json, '$.messageId') = ?2",
    )?
    .query_row(params![session_id, message_id], |row| row.get(0))
}
