//! `edit`: exact-match replacements in one file, applied in order. Every replacement must
//! match exactly once (or be marked `replace_all`), so the model never edits a place it did
//! not mean.

use schemars::JsonSchema;
use serde::Deserialize;

use super::bounds::plural;
use super::diffs::{apply_and_report, first_changed_line, unplanned};
use super::line_endings::LineEnding;
use super::paths::{resolve, shown};
use super::{
    About, Access, CallReport, Context, Diff, Kind, Location, Output, Planned, Result, Tool,
    ToolError,
};

pub struct Edit;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file, absolute or relative to the working directory.
    path: String,
    /// The replacements, applied in order.
    #[schemars(length(min = 1))]
    edits: Vec<Replacement>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Replacement {
    /// The exact text to replace (not empty).
    old_text: String,
    /// The text to put in its place (may be empty to delete).
    new_text: String,
    /// Replace every occurrence instead of requiring exactly one. Default: false.
    #[serde(default)]
    replace_all: bool,
}

/// What `prepare` leaves for `run`.
pub struct Call {
    diff: Diff,
    replacements: usize,
}

/// What the model is told `edit` does.
const DESCRIPTION: &str = "Change parts of an existing file by exact text replacement. Each \
    edit replaces `old_text` with `new_text`; edits apply in order, each to the \
    result of the previous ones. `old_text` must match the file exactly, \
    whitespace and indentation included, and only once: include enough \
    surrounding lines to make it unique, or set `replace_all` to change every \
    occurrence. Read the file first. Use `write` to create a file.";

impl Tool for Edit {
    type Input = Input;
    /// `Err`: the edit does not apply (`diffs::unplanned`).
    type Plan = Result<Call>;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Result<Call>>> {
        if input.edits.is_empty() {
            return Err(ToolError(
                "`edits` is empty: give at least one replacement".into(),
            ));
        }
        let path = resolve(ctx, &input.path)?;
        let name = shown(ctx, &path);
        let read = ctx.io.read_text(&path).await.map_err(|e| {
            ToolError(format!(
                "cannot edit {name}: {e} (use `write` to create a file)"
            ))
        });
        let planned = read.and_then(|old| Ok((apply_edits(&old, &input.edits, &name)?, old)));
        let (edited, old_text) = match planned {
            Ok(planned) => planned,
            Err(why) => return Ok(unplanned(format!("Edit {name}"), &path, why)),
        };
        let first_line = first_changed_line(&old_text, &edited.text);
        let diff = Diff {
            path: path.clone(),
            old_text: Some(old_text),
            new_text: edited.text,
        };
        Ok(Planned::new(
            format!(
                "Edit {name} ({})",
                plural(edited.replacements, "replacement")
            ),
            vec![Location {
                path,
                line: Some(first_line),
            }],
            Access::Edit(vec![diff.clone()]),
            Ok(Call {
                diff,
                replacements: edited.replacements,
            }),
        ))
    }

    async fn run(&self, call: Result<Call>, ctx: &Context, _: &dyn CallReport) -> Result<Output> {
        let call = call?;
        let headline = format!(
            "Edited {} ({}).",
            shown(ctx, &call.diff.path),
            plural(call.replacements, "replacement")
        );
        apply_and_report(ctx, &call.diff, &headline).await
    }

    fn about(&self) -> About {
        About::new("edit", Kind::Edit, DESCRIPTION)
    }
}

struct Edited {
    text: String,
    replacements: usize,
}

