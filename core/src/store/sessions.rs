//! Rows of the `sessions`, `events` and `running_turns` tables, and their reads. The writes
//! are `ops.rs`.

use rusqlite::{Connection, OptionalExtension, Row, ToSql};
use serde_json::Value;

use super::{Event, Stored};

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub id: String,
    pub cwd: String,
    pub additional_dirs: Vec<String>,
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub parent_id: Option<String>,
    pub config: Value,
    /// A turn no engine will finish was running: one an older Hearth recorded, or a fork
    /// copied mid-turn (the `turn_running` column; schema migrations 3 and 7). The turns an
    /// engine runs are `running_turns` rows ([`running_turns`]).
    pub orphaned_turn: bool,
    /// What the client adds to the system prompt (see schema migration 4).
    pub client_system_prompt: Option<String>,
    /// Who named the session; `None` while it has no title (see schema migration 5).
    pub title_source: Option<TitleSource>,
}

/// Who gave a session its title (the `title_source` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TitleSource {
    /// The agent, from a prompt.
    Agent,
    /// The user, through `session/set_title`.
    User,
    /// Inherited by a fork from its parent, until the fork's own first prompt names it.
    Fork,
}

impl TitleSource {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            TitleSource::Agent => "agent",
            TitleSource::User => "user",
            TitleSource::Fork => "fork",
        }
    }

    /// An unknown value (written by a newer Hearth) reads as the user's: it is never replaced.
    fn parse(text: &str) -> TitleSource {
        match text {
            "agent" => TitleSource::Agent,
            "fork" => TitleSource::Fork,
            _ => TitleSource::User,
        }
    }
}

/// What `session/list` shows of a session: its row without the config and flags, which a
/// listing does not need to parse.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSession {
    pub id: String,
    pub cwd: String,
    pub additional_dirs: Vec<String>,
    pub title: Option<String>,
    pub updated_at: String,
    /// The session it was forked from, while that one exists.
    pub parent_id: Option<String>,
    /// The id of the parent's last event the fork copied (`None` for an empty copy).
    pub fork_event_id: Option<i64>,
}

#[derive(Debug)]
pub struct ListPage {
    pub sessions: Vec<ListedSession>,
    pub next_cursor: Option<String>,
}

const COLUMNS: &str = "id, cwd, additional_dirs, title, created_at, updated_at, parent_id, config, turn_running, client_system_prompt, title_source";

fn record(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let dirs: String = row.get(2)?;
    let config: String = row.get(7)?;
    Ok(SessionRecord {
        id: row.get(0)?,
        cwd: row.get(1)?,
        additional_dirs: serde_json::from_str(&dirs).unwrap_or_default(),
        title: row.get(3)?,
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
        parent_id: row.get(6)?,
        config: serde_json::from_str(&config).unwrap_or(Value::Null),
        orphaned_turn: row.get(8)?,
        client_system_prompt: row.get(9)?,
        title_source: row.get_ref(10)?.as_str_or_null()?.map(TitleSource::parse),
    })
}

fn listed(row: &Row<'_>) -> rusqlite::Result<ListedSession> {
    let dirs: String = row.get(2)?;
    Ok(ListedSession {
        id: row.get(0)?,
        cwd: row.get(1)?,
        additional_dirs: serde_json::from_str(&dirs).unwrap_or_default(),
        title: row.get(3)?,
        updated_at: row.get(4)?,
        parent_id: row.get(5)?,
        fork_event_id: row.get(6)?,
    })
}

/// The additional directories as the `additional_dirs` column keeps them.
pub fn dirs_json(dirs: &[String]) -> String {
    serde_json::to_string(dirs).unwrap_or_else(|_| "[]".into())
}

pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<SessionRecord>> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"))?
        .query_row([id], record)
        .optional()
}

/// The engines that recorded a running turn of session `id`.
pub fn running_turns(conn: &Connection, id: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached("SELECT engine FROM running_turns WHERE session_id = ?1")?
        .query_map([id], |row| row.get(0))?
        .collect()
}

/// A row of `id, update_json, model_json`.
fn event(row: &Row<'_>) -> rusqlite::Result<Event> {
    let parse = |s: Option<String>| s.and_then(|s| serde_json::from_str(&s).ok());
    Ok(Event {
        update: parse(row.get(1)?),
        model: parse(row.get(2)?),
    })
}

pub fn events(conn: &Connection, id: &str) -> rusqlite::Result<Vec<Event>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, update_json, model_json FROM events WHERE session_id = ?1 ORDER BY id",
    )?;
    stmt.query_map([id], event)?.collect()
}

/// Hands the rows `sql` selects to `each`, oldest first: those of session `id` after the row
/// `after`, `limit` at most (`sql` takes them as `?1`, `?2`, `?3`, and selects the row's id
/// first); how many there were, and the last one's id. A long log is read a page at a time.
fn for_each_after(
    conn: &Connection,
    sql: &str,
    id: &str,
    (after, limit): (i64, usize),
    mut each: impl FnMut(&Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<(usize, i64)> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query((id, after, limit as i64))?;
    let (mut count, mut last) = (0, after);
    while let Some(row) = rows.next()? {
        each(row)?;
        (count, last) = (count + 1, row.get(0)?);
    }
    Ok((count, last))
}

/// Up to `limit` of the rows the model's context is built from — the user's prompt blocks
/// and the model-only rows (its messages, compactions), not the stream of chunks around them
/// — those after the row `after`, oldest first, handed to `each` one at a time as they are
/// read (a long session's rows, each a JSON tree, are never all held at once); how many there
/// were, and the last one's id.
pub fn for_each_context_event(
    conn: &Connection,
    id: &str,
    page: (i64, usize),
    mut each: impl FnMut(Event),
) -> rusqlite::Result<(usize, i64)> {
    let sql = "SELECT id, update_json, model_json FROM events
         WHERE session_id = ?1 AND kind IN ('model', 'user_message_chunk') AND id > ?2
         ORDER BY id LIMIT ?3";
    for_each_after(conn, sql, id, page, |row| event(row).map(&mut each))
}

/// What the session had spent by its last `usage_update` that said (the `cost` a priced model
/// adds): where a session that comes up again continues its running cost from.
pub fn spent(conn: &Connection, id: &str) -> rusqlite::Result<Option<f64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT json_extract(update_json, '$.cost.amount') AS amount FROM events
         WHERE session_id = ?1 AND kind = 'usage_update' AND amount IS NOT NULL
         ORDER BY id DESC LIMIT 1",
    )?;
    stmt.query_row([id], |row| row.get(0)).optional()
}

