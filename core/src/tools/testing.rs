//! Test helpers for the tools: a context over a directory with the local backend.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use super::{Context, Limits, Output, Prepared, Tool, ToolError};

pub fn context(cwd: &Path) -> Context {
    Context {
        cwd: cwd.to_owned(),
        roots: vec![cwd.to_owned()],
        io: Arc::new(crate::io::testing::local()),
        limits: Limits::default(),
        cancel: CancellationToken::new(),
        vision: true,
        lsp: super::lsp::Lsp::none(),
    }
}

/// Prepares and runs a call, as the engine would once permission is granted.
pub async fn call(tool: &dyn Tool, input: Value, ctx: &Context) -> Result<Output, ToolError> {
    let prepared = tool.prepare(&input, ctx).await?;
    let (tx, _rx) = unbounded_channel();
    tool.run(prepared, ctx, tx).await
}

pub async fn prepare(tool: &dyn Tool, input: Value, ctx: &Context) -> Result<Prepared, ToolError> {
    tool.prepare(&input, ctx).await
}
