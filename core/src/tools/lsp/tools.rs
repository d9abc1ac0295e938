//! The three tools: `lsp_diagnostics`, `lsp_definition`, `lsp_references`. Each opens the file
//! with its current content in its server (`session.rs`), asks, and answers in 1-based lines
//! and columns with the source lines around each place.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::diagnostics::{self, Diagnostic, Severity};
use super::exchange::CallError;
use super::position::{from_lsp, line_text, to_lsp};
use super::session::Opened;
use crate::chat::ToolSpec;
use crate::tools::bounds::{MAX_LINE_CHARS, cut_line, plural};
use crate::tools::input::parse;
use crate::tools::paths::{resolve, shown};
use crate::tools::{Access, Context, Kind, Location, Output, Prepared, Tool, ToolError};

/// Definitions shown, at most (an overloaded name can have many).
const MAX_DEFINITIONS: usize = 10;
/// Diagnostics shown per file, and in all; files listed, at most.
const MAX_FILE_DIAGNOSTICS: usize = 50;
const MAX_DIAGNOSTICS: usize = 200;
const MAX_FILES: usize = 50;

pub struct Diagnostics;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiagnosticsInput {
    path: String,
    #[serde(default)]
    all_files: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PositionInput {
    path: String,
    line: u32,
    column: u32,
}

struct DiagnosticsCall {
    path: PathBuf,
    all_files: bool,
}

struct PositionCall {
    path: PathBuf,
    line: u32,
    column: u32,
}

fn path_property() -> Value {
    json!({"type": "string", "description": "The file, absolute or relative to the working directory."})
}

fn position_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": path_property(),
            "line": {"type": "integer", "minimum": 1, "description": "The symbol's line, 1-based (as `read` numbers them)."},
            "column": {"type": "integer", "minimum": 1, "description": "A character of the symbol, 1-based: the first character of the line is column 1."}
        },
        "required": ["path", "line", "column"],
        "additionalProperties": false
    })
}

impl Tool for Diagnostics {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "lsp_diagnostics".into(),
            description: "The errors and warnings a language server (the compiler or type \
                checker) reports for a file as it is now, unsaved editor changes included: \
                line and column (1-based), severity, source and message. Use it after changes \
                to check them, and before running a build. With `all_files`, also every other \
                file the server has diagnostics for."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": path_property(),
                    "all_files": {"type": "boolean", "description": "Also list the other files the server reports on. Default: false."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }

    fn kind(&self) -> Kind {
        Kind::Read
    }

    fn prepare<'a>(
        &'a self,
        input: &'a Value,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            let input: DiagnosticsInput = parse(input)?;
            let path = resolve(ctx, &input.path)?;
            let title = format!("Diagnostics of {}", shown(ctx, &path));
            Ok(read_call(
                title,
                path.clone(),
                None,
                DiagnosticsCall {
                    path,
                    all_files: input.all_files,
                },
            ))
        })
    }

    fn run<'a>(
        &'a self,
        prepared: Prepared,
        ctx: &'a Context,
        _progress: UnboundedSender<String>,
    ) -> BoxFuture<'a, Result<Output, ToolError>> {
        Box::pin(async move {
            let call: DiagnosticsCall = prepared.into_state()?;
            let opened = ctx.lsp.open(ctx, &call.path).await?;
            let found = ask_diagnostics(ctx, &opened, &opened.uri, opened.synced).await?;
            let mut report = DiagnosticsReport::default();
            report.add(&shown(ctx, &call.path), &opened.text, &found);
            if call.all_files {
                for (path, text, found) in other_files(ctx, &opened).await? {
                    report.add(&shown(ctx, &path), &text, &found);
                }
            }
            Ok(text_output(report.finish(&opened.server)))
        })
    }
}

/// What `lsp_definition` and `lsp_references` ask of the symbol at a position: the two tools
/// differ only in the question, its wording and how the answer is laid out.
#[derive(Clone, Copy)]
pub enum Question {
    Definition,
    References,
}

