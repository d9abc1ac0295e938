//! `lsp_diagnostics`: the errors and warnings a language server reports for a file as it is
//! now, and with `all_files` for the other files it knows of.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use super::answers::{readable_text, server_error, text_output};
use crate::lsp::Opened;
use crate::lsp::diagnostics::{self, Diagnostic, DiagnosticsReport};
use crate::tools::paths::{resolve, shown};
use crate::tools::{
    About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool,
};

pub struct Diagnostics;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsInput {
    /// The file, absolute or relative to the working directory.
    path: String,
    /// Also list the other files the server reports on. Default: false.
    #[serde(default)]
    all_files: bool,
}

pub struct DiagnosticsCall {
    path: PathBuf,
    all_files: bool,
}

/// What the model is told `lsp_diagnostics` does.
const DESCRIPTION: &str = "The errors and warnings a language server (the compiler or type \
    checker) reports for a file as it is now, unsaved editor changes included: \
    line and column (1-based), severity, source and message. Use it after changes \
    to check them, and before running a build. With `all_files`, also every other \
    file the server has diagnostics for.";

impl Tool for Diagnostics {
    type Input = DiagnosticsInput;
    type Plan = DiagnosticsCall;

    async fn prepare(
        &self,
        input: DiagnosticsInput,
        ctx: &Context,
    ) -> Result<Planned<DiagnosticsCall>> {
        let path = resolve(ctx, &input.path)?;
        let title = format!("Diagnostics of {}", shown(ctx, &path));
        Ok(Planned::new(
            title,
            vec![Location {
                path: path.clone(),
                line: None,
            }],
            Access::Read(vec![path.clone()]),
            DiagnosticsCall {
                path,
                all_files: input.all_files,
            },
        ))
    }

    async fn run(
        &self,
        call: DiagnosticsCall,
        ctx: &Context,
        _report: &dyn CallReport,
    ) -> Result<Output> {
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
    }

    fn about(&self) -> About {
        About::new("lsp_diagnostics", Kind::Read, DESCRIPTION)
    }
}

async fn ask_diagnostics(
    ctx: &Context,
    opened: &Opened,
    uri: &str,
    synced: (i32, u64),
) -> Result<Vec<Diagnostic>> {
    diagnostics::current(
        &opened.connection,
        uri,
        synced,
        &opened.timeouts,
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
) -> Result<Vec<(PathBuf, String, Vec<Diagnostic>)>> {
    let mut files = Vec::new();
    for (uri, text) in opened.connection.documents().await {
        if uri == opened.uri {
            continue;
        }
        let Some(path) = crate::lsp::path_of(&uri) else {
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
        let Some(path) = crate::lsp::path_of(&uri) else {
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
