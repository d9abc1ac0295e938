//! The stored permission rules: the "always" answers a user gave, per workspace. They are
//! written by `StoreOp::AddRule` (`ops.rs`).

use rusqlite::Connection;

/// A stored "always" answer: allow or reject calls of `tool` matching `pattern` in one
/// workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRow {
    pub tool: String,
    pub pattern: String,
    pub allow: bool,
}

/// A workspace's rules, oldest first.
pub fn read(conn: &Connection, workspace: &str) -> rusqlite::Result<Vec<RuleRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT tool, pattern, allow FROM permission_rules WHERE workspace = ?1 ORDER BY created_at",
    )?;
    stmt.query_map([workspace], |row| {
        Ok(RuleRow {
            tool: row.get(0)?,
            pattern: row.get(1)?,
            allow: row.get(2)?,
        })
    })?
    .collect()
}
