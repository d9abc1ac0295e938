//! The write side of the store: [`apply`] carries out every [`StoreOp`] inside the outbox's
//! transaction. Most ops are one statement here; closing interrupted turns claims them
//! before it appends (`close_interrupted`); a fork and a checkpoint have files of their own
//! (`fork.rs`, `checkpoints.rs`).

use rusqlite::{Transaction, params};
use serde_json::Value;

use super::sessions::{TitleSource, dirs_json};
use super::{Event, Interrupted, StoreOp};
use super::{checkpoints, fork};

/// Applies one op.
pub fn apply(tx: &Transaction<'_>, op: &StoreOp) -> rusqlite::Result<()> {
    match op {
        StoreOp::CreateSession(s) => {
            tx.prepare_cached(
                "INSERT INTO sessions (id, cwd, additional_dirs, title, created_at, updated_at, parent_id, config, client_system_prompt, title_source)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                s.id,
                s.cwd,
                dirs_json(&s.additional_dirs),
                s.title,
                s.created_at,
                s.updated_at,
                s.parent_id,
                s.config.to_string(),
                s.client_system_prompt,
                s.title_source.map(TitleSource::as_str),
            ])?;
        }
        StoreOp::Fork { fork, before } => fork::apply(tx, fork, *before)?,
        StoreOp::Append {
            session_id,
            event,
            at,
        } => append(tx, session_id, event, at)?,
        StoreOp::SetTitle {
            session_id,
            title,
            source,
        } => {
            tx.prepare_cached("UPDATE sessions SET title = ?2, title_source = ?3 WHERE id = ?1")?
                .execute(params![&**session_id, title, source.as_str()])?;
        }
        StoreOp::SetDirs {
            session_id,
            cwd,
            additional_dirs,
        } => {
            tx.prepare_cached("UPDATE sessions SET cwd = ?2, additional_dirs = ?3 WHERE id = ?1")?
                .execute(params![&**session_id, cwd, dirs_json(additional_dirs)])?;
        }
        StoreOp::TurnRunning {
            session_id,
            engine,
            running: true,
        } => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO running_turns (session_id, engine) VALUES (?1, ?2)",
            )?
            .execute(params![&**session_id, &**engine])?;
        }
        StoreOp::TurnRunning {
            session_id,
            engine,
            running: false,
        } => {
            turn_ended(tx, session_id, engine)?;
        }
        StoreOp::CloseInterrupted(interrupted) => close_interrupted(tx, interrupted)?,
        StoreOp::SetClientSystemPrompt { session_id, text } => {
            tx.prepare_cached("UPDATE sessions SET client_system_prompt = ?2 WHERE id = ?1")?
                .execute(params![&**session_id, text])?;
        }
        StoreOp::SetConfig { session_id, config } => {
            tx.prepare_cached("UPDATE sessions SET config = ?2 WHERE id = ?1")?
                .execute(params![&**session_id, config.to_string()])?;
        }
        StoreOp::AddRule { workspace, rule } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO permission_rules (workspace, tool, pattern, allow, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![workspace, rule.tool, rule.pattern, rule.allow, super::now()])?;
        }
        StoreOp::Checkpoint(op) => checkpoints::apply(tx, op)?,
        StoreOp::DeleteSession { session_id } => {
            tx.prepare_cached("DELETE FROM sessions WHERE id = ?1")?
                .execute(params![&**session_id])?;
        }
    }
    Ok(())
}

fn append(tx: &Transaction<'_>, session_id: &str, event: &Event, at: &str) -> rusqlite::Result<()> {
    let json = |v: &Option<Value>| v.as_ref().map(Value::to_string);
    tx.prepare_cached(
        "INSERT INTO events (session_id, kind, at, update_json, model_json) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![session_id, event.kind(), at, json(&event.update), json(&event.model)])?;
    tx.prepare_cached("UPDATE sessions SET updated_at = ?2 WHERE id = ?1 AND updated_at < ?2")?
        .execute(params![session_id, at])?;
    Ok(())
}

/// Takes engine `engine`'s turn of session `session_id` out of `running_turns`; how many rows
/// went (0 when another engine took it out first).
fn turn_ended(tx: &Transaction<'_>, session_id: &str, engine: &str) -> rusqlite::Result<usize> {
    tx.prepare_cached("DELETE FROM running_turns WHERE session_id = ?1 AND engine = ?2")?
        .execute(params![session_id, engine])
}

/// Claims the interrupted turns — deletes their `running_turns` rows, clears the orphan flag
/// — and appends the closing rows only if it claimed one: a second recovery of the same
/// turns, committed after the first, writes nothing.
fn close_interrupted(tx: &Transaction<'_>, interrupted: &Interrupted) -> rusqlite::Result<()> {
    let id = &*interrupted.session_id;
    let mut claimed = 0;
    for engine in &interrupted.engines {
        claimed += turn_ended(tx, id, engine)?;
    }
    if interrupted.orphaned {
        claimed += tx
            .prepare_cached("UPDATE sessions SET turn_running = 0 WHERE id = ?1 AND turn_running")?
            .execute(params![id])?;
    }
    if claimed > 0 {
        for event in &interrupted.closing {
            append(tx, id, event, &interrupted.at)?;
        }
    }
    Ok(())
}