/// Applies `edits` in order; an error names the edit (1-based) that failed and why.
fn apply_edits(original: &str, edits: &[Replacement], name: &str) -> Result<Edited> {
    let mut text = original.to_owned();
    let mut replacements = 0;
    let ending = LineEnding::of(original);
    for (index, edit) in edits.iter().enumerate() {
        let fail = |why: String| ToolError(format!("edit {} of {}: {why}", index + 1, edits.len()));
        let (old, new) = in_file_form(edit, ending, &text);
        if old.is_empty() {
            return Err(fail("`old_text` is empty".into()));
        }
        if old == new {
            return Err(fail("`old_text` and `new_text` are the same".into()));
        }
        let count = text.matches(old.as_str()).count();
        let later = if index > 0 {
            " (after the earlier edits)"
        } else {
            ""
        };
        match count {
            0 => {
                return Err(fail(format!(
                    "`old_text` was not found in {name}{later}. It must match exactly, \
                     whitespace included; read the file again and copy the text."
                )));
            }
            n if n > 1 && !edit.replace_all => {
                return Err(fail(format!(
                    "`old_text` occurs {n} times in {name}{later}. Include more surrounding \
                     lines to make it unique, or set `replace_all`."
                )));
            }
            n => {
                text = text.replace(old.as_str(), &new);
                replacements += n;
            }
        }
    }
    Ok(Edited { text, replacements })
}