/// A tool asking a [`Question`] about the symbol at `path:line:column`.
pub struct AtPosition(pub Question);

impl Question {
    fn name(self) -> &'static str {
        match self {
            Question::Definition => "lsp_definition",
            Question::References => "lsp_references",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Question::Definition => {
                "Where the symbol at a position is defined, found by a language \
                server (across files and packages, not by text), with the lines around each \
                definition. Give the position of any character of the symbol's name."
            }
            Question::References => {
                "Every reference to the symbol at a position, found by a language \
                server (true uses, not text matches: no comments, no other symbols of the same \
                name), grouped by file, each with its line. The declaration is included. Give \
                the position of any character of the symbol's name."
            }
        }
    }

    /// The call's title, before its `path:line:column`.
    fn title(self) -> &'static str {
        match self {
            Question::Definition => "Definition at",
            Question::References => "References to",
        }
    }

    /// The LSP method and the parameters it takes beside the position.
    fn request(self) -> (&'static str, Value) {
        match self {
            Question::Definition => ("textDocument/definition", json!({})),
            Question::References => (
                "textDocument/references",
                json!({"context": {"includeDeclaration": true}}),
            ),
        }
    }

    async fn answer(self, ctx: &Context, opened: &Opened, here: &str, found: Vec<Place>) -> String {
        match self {
            Question::Definition if found.is_empty() => format!(
                "No definition found for the symbol at {here} (the {} language server knows none there).",
                opened.server
            ),
            Question::Definition => definitions(ctx, opened, here, &found).await,
            Question::References if found.is_empty() => {
                format!("No references found for the symbol at {here}.")
            }
            Question::References => references(ctx, opened, here, found).await,
        }
    }
}

impl Tool for AtPosition {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.0.name().into(),
            description: self.0.description().into(),
            parameters: position_schema(),
        }
    }

    fn kind(&self) -> Kind {
        Kind::Read
    }

    fn prepare<'a>(
        &'a self,
        input: &'a Value,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move { prepare_position(self.0.title(), input, ctx) })
    }

    fn run<'a>(
        &'a self,
        prepared: Prepared,
        ctx: &'a Context,
        _progress: UnboundedSender<String>,
    ) -> BoxFuture<'a, Result<Output, ToolError>> {
        Box::pin(async move {
            let call: PositionCall = prepared.into_state()?;
            let (method, extra) = self.0.request();
            let (opened, found) = ask_position(ctx, &call, method, extra).await?;
            let here = format!("{}:{}:{}", shown(ctx, &call.path), call.line, call.column);
            Ok(text_output(self.0.answer(ctx, &opened, &here, found).await))
        })
    }
}

fn prepare_position(verb: &str, input: &Value, ctx: &Context) -> Result<Prepared, ToolError> {
    let input: PositionInput = parse(input)?;
    if input.line == 0 || input.column == 0 {
        return Err(ToolError("`line` and `column` start at 1".into()));
    }
    let path = resolve(ctx, &input.path)?;
    let title = format!(
        "{verb} {}:{}:{}",
        shown(ctx, &path),
        input.line,
        input.column
    );
    Ok(read_call(
        title,
        path.clone(),
        Some(input.line),
        PositionCall {
            path,
            line: input.line,
            column: input.column,
        },
    ))
}

fn read_call(
    title: String,
    path: PathBuf,
    line: Option<u32>,
    state: impl std::any::Any + Send + Sync,
) -> Prepared {
    Prepared::new(
        title,
        vec![Location {
            path: path.clone(),
            line,
        }],
        Access::Read(vec![path]),
        state,
    )
}

fn text_output(text: String) -> Output {
    Output {
        for_model: text,
        ..Output::default()
    }
}

/// A failed call, in the model's words.
fn server_error(opened: &Opened, error: CallError) -> ToolError {
    let server = &opened.server;
    match error {
        CallError::Ended(reason) if opened.may_restart => ToolError(format!(
            "the {server} language server stopped: {reason}; the next call starts it again"
        )),
        CallError::Ended(reason) => ToolError(format!(
            "the {server} language server stopped again after its restart: {reason}; it is not \
             started again"
        )),
        other => ToolError(format!("the {server} language server: {other}")),
    }
}

