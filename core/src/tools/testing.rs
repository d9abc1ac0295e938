//! Test helpers for the tools: a context over a directory with the local backend, a
//! reporter that keeps what a call reported, a tree of files, and a call made as the engine
//! makes it.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::input::parse;
use super::{AnyTool, CallReport, Context, Limits, Output, PlanEntry, Planned, Tool, ToolError};

pub fn context(cwd: &Path) -> Context {
    Context {
        cwd: cwd.to_owned(),
        roots: vec![cwd.to_owned()],
        io: Arc::new(crate::io::testing::local()),
        limits: Limits::default(),
        cancel: CancellationToken::new(),
        vision: true,
        sandbox: Default::default(),
        lsp: crate::lsp::Lsp::none(),
        children: None,
        skills: Default::default(),
        user: None,
    }
}

/// An empty directory, and a context working in it.
pub fn workspace() -> (tempfile::TempDir, Context) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    (dir, ctx)
}

/// A directory holding `files`: each relative path with its content, parents made as
/// needed.
pub fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (file, content) in files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

/// What a call reported: its live output as it came, and the plans it set.
pub struct Recorder {
    output: UnboundedSender<String>,
    plans: Mutex<Vec<Vec<PlanEntry>>>,
}

impl Recorder {
    /// A recorder, and the receiving end of the output it is given.
    pub fn new() -> (Self, UnboundedReceiver<String>) {
        let (output, received) = unbounded_channel();
        let recorder = Recorder {
            output,
            plans: Mutex::default(),
        };
        (recorder, received)
    }

    pub fn plans(&self) -> Vec<Vec<PlanEntry>> {
        self.plans.lock().unwrap().clone()
    }
}

impl CallReport for Recorder {
    fn output(&self, delta: String) {
        let _ = self.output.send(delta);
    }

    fn plan(&self, entries: Vec<PlanEntry>) {
        self.plans.lock().unwrap().push(entries);
    }

    fn progress(&self, text: String) {
        let _ = self.output.send(text);
    }

    fn call_id(&self) -> &str {
        "tc_test"
    }
}

/// Prepares and runs a call, as the engine would once permission is granted.
pub async fn call<T: Tool>(tool: &T, input: Value, ctx: &Context) -> Result<Output, ToolError> {
    let (recorder, _output) = Recorder::new();
    report(tool, input, ctx, &recorder).await
}

/// [`call`], reporting to `report`.
pub async fn report<T: Tool>(
    tool: &T,
    input: Value,
    ctx: &Context,
    report: &dyn CallReport,
) -> Result<Output, ToolError> {
    let planned = prepare(tool, input, ctx).await?;
    tool.run(planned.plan, ctx, report).await
}

/// Deserializes `input` as the engine does and prepares the call.
pub async fn prepare<T: Tool>(
    tool: &T,
    input: Value,
    ctx: &Context,
) -> Result<Planned<T::Plan>, ToolError> {
    tool.prepare(parse(&input)?, ctx).await
}

/// [`call`] of a tool as the registry holds it.
pub async fn call_any(
    tool: &dyn AnyTool,
    input: Value,
    ctx: &Context,
) -> Result<Output, ToolError> {
    let (recorder, _output) = Recorder::new();
    tool.prepare(&input, ctx).await?.run(ctx, &recorder).await
}
