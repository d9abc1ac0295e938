//! `lsp_definition` and `lsp_references`: a question about the symbol at a position, asked
//! of the file's language server, answered with the source lines around each place.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::answers::{readable_text, server_error, text_output};
use crate::lsp::Opened;
use crate::lsp::position::{from_lsp, line_text, to_lsp};
use crate::tools::bounds::{MAX_LINE_CHARS, cut_line, plural};
use crate::tools::paths::{resolve, shown};
use crate::tools::{
    About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool, ToolError,
};

/// Definitions shown, at most (an overloaded name can have many).
const MAX_DEFINITIONS: usize = 10;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionInput {
    /// The file, absolute or relative to the working directory.
    path: String,
    /// The symbol's line, 1-based (as `read` numbers them).
    #[schemars(range(min = 1))]
    line: u32,
    /// A character of the symbol, 1-based: the first character of the line is column 1.
    #[schemars(range(min = 1))]
    column: u32,
}

pub struct PositionCall {
    path: PathBuf,
    line: u32,
    column: u32,
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
    type Input = PositionInput;
    type Plan = PositionCall;

    async fn prepare(&self, input: PositionInput, ctx: &Context) -> Result<Planned<PositionCall>> {
        if input.line == 0 || input.column == 0 {
            return Err(ToolError("`line` and `column` start at 1".into()));
        }
        let path = resolve(ctx, &input.path)?;
        let title = format!(
            "{} {}:{}:{}",
            self.0.title(),
            shown(ctx, &path),
            input.line,
            input.column
        );
        Ok(Planned::new(
            title,
            vec![Location {
                path: path.clone(),
                line: Some(input.line),
            }],
            Access::Read(vec![path.clone()]),
            PositionCall {
                path,
                line: input.line,
                column: input.column,
            },
        ))
    }

    async fn run(
        &self,
        call: PositionCall,
        ctx: &Context,
        _report: &dyn CallReport,
    ) -> Result<Output> {
        let (method, extra) = self.0.request();
        let (opened, found) = ask_position(ctx, &call, method, extra).await?;
        let here = format!("{}:{}:{}", shown(ctx, &call.path), call.line, call.column);
        Ok(text_output(self.0.answer(ctx, &opened, &here, found).await))
    }

    fn about(&self) -> About {
        About::new(self.0.name(), Kind::Read, self.0.description())
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
) -> Result<(Opened, Vec<Place>)> {
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
                match crate::lsp::path_of(uri) {
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
    match crate::lsp::path_of(uri) {
        Some(path) => shown(ctx, Path::new(&path)),
        None => uri.to_owned(),
    }
}