async fn ask_diagnostics(
    ctx: &Context,
    opened: &Opened,
    uri: &str,
    synced: (i32, u64),
) -> Result<Vec<Diagnostic>, ToolError> {
    diagnostics::current(
        &opened.connection,
        uri,
        synced,
        opened.timeouts.request,
        &ctx.cancel,
    )
    .await
    .map_err(|e| server_error(opened, e))
}

/// The diagnostics of the server's other files: those open in it (asked again, as they are
/// now) and those it pushed.
async fn other_files(
    ctx: &Context,
    opened: &Opened,
) -> Result<Vec<(PathBuf, String, Vec<Diagnostic>)>, ToolError> {
    let mut files = Vec::new();
    for (uri, text) in opened.connection.documents().await {
        if uri == opened.uri {
            continue;
        }
        let Some(path) = super::path_of(&uri) else {
            continue;
        };
        let synced = opened.connection.sync(&uri, "", &text).await;
        // One file the server cannot answer for does not hide the others.
        if let Ok(found) = ask_diagnostics(ctx, opened, &uri, synced).await {
            files.push((path, text, found));
        }
    }
    let open: Vec<PathBuf> = files.iter().map(|(path, _, _)| path.clone()).collect();
    for (uri, published) in opened.connection.pushed() {
        let Some(path) = super::path_of(&uri) else {
            continue;
        };
        if uri == opened.uri || open.contains(&path) {
            continue;
        }
        let text = readable_text(ctx, &path).await.unwrap_or_default();
        files.push((path, text, diagnostics::parse_all(&published.diagnostics)));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// The errors and warnings of one file after another, bounded.
#[derive(Default)]
struct DiagnosticsReport {
    out: String,
    files: usize,
    shown: usize,
    errors: usize,
    warnings: usize,
}

impl DiagnosticsReport {
    fn add(&mut self, name: &str, text: &str, found: &[Diagnostic]) {
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

    fn finish(mut self, server: &str) -> String {
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
/// A place a server answered with (0-based, UTF-16).
struct Place {
    uri: String,
    line: u32,
    character: u32,
}

/// Opens the call's file, checks the position and asks `method` there; `extra` joins the
/// parameters.
async fn ask_position(
    ctx: &Context,
    call: &PositionCall,
    method: &str,
    extra: Value,
) -> Result<(Opened, Vec<Place>), ToolError> {
    let opened = ctx.lsp.open(ctx, &call.path).await?;
    let (line, character) = to_lsp(&opened.text, call.line, call.column).map_err(ToolError)?;
    let mut params = json!({
        "textDocument": {"uri": opened.uri},
        "position": {"line": line, "character": character},
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    let answer = opened
        .connection
        .request(method, params, opened.timeouts.request, &ctx.cancel)
        .await
        .map_err(|e| server_error(&opened, e))?;
    Ok((opened, places(&answer)))
}

/// `Location`, `Location[]`, `LocationLink[]` or null.
fn places(answer: &Value) -> Vec<Place> {
    let items = match answer {
        Value::Array(items) => items.clone(),
        Value::Null => Vec::new(),
        one => vec![one.clone()],
    };
    items
        .iter()
        .filter_map(|item| {
            let uri = item
                .get("targetUri")
                .or_else(|| item.get("uri"))?
                .as_str()?;
            let range = item
                .get("targetSelectionRange")
                .or_else(|| item.get("range"))?;
            Some(Place {
                uri: uri.to_owned(),
                line: u32::try_from(range["start"]["line"].as_u64()?).ok()?,
                character: u32::try_from(range["start"]["character"].as_u64()?).ok()?,
            })
        })
        .collect()
}

/// The text of the files answers point into, read once each through the workspace.
#[derive(Default)]
struct Files {
    texts: HashMap<String, Option<String>>,
}

impl Files {
    async fn text(&mut self, ctx: &Context, opened: &Opened, uri: &str) -> Option<&str> {
        if !self.texts.contains_key(uri) {
            let text = if uri == opened.uri {
                Some(opened.text.clone())
            } else {
                match super::path_of(uri) {
                    Some(path) => readable_text(ctx, &path).await,
                    None => None,
                }
            };
            self.texts.insert(uri.to_owned(), text);
        }
        self.texts.get(uri).and_then(|t| t.as_deref())
    }

    /// `file:line:column` and the lines around it (one before, three after).
    async fn context(&mut self, ctx: &Context, opened: &Opened, place: &Place) -> String {
        let name = display(ctx, &place.uri);
        let Some(text) = self.text(ctx, opened, &place.uri).await else {
            return format!(
                "{name}:{}:{} (outside the workspace, or unreadable: `read` it to see it)\n",
                place.line + 1,
                place.character + 1
            );
        };
        let (line, column) = from_lsp(text, place.line, place.character);
        let mut out = format!("{name}:{line}:{column}\n");
        for number in line.saturating_sub(1).max(1)..=line + 3 {
            let Some(content) = line_text(text, number) else {
                break;
            };
            let marker = if number == line { '>' } else { ' ' };
            out.push_str(&format!(
                "{marker}{number:>5}\t{}\n",
                cut_line(content, MAX_LINE_CHARS)
            ));
        }
        out
    }
}

/// The text of `path` when it lies in one of the session's roots. A server points into
/// libraries and the standard library too; those are shown as places only, since reading
/// them is what `read`, with its permission check, is for.
async fn readable_text(ctx: &Context, path: &Path) -> Option<String> {
    if !ctx.roots.iter().any(|root| path.starts_with(root)) {
        return None;
    }
    ctx.io.read_text(path).await.ok()
}

/// Each definition with the lines around it, bounded.
async fn definitions(ctx: &Context, opened: &Opened, here: &str, found: &[Place]) -> String {
    let mut files = Files::default();
    let mut out = format!(
        "{} of the symbol at {here}:\n",
        plural(found.len(), "definition")
    );
    for place in found.iter().take(MAX_DEFINITIONS) {
        out.push('\n');
        out.push_str(&files.context(ctx, opened, place).await);
    }
    if found.len() > MAX_DEFINITIONS {
        out.push_str(&format!(
            "\n… {} more definitions\n",
            found.len() - MAX_DEFINITIONS
        ));
    }
    out
}

/// The references, grouped by file in path order, each with its line, bounded.
async fn references(ctx: &Context, opened: &Opened, here: &str, found: Vec<Place>) -> String {
    let total = found.len();
    let max = ctx.limits.search_max_results;
    let mut by_file: BTreeMap<String, Vec<Place>> = BTreeMap::new();
    for place in found {
        by_file
            .entry(display(ctx, &place.uri))
            .or_default()
            .push(place);
    }
    let mut out = format!(
        "{} to the symbol at {here}, in {}:\n",
        plural(total, "reference"),
        plural(by_file.len(), "file")
    );
    let mut files = Files::default();
    let mut shown_count = 0;
    for (name, mut places) in by_file {
        if shown_count == max {
            break;
        }
        places.sort_by_key(|p| (p.line, p.character));
        out.push_str(&format!("\n{name}\n"));
        for place in places.iter().take(max - shown_count) {
            let text = files.text(ctx, opened, &place.uri).await.unwrap_or("");
            let (line, column) = from_lsp(text, place.line, place.character);
            let content = line_text(text, line).unwrap_or("").trim();
            out.push_str(&format!(
                "  {line}:{column}: {}\n",
                cut_line(content, MAX_LINE_CHARS)
            ));
            shown_count += 1;
        }
    }
    if total > shown_count {
        out.push_str(&format!("\n… {} more references\n", total - shown_count));
    }
    out
}

/// A place's file as the model reads paths (relative to the working directory when inside).
fn display(ctx: &Context, uri: &str) -> String {
    match super::path_of(uri) {
        Some(path) => shown(ctx, Path::new(&path)),
        None => uri.to_owned(),
    }
}
