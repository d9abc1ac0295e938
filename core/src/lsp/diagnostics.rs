//! Diagnostics: asked for (`textDocument/diagnostic`) or, from a server without it, waited
//! for as pushed for the document's version; shown as a person reads them; and compared
//! before and after an edit, to tell the model what the edit broke; and the bounded report
//! of them that `lsp_diagnostics` answers with.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::connection::Connection;
use super::exchange::{CallError, METHOD_NOT_FOUND, SERVER_CANCELLED};
use super::position::from_lsp;
use super::server::Timeouts;
use crate::io::cut_line;
use crate::text::plural;

/// A message longer than this is cut: the first lines of a type error say what is wrong.
const MAX_MESSAGE_CHARS: usize = 400;
/// Diagnostics shown per file, and in all; files listed, at most.
const MAX_FILE_DIAGNOSTICS: usize = 50;
const MAX_DIAGNOSTICS: usize = 200;
const MAX_FILES: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 0-based, as the server sent them.
    pub line: u32,
    pub character: u32,
    pub severity: Severity,
    pub source: Option<String>,
    pub code: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    fn from_lsp(value: &Value) -> Self {
        match value.as_u64() {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Information,
            Some(4) => Severity::Hint,
            // The spec leaves a missing severity to the client: an error is the safe reading.
            _ => Severity::Error,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

impl Diagnostic {
    fn parse(value: &Value) -> Option<Self> {
        let start = &value["range"]["start"];
        let code = match &value["code"] {
            Value::String(code) => Some(code.clone()),
            Value::Number(code) => Some(code.to_string()),
            _ => None,
        };
        Some(Diagnostic {
            line: u32::try_from(start["line"].as_u64()?).ok()?,
            character: u32::try_from(start["character"].as_u64()?).ok()?,
            severity: Severity::from_lsp(&value["severity"]),
            source: value["source"].as_str().map(str::to_owned),
            code,
            message: value["message"].as_str()?.to_owned(),
        })
    }

    /// `line:column severity [source code]: message`, 1-based, `text` being the document's.
    pub fn render(&self, text: &str) -> String {
        let (line, column) = from_lsp(text, self.line, self.character);
        let origin = match (&self.source, &self.code) {
            (Some(source), Some(code)) => format!(" [{source} {code}]"),
            (Some(one), None) | (None, Some(one)) => format!(" [{one}]"),
            (None, None) => String::new(),
        };
        // Multi-line messages (pyright's explanations) read as one line, its parts joined.
        let message: Vec<&str> = self
            .message
            .lines()
            .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c == '\u{a0}'))
            .filter(|l| !l.is_empty())
            .collect();
        let message = cut_line(&message.join(" "), MAX_MESSAGE_CHARS).into_owned();
        format!(
            "{line}:{column} {}{origin}: {message}",
            self.severity.as_str()
        )
    }

    /// What an error is, wherever it sits: an edit moves lines, not meanings.
    fn identity(&self) -> (Severity, Option<&str>, Option<&str>, &str) {
        (
            self.severity,
            self.source.as_deref(),
            self.code.as_deref(),
            self.message.as_str(),
        )
    }
}

/// The diagnostics of `value` (an array), errors first, then by position.
pub fn parse_all(value: &Value) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Diagnostic::parse)
        .collect();
    all.sort_by_key(|d| (d.severity, d.line, d.character));
    all
}

/// The server's diagnostics of `uri` as synced (`synced` is what `Connection::sync` gave),
/// from a server done loading its project: one that says it is loading is waited for (at
/// most `timeouts.startup`), and what it answered while loading, or dropped when loading
/// ended, is asked again (`readiness.rs`).
pub async fn current(
    connection: &Connection,
    uri: &str,
    synced: (i32, u64),
    timeouts: &Timeouts,
    cancel: &CancellationToken,
) -> Result<Vec<Diagnostic>, CallError> {
    let loading = (Instant::now() + timeouts.startup, timeouts.startup);
    loop {
        connection.ready(loading, cancel).await?;
        let answer = once(connection, uri, synced, timeouts.request, cancel).await;
        let dropped =
            matches!(&answer, Err(CallError::Failed { code, .. }) if *code == SERVER_CANCELLED);
        let stale = answer.is_ok() && connection.busy();
        if !(stale || dropped && Instant::now() < loading.0) {
            return answer;
        }
    }
}