/// The edit's texts as they are written in `text`: in the file's line endings (models write
/// `\n`; a CRLF file stays CRLF, its new lines included), or as the model wrote them when
/// only that form matches (a file that mixes both endings).
fn in_file_form(edit: &Replacement, ending: LineEnding, text: &str) -> (String, String) {
    let old = ending.apply(&edit.old_text);
    if text.contains(old.as_ref()) {
        (old.into_owned(), ending.apply(&edit.new_text).into_owned())
    } else {
        (edit.old_text.clone(), edit.new_text.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::tools::ToolContent;
    use crate::tools::testing::{call, context, prepare};

    const SOURCE: &str = "fn a() {\n    old();\n}\n\nfn b() {\n    old();\n}\n";

    fn project() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.rs");
        std::fs::write(&path, SOURCE).unwrap();
        (dir, path)
    }

    #[tokio::test]
    async fn applies_several_edits_in_order() {
        let (dir, path) = project();
        let ctx = context(dir.path());
        let input = json!({ "path": "lib.rs", "edits": [
            { "old_text": "fn b() {\n    old();", "new_text": "fn b() {\n    new();" },
            { "old_text": "new()", "new_text": "newer()" },
        ]});

        let prepared = prepare(&Edit, input.clone(), &ctx).await.unwrap();
        assert_eq!(prepared.title, "Edit lib.rs (2 replacements)");
        assert_eq!(prepared.locations[0].line, Some(6));
        let expected = SOURCE.replace("fn b() {\n    old();", "fn b() {\n    newer();");
        let Access::Edit(diffs) = &prepared.access else {
            panic!("not an edit")
        };
        assert_eq!(diffs[0].old_text.as_deref(), Some(SOURCE));
        assert_eq!(diffs[0].new_text, expected);

        let output = call(&Edit, input, &ctx).await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        assert!(
            output
                .for_model
                .starts_with("Edited lib.rs (2 replacements).\n\n")
        );
        assert!(
            output.for_model.contains("-    old();\n+    newer();\n"),
            "{}",
            output.for_model
        );
        assert_eq!(
            output.content,
            vec![ToolContent::Diff(Diff {
                path: path.clone(),
                old_text: Some(SOURCE.into()),
                new_text: expected,
            })]
        );
    }

    #[tokio::test]
    async fn replace_all_changes_every_occurrence() {
        let (dir, path) = project();
        let ctx = context(dir.path());
        let input = json!({ "path": "lib.rs", "edits": [
            { "old_text": "old()", "new_text": "new()", "replace_all": true },
        ]});
        assert_eq!(
            prepare(&Edit, input.clone(), &ctx).await.unwrap().title,
            "Edit lib.rs (2 replacements)"
        );
        call(&Edit, input, &ctx).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            SOURCE.replace("old()", "new()")
        );
    }

    #[tokio::test]
    async fn a_missing_or_ambiguous_match_names_the_edit() {
        let (dir, path) = project();
        let ctx = &context(dir.path());
        let error = |edits: Value| async move {
            let input = json!({ "path": "lib.rs", "edits": edits });
            call(&Edit, input, ctx).await.err().unwrap().0
        };

        let ambiguous = error(json!([{ "old_text": "old();", "new_text": "x();" }])).await;
        assert!(
            ambiguous.starts_with("edit 1 of 1: `old_text` occurs 2 times in lib.rs."),
            "{ambiguous}"
        );
        let missing = error(json!([
            { "old_text": "fn a()", "new_text": "fn c()" },
            { "old_text": "fn a()", "new_text": "fn d()" },
        ]))
        .await;
        assert!(
            missing.starts_with(
                "edit 2 of 2: `old_text` was not found in lib.rs (after the earlier edits)."
            ),
            "{missing}"
        );
        assert!(
            error(json!([{ "old_text": "", "new_text": "x" }]))
                .await
                .contains("`old_text` is empty")
        );
        assert!(
            error(json!([{ "old_text": "fn", "new_text": "fn" }]))
                .await
                .contains("are the same")
        );
        assert!(error(json!([])).await.contains("`edits` is empty"));
        let absent = call(
            &Edit,
            json!({ "path": "nope.rs", "edits": [{ "old_text": "a", "new_text": "b" }] }),
            ctx,
        )
        .await
        .err()
        .unwrap();
        assert!(
            absent.0.starts_with("cannot edit nope.rs:") && absent.0.contains("use `write`"),
            "{absent}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            SOURCE,
            "nothing was written"
        );
    }

    /// Why an edit does not apply tells the model what the file holds: the call is planned as
    /// a read of it, which the permissions ask about outside the workspace, before `run`
    /// hands the model the reason.
    #[tokio::test]
    async fn an_edit_that_does_not_apply_is_planned_as_a_read_of_the_file() {
        let (dir, path) = project();
        let ctx = context(dir.path());
        for edits in [
            json!([{ "old_text": "absent", "new_text": "x" }]),
            json!([{ "old_text": "old();", "new_text": "x();" }]),
        ] {
            let input = json!({ "path": "lib.rs", "edits": edits });
            let prepared = prepare(&Edit, input, &ctx).await.unwrap();
            assert_eq!(prepared.title, "Edit lib.rs");
            assert_eq!(prepared.access, Access::Read(vec![path.clone()]));
        }
        let input = json!({ "path": "gone.rs", "edits": [{ "old_text": "a", "new_text": "b" }] });
        let prepared = prepare(&Edit, input, &ctx).await.unwrap();
        assert_eq!(
            prepared.access,
            Access::Read(vec![dir.path().join("gone.rs")])
        );
    }

    #[tokio::test]
    async fn a_crlf_file_stays_crlf_throughout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("win.txt");
        std::fs::write(&path, "a\r\nb\r\nc\r\n").unwrap();
        let ctx = context(dir.path());
        // LF from the model, a line added, and one edit that already wrote CRLF in `new_text`.
        let input = json!({ "path": "win.txt", "edits": [
            { "old_text": "a\nb\n", "new_text": "x\ny\nadded\n" },
            { "old_text": "c", "new_text": "z\r\nlast" },
        ]});
        let output = call(&Edit, input, &ctx).await.unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(written, "x\r\ny\r\nadded\r\nz\r\nlast\r\n");
        assert!(
            output
                .for_model
                .contains("-a\n-b\n-c\n+x\n+y\n+added\n+z\n+last\n"),
            "the model's diff has no \\r: {:?}",
            output.for_model
        );
        let ToolContent::Diff(diff) = &output.content[0] else {
            panic!("{:?}", output.content)
        };
        assert_eq!(
            diff.new_text, written,
            "the client's diff is the file's text"
        );
    }

    #[tokio::test]
    async fn an_edit_in_a_file_of_mixed_endings_keeps_the_matched_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.txt");
        std::fs::write(&path, "a\r\nb\r\nc\r\nlf1\nlf2\n").unwrap();
        let ctx = context(dir.path());
        let input = json!({ "path": "mixed.txt", "edits": [
            { "old_text": "lf1\nlf2\n", "new_text": "one\ntwo\n" },
        ]});
        call(&Edit, input, &ctx).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "a\r\nb\r\nc\r\none\ntwo\n"
        );
    }
}
