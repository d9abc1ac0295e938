//! The language-server tools: `diagnostics_tool.rs` (`lsp_diagnostics`) and `position_tool.rs`
//! (`lsp_definition`, `lsp_references`), with `answers.rs` what they share, and `check.rs`:
//! the diagnostics an edit's result gains. The servers behind them are the client stack of
//! `crate::lsp`; a call reaches them through `Context::lsp`.
//!
//! Definitions and references show the lines around places inside the session's roots;
//! places elsewhere (libraries, typeshed) are shown as places, since reading them is `read`'s,
//! with its permission check.
//!
//! Tests: `tests.rs` (the tools against real servers), `core/tests/lsp.rs`,
//! `core/tests/lsp_processes.rs`.

use std::sync::Arc;

mod answers;
mod check;
mod diagnostics_tool;
mod position_tool;
#[cfg(test)]
mod tests;

pub use check::report as change_report;

use super::{AnyTool, Context, ToolError, erase};
use crate::lsp::{Caller, OpenError};
use diagnostics_tool::Diagnostics;
use position_tool::{AtPosition, Question};

/// The three LSP tools, offered to every session whether or not a server is installed, so the
/// model learns what exists (a call then says what is missing).
pub fn tools() -> Vec<Arc<dyn AnyTool>> {
    vec![
        erase(Diagnostics),
        erase(AtPosition(Question::Definition)),
        erase(AtPosition(Question::References)),
    ]
}

/// A call opens files in its servers as itself: through its workspace port, in its session's
/// roots, given up with its turn.
impl<'a> From<&'a Context> for Caller<'a> {
    fn from(ctx: &'a Context) -> Self {
        Caller {
            io: &*ctx.io,
            roots: &ctx.roots,
            cwd: &ctx.cwd,
            cancel: &ctx.cancel,
        }
    }
}

impl From<OpenError> for ToolError {
    fn from(error: OpenError) -> Self {
        ToolError(error.0)
    }
}
