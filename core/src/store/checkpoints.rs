//! Rows of the `checkpoints` table (schema migration 5): what a file held before a prompt's
//! first change to it, and the hash of what the agent left.

use std::sync::Arc;

use rusqlite::{Connection, Row, Transaction, params};

/// A write to the checkpoints, applied in order with the session's other writes.
#[derive(Debug)]
pub enum CheckpointOp {
    /// Records a file before a prompt's change to it; ignored when the prompt already
    /// changed that path (its first change is the prompt's "before").
    Record(CheckpointRecord),
    /// What the prompt's latest change to `path` left.
    After {
        session_id: Arc<str>,
        message_id: String,
        path: String,
        after_hash: Option<String>,
    },
    /// These checkpoints were restored (or deliberately left alone) by an undo or rewind.
    Undone { session_id: Arc<str>, ids: Vec<i64> },
    /// A change of `path` failed, having changed nothing: its record goes, if it was the
    /// prompt's first (recorded as `content_hash`, no change since), so that the prompt's
    /// next change records the file as the user left it then.
    Withdraw {
        session_id: Arc<str>,
        message_id: String,
        path: String,
        content_hash: Option<String>,
    },
}

/// A file as the agent's first change in a prompt found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRecord {
    pub session_id: Arc<str>,
    /// The prompt's user message id.
    pub message_id: String,
    pub path: String,
    /// The text before the change; `None` when the file did not exist.
    pub content: Option<String>,
    /// The hash of `content` (`None` with it). It is also the first after-hash: until the
    /// change is made, the agent has left the file as it was.
    pub content_hash: Option<String>,
    pub created_at: String,
}

/// A stored checkpoint, oldest first when listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    pub id: i64,
    pub message_id: String,
    pub path: String,
    pub content: Option<String>,
    pub content_hash: Option<String>,
    /// The hash of what the agent's last change in the prompt left; `None`: no file.
    pub after_hash: Option<String>,
    pub undone: bool,
}

pub fn apply(tx: &Transaction<'_>, op: &CheckpointOp) -> rusqlite::Result<()> {
    match op {
        CheckpointOp::Record(c) => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO checkpoints
                   (session_id, message_id, path, existed, content, content_hash, after_hash, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
            )?
            .execute(params![
                &*c.session_id,
                c.message_id,
                c.path,
                c.content.is_some(),
                c.content.as_deref().map(str::as_bytes),
                c.content_hash,
                c.created_at,
            ])?;
        }
        CheckpointOp::After {
            session_id,
            message_id,
            path,
            after_hash,
        } => {
            tx.prepare_cached(
                "UPDATE checkpoints SET after_hash = ?4
                 WHERE session_id = ?1 AND message_id = ?2 AND path = ?3",
            )?
            .execute(params![&**session_id, message_id, path, after_hash])?;
        }
        CheckpointOp::Withdraw {
            session_id,
            message_id,
            path,
            content_hash,
        } => {
            tx.prepare_cached(
                "DELETE FROM checkpoints
                 WHERE session_id = ?1 AND message_id = ?2 AND path = ?3
                   AND content_hash IS ?4 AND after_hash IS ?4 AND undone = 0",
            )?
            .execute(params![&**session_id, message_id, path, content_hash])?;
        }
        CheckpointOp::Undone { session_id, ids } => {
            let mut stmt = tx.prepare_cached(
                "UPDATE checkpoints SET undone = 1 WHERE session_id = ?1 AND id = ?2",
            )?;
            for id in ids {
                stmt.execute(params![&**session_id, id])?;
            }
        }
    }
    Ok(())
}

fn row(row: &Row<'_>) -> rusqlite::Result<CheckpointRow> {
    let content: Option<Vec<u8>> = row.get(3)?;
    Ok(CheckpointRow {
        id: row.get(0)?,
        message_id: row.get(1)?,
        path: row.get(2)?,
        // Written from a `String`, so the lossy decoding never replaces anything.
        content: content.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        content_hash: row.get(4)?,
        after_hash: row.get(5)?,
        undone: row.get(6)?,
    })
}

/// The session's checkpoints, oldest first.
pub fn list(conn: &Connection, session_id: &str) -> rusqlite::Result<Vec<CheckpointRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, message_id, path, content, content_hash, after_hash, undone
         FROM checkpoints WHERE session_id = ?1 ORDER BY id",
    )?;
    stmt.query_map([session_id], row)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StoreLocation;
    use crate::store::{Store, StoreOp, create_session, now};

    fn record(session: &Arc<str>, content: &str) -> StoreOp {
        StoreOp::Checkpoint(CheckpointOp::Record(CheckpointRecord {
            session_id: session.clone(),
            message_id: "m1".into(),
            path: "/w/a".into(),
            content: Some(content.into()),
            content_hash: Some(format!("h-{content}")),
            created_at: now(),
        }))
    }

    #[test]
    fn the_first_record_wins_and_a_deleted_session_takes_its_checkpoints() {
        let store = Store::open(&StoreLocation::Memory).unwrap();
        let id: Arc<str> = Arc::from("sess_1");
        store.apply(vec![create_session(&id)]).unwrap();
        let after = |hash: &str| {
            StoreOp::Checkpoint(CheckpointOp::After {
                session_id: id.clone(),
                message_id: "m1".into(),
                path: "/w/a".into(),
                after_hash: Some(hash.into()),
            })
        };
        store
            .apply(vec![
                record(&id, "one"),
                after("h-two"),
                record(&id, "two"),
                after("h-three"),
            ])
            .unwrap();
        let rows = store.reader().checkpoints(&id).unwrap();
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(row.content.as_deref(), Some("one"));
        assert_eq!(row.content_hash.as_deref(), Some("h-one"));
        assert_eq!(row.after_hash.as_deref(), Some("h-three"));
        assert!(!row.undone);

        let undone = CheckpointOp::Undone {
            session_id: id.clone(),
            ids: vec![row.id],
        };
        store.apply(vec![StoreOp::Checkpoint(undone)]).unwrap();
        assert!(store.reader().checkpoints(&id).unwrap()[0].undone);

        let delete = StoreOp::DeleteSession {
            session_id: id.clone(),
        };
        store.apply(vec![delete]).unwrap();
        assert!(store.reader().checkpoints(&id).unwrap().is_empty());
    }

    #[test]
    fn a_failed_changes_record_goes_only_when_it_was_the_first_and_nothing_changed_since() {
        let store = Store::open(&StoreLocation::Memory).unwrap();
        let id: Arc<str> = Arc::from("sess_1");
        store.apply(vec![create_session(&id)]).unwrap();
        let withdraw = |content: &str| {
            StoreOp::Checkpoint(CheckpointOp::Withdraw {
                session_id: id.clone(),
                message_id: "m1".into(),
                path: "/w/a".into(),
                content_hash: Some(format!("h-{content}")),
            })
        };
        store
            .apply(vec![record(&id, "one"), withdraw("one")])
            .unwrap();
        assert!(store.reader().checkpoints(&id).unwrap().is_empty());

        let after = StoreOp::Checkpoint(CheckpointOp::After {
            session_id: id.clone(),
            message_id: "m1".into(),
            path: "/w/a".into(),
            after_hash: Some("h-two".into()),
        });
        store
            .apply(vec![
                record(&id, "one"),
                after,
                withdraw("two"),
                withdraw("one"),
            ])
            .unwrap();
        let rows = store.reader().checkpoints(&id).unwrap();
        assert_eq!(rows.len(), 1, "a change went through: the record stays");
        assert_eq!(rows[0].content.as_deref(), Some("one"));
    }
}