/// Up to `limit` of the rows `session/load` replays, those after the row `after`, oldest
/// first, handed to `each` one at a time as they are read; how many there were, and the last
/// one's id. Model-only rows are read too (as [`Stored::Hidden`]) because they separate
/// chunks that must not fold together.
pub fn for_each_stored(
    conn: &Connection,
    id: &str,
    page: (i64, usize),
    mut each: impl FnMut(Stored),
) -> rusqlite::Result<(usize, i64)> {
    let sql = "SELECT id, kind, update_json, model_json IS NOT NULL FROM events
         WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3";
    for_each_after(conn, sql, id, page, |row| {
        let kind = row.get_ref(1)?.as_str()?;
        let update = row.get_ref(2)?.as_str_or_null()?;
        each(Stored::read(kind, update, row.get(3)?));
        Ok(())
    })
}

/// The query of a page of the list, one per shape of the request, so that an index serves
/// both the filter and the order and a cursor is a seek: a single query with
/// `(?1 IS NULL OR cwd = ?1)` scanned the whole `updated_at` index for a `cwd` of few sessions,
/// and from the top for a late page (`list_queries_seek_in_an_index` holds the plans).
pub(super) fn list_query(cwd: bool, cursor: bool) -> &'static str {
    macro_rules! page {
        ($filter:literal) => {
            concat!(
                "SELECT id, cwd, additional_dirs, title, updated_at, parent_id, fork_event_id ",
                "FROM sessions ",
                $filter,
                " ORDER BY updated_at DESC, id DESC LIMIT :limit"
            )
        };
    }
    match (cwd, cursor) {
        (false, false) => page!(""),
        (true, false) => page!("WHERE cwd = :cwd"),
        (false, true) => page!("WHERE (updated_at, id) < (:time, :id)"),
        (true, true) => page!("WHERE cwd = :cwd AND (updated_at, id) < (:time, :id)"),
    }
}

/// Newest first; the cursor is the last row's `(updated_at, id)`, opaque to the client.
pub fn list(
    conn: &Connection,
    cwd: Option<&str>,
    cursor: Option<&Cursor>,
    limit: usize,
) -> rusqlite::Result<ListPage> {
    let mut stmt = conn.prepare_cached(list_query(cwd.is_some(), cursor.is_some()))?;
    let limit_plus_one = limit as i64 + 1;
    let mut bound: Vec<(&str, &dyn ToSql)> = vec![(":limit", &limit_plus_one)];
    if let Some(cwd) = &cwd {
        bound.push((":cwd", cwd));
    }
    if let Some(cursor) = cursor {
        bound.push((":time", &cursor.updated_at));
        bound.push((":id", &cursor.id));
    }
    let mut sessions = stmt
        .query_map(bound.as_slice(), listed)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let next_cursor = if sessions.len() > limit {
        sessions.truncate(limit);
        sessions
            .last()
            .map(|s| format!("{}|{}", s.updated_at, s.id))
    } else {
        None
    };
    Ok(ListPage {
        sessions,
        next_cursor,
    })
}

/// A position in the session list, as handed out in `nextCursor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    updated_at: String,
    id: String,
}

impl Cursor {
    /// `None` for a string this store never handed out.
    pub fn parse(cursor: &str) -> Option<Cursor> {
        let (updated_at, id) = cursor.split_once('|')?;
        (!updated_at.is_empty() && !id.is_empty()).then(|| Cursor {
            updated_at: updated_at.to_string(),
            id: id.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape of the list's query reads an index in the list's order, seeking to the
    /// `cwd` and past the cursor: no scan of every session, no sort.
    #[test]
    fn list_queries_seek_in_an_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        // Configured as the store's connections are: one plan whatever is bound (QPSG).
        super::super::configure(&conn).unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        for (cwd, cursor) in [(false, false), (true, false), (false, true), (true, true)] {
            let sql = format!("EXPLAIN QUERY PLAN {}", list_query(cwd, cursor));
            let mut stmt = conn.prepare(&sql).unwrap();
            let names: Vec<String> = (1..=stmt.parameter_count())
                .map(|i| stmt.parameter_name(i).unwrap().to_string())
                .collect();
            let values: Vec<(&str, &dyn ToSql)> = names
                .iter()
                .map(|n| (n.as_str(), &"x" as &dyn ToSql))
                .collect();
            let plan: Vec<String> = stmt
                .query_map(values.as_slice(), |row| row.get::<_, String>(3))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let plan = plan.join("; ");
            let index = if cwd {
                "sessions_by_cwd"
            } else {
                "sessions_by_update"
            };
            assert!(plan.contains(index), "{cwd} {cursor}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{cwd} {cursor}: {plan}");
            if cwd || cursor {
                assert!(plan.starts_with("SEARCH"), "{cwd} {cursor}: {plan}");
            }
        }
    }
}