/// One ask, pulled or waited for as pushed.
async fn once(
    connection: &Connection,
    uri: &str,
    synced: (i32, u64),
    timeout: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<Vec<Diagnostic>, CallError> {
    if connection.pulls() {
        let asked = connection
            .request(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
                timeout,
                cancel,
            )
            .await;
        match asked {
            // Hearth never sends a `previousResultId`, so the report is always a full one.
            Ok(report) => return Ok(parse_all(&report["items"])),
            Err(CallError::Failed { code, .. }) if code == METHOD_NOT_FOUND => {
                connection.stop_pulling();
            }
            Err(other) => return Err(other),
        }
    }
    let pushed = connection.pushed_for(uri, synced, timeout, cancel).await?;
    Ok(parse_all(&pushed))
}

/// The errors of `after` that `before` did not have (counting repeats).
pub fn introduced(before: &[Diagnostic], after: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut known: HashMap<_, usize> = HashMap::new();
    for diagnostic in before {
        *known.entry(diagnostic.identity()).or_default() += 1;
    }
    after
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter(|d| match known.get_mut(&d.identity()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// The errors and warnings of one file after another, bounded.
#[derive(Default)]
pub struct DiagnosticsReport {
    out: String,
    files: usize,
    shown: usize,
    errors: usize,
    warnings: usize,
}

impl DiagnosticsReport {
    pub fn add(&mut self, name: &str, text: &str, found: &[Diagnostic]) {
        let kept: Vec<&Diagnostic> = found
            .iter()
            .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
            .collect();
        if kept.is_empty() && self.files > 0 {
            return;
        }
        self.files += 1;
        let errors = kept
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        self.errors += errors;
        self.warnings += kept.len() - errors;
        if self.files > MAX_FILES {
            return;
        }
        self.out.push_str(&format!(
            "{name}: {}, {}\n",
            plural(errors, "error"),
            plural(kept.len() - errors, "warning")
        ));
        let room = MAX_FILE_DIAGNOSTICS.min(MAX_DIAGNOSTICS - self.shown.min(MAX_DIAGNOSTICS));
        for diagnostic in kept.iter().take(room) {
            self.out
                .push_str(&format!("  {}\n", diagnostic.render(text)));
        }
        self.shown += kept.len().min(room);
        if kept.len() > room {
            self.out
                .push_str(&format!("  … {} more in this file\n", kept.len() - room));
        }
    }

    pub fn finish(mut self, server: &str) -> String {
        if self.files > MAX_FILES {
            let left_out = self.files - MAX_FILES;
            self.out
                .push_str(&format!("… {} more\n", plural(left_out, "file")));
        }
        format!(
            "{}(from the {server} language server: {} and {} in {})\n",
            self.out,
            plural(self.errors, "error"),
            plural(self.warnings, "warning"),
            plural(self.files, "file")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(line: u32, severity: u64, message: &str) -> Value {
        json!({
            "range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 9}},
            "severity": severity, "source": "Pyright", "code": "reportX", "message": message,
        })
    }

    #[test]
    fn parses_sorts_and_renders_one_based() {
        let all = parse_all(&json!([
            diagnostic(5, 2, "unused"),
            diagnostic(1, 1, "Type \"str\" is not assignable\n\u{a0}\u{a0}\"str\" is not \"int\""),
            {"range": {"start": {"line": 0, "character": 0}}, "message": "no severity", "code": 2322},
            {"message": "no range"},
        ]));
        assert_eq!(all.len(), 3);
        let text = "x\ny = 1\n";
        assert_eq!(all[0].render(text), "1:1 error [2322]: no severity");
        assert_eq!(
            all[1].render(text),
            "2:5 error [Pyright reportX]: Type \"str\" is not assignable \"str\" is not \"int\""
        );
        assert_eq!(all[2].render(text), "6:5 warning [Pyright reportX]: unused");
    }

    #[test]
    fn introduced_errors_ignore_moves_and_count_repeats() {
        let before = parse_all(&json!([diagnostic(1, 1, "old"), diagnostic(2, 1, "twice")]));
        let after = parse_all(&json!([
            diagnostic(7, 1, "old"),
            diagnostic(8, 1, "twice"),
            diagnostic(9, 1, "twice"),
            diagnostic(3, 2, "a new warning"),
            diagnostic(4, 1, "new"),
        ]));
        let new: Vec<String> = introduced(&before, &after)
            .into_iter()
            .map(|d| d.message)
            .collect();
        assert_eq!(new, ["new", "twice"]);
    }
}
