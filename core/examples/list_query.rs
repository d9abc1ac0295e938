//! The query behind `session/list`, alone: the round-trip harness's baseline for that method
//! (benches/roundtrip). It times the SELECT of the first page of sessions on a read-only
//! connection to an engine's file store, with no engine around it, so that the harness shows
//! how much of a `session/list` round trip is the query itself and how much is getting to it.
//!
//!   list_query REQUESTS WARMUP SAMPLES_FILE DATA_DIR
//!
//! Like every round-trip driver (benches/roundtrip/bench.h): WARMUP untimed queries, then
//! REQUESTS timed ones, one latency per line in nanoseconds to SAMPLES_FILE. DATA_DIR is the
//! engine's `dataDir` (the store is its `hearth.db`).
//!
//! An example of hearth-core because the store's SQLite is: this links the same bundled
//! SQLite build through the same rusqlite, so the figure is the engine's query, not another
//! library's. What it runs must stay what the engine runs (`store/sessions.rs` `list`, and
//! the reader connection of `store/mod.rs`): the statement is copied below, since the store
//! is private to the crate.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use rusqlite::{Connection, OpenFlags, Row, params};

/// The engine's `session/list` statement, columns and all.
const LIST: &str = "SELECT id, cwd, additional_dirs, title, updated_at
     FROM sessions
     WHERE (?1 IS NULL OR cwd = ?1)
       AND (?2 = '' OR (updated_at, id) < (?2, ?3))
     ORDER BY updated_at DESC, id DESC
     LIMIT ?4";

/// Sessions per page, as the engine's `LIST_PAGE`; it asks for one more, to know whether
/// there is a next page.
const PAGE: i64 = 50;

/// One row read the way the store reads it (`store/sessions.rs` `listed`), column by column
/// into owned values (the store then parses `additional_dirs` as JSON: engine work, not the
/// query's, so not timed here).
type Record = (String, String, String, Option<String>, String);

fn record(row: &Row<'_>) -> rusqlite::Result<Record> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
    ))
}

fn page(reader: &Connection) -> rusqlite::Result<Vec<Record>> {
    let mut statement = reader.prepare_cached(LIST)?;
    let rows = statement.query_map(params![None::<&str>, "", "", PAGE + 1], record)?;
    rows.collect()
}

/// The store's reader connection: read-only, no SQLite mutex, the same settings.
fn open(db: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(db, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "foreign_keys", true)?;
    Ok(conn)
}

fn fail(message: String) -> ! {
    eprintln!("list_query: {message}");
    std::process::exit(1)
}

fn count(text: &str, what: &str) -> usize {
    text.parse().unwrap_or_else(|_| {
        fail(format!(
            "{what} must be a non-negative integer, not `{text}`"
        ))
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [requests, warmup, samples_path, data_dir] = &args[..] else {
        fail("usage: list_query REQUESTS WARMUP SAMPLES_FILE DATA_DIR".into())
    };
    let (requests, warmup) = (count(requests, "REQUESTS"), count(warmup, "WARMUP"));
    let db = Path::new(data_dir).join("hearth.db");
    let reader = open(&db).unwrap_or_else(|e| fail(format!("cannot open {}: {e}", db.display())));
    let query = || page(&reader).unwrap_or_else(|e| fail(format!("the query failed: {e}")));
    if query().is_empty() {
        fail(format!("{} holds no session", db.display()));
    }
    for _ in 0..warmup {
        black_box(query());
    }
    let samples: Vec<u128> = (0..requests)
        .map(|_| {
            let start = Instant::now();
            black_box(query());
            start.elapsed().as_nanos()
        })
        .collect();
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(samples_path)
            .unwrap_or_else(|e| fail(format!("cannot write {samples_path}: {e}"))),
    );
    for ns in samples {
        writeln!(out, "{ns}").unwrap_or_else(|e| fail(format!("cannot write {samples_path}: {e}")));
    }
    out.flush()
        .unwrap_or_else(|e| fail(format!("cannot write {samples_path}: {e}")));
}
