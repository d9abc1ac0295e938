//! The documents open in a language server: each synced with the content the agent sees
//! (`didOpen`, then `didChange` with the whole text), at most `MAX_OPEN_DOCUMENTS` of them,
//! the least recently used closed first.
//!
//! Tests: `tools/lsp/tests.rs` (against `tests/lsp/fake_server.py`), `core/tests/lsp.rs`
//! (the real servers).

use std::collections::HashMap;

use serde_json::json;

use super::exchange::Exchange;
use super::pushed::Pushed;

/// Documents kept open in a server, at most: a server analyses every open document again on
/// each change (pyright does), so a long session must not leave hundreds open. The least
/// recently used is closed first; the server then reads it from disk, if it needs it.
const MAX_OPEN_DOCUMENTS: usize = 32;

/// A document as the server has it.
struct Document {
    version: i32,
    text: String,
    /// When it was last synced, in `Open::clock` ticks.
    used: u64,
}

#[derive(Default)]
struct Open {
    documents: HashMap<String, Document>,
    clock: u64,
}

#[derive(Default)]
pub struct Documents {
    open: tokio::sync::Mutex<Open>,
}

impl Documents {
    /// Makes the server's copy of `uri` read `text` (opening it, or replacing its content).
    /// Returns the document's version and the count of pushes so far, to wait for pushed
    /// diagnostics of this content.
    pub async fn sync(
        &self,
        exchange: &Exchange,
        pushed: &Pushed,
        uri: &str,
        language_id: &str,
        text: &str,
    ) -> (i32, u64) {
        let mut open = self.open.lock().await;
        let pushes = pushed.count();
        open.clock += 1;
        let now = open.clock;
        match open.documents.get_mut(uri) {
            Some(document) if document.text == text => {
                document.used = now;
                (document.version, pushes)
            }
            Some(document) => {
                document.used = now;
                document.version += 1;
                document.text = text.to_owned();
                exchange.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": document.version},
                        "contentChanges": [{"text": text}],
                    }),
                );
                (document.version, pushes)
            }
            None => {
                exchange.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                );
                open.documents.insert(
                    uri.to_owned(),
                    Document {
                        version: 1,
                        text: text.to_owned(),
                        used: now,
                    },
                );
                close_least_used(&mut open, exchange, pushed);
                (1, pushes)
            }
        }
    }

    /// The documents open in the server, with their content.
    pub async fn all(&self) -> Vec<(String, String)> {
        let open = self.open.lock().await;
        open.documents
            .iter()
            .map(|(uri, document)| (uri.clone(), document.text.clone()))
            .collect()
    }
}

fn close_least_used(open: &mut Open, exchange: &Exchange, pushed: &Pushed) {
    while open.documents.len() > MAX_OPEN_DOCUMENTS {
        let Some(oldest) = open
            .documents
            .iter()
            .min_by_key(|(_, document)| document.used)
            .map(|(uri, _)| uri.clone())
        else {
            return;
        };
        open.documents.remove(&oldest);
        pushed.forget(&oldest);
        exchange.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": oldest}}),
        );
    }
}
