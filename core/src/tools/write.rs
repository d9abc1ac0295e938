//! `write`: create a file or replace its whole text (in the line endings it had). The diff
//! against the current text is worked out in `prepare`, so the permission request shows
//! exactly what will change.

use schemars::JsonSchema;
use serde::Deserialize;

use super::diffs::{apply_and_report, current_text, first_changed_line, unplanned};
use super::line_endings::LineEnding;
use super::paths::{resolve, shown};
use super::{
    About, Access, CallReport, Context, Diff, Kind, Location, Output, Planned, Result, Tool,
};

pub struct Write;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file, absolute or relative to the working directory.
    path: String,
    /// The complete new text of the file.
    content: String,
}

/// What the model is told `write` does.
const DESCRIPTION: &str = "Create a file, or replace the whole text of an existing one. Missing \
    parent directories are created. To change part of an existing file, prefer \
    `edit`, which does not need the whole text.";

impl Tool for Write {
    type Input = Input;
    /// `Err`: the file cannot be read (`diffs::unplanned`).
    type Plan = Result<Diff>;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Result<Diff>>> {
        let path = resolve(ctx, &input.path)?;
        let old_text = match current_text(ctx, &path).await {
            Ok(old_text) => old_text,
            Err(why) => {
                let title = format!("Write {}", shown(ctx, &path));
                return Ok(unplanned(title, &path, why));
            }
        };
        let verb = if old_text.is_some() {
            "Write"
        } else {
            "Create"
        };
        // A file replaced whole keeps its line endings too; a new one is written as given.
        let new_text = match &old_text {
            Some(old) => LineEnding::of(old).apply(&input.content).into_owned(),
            None => input.content,
        };
        let line = first_changed_line(old_text.as_deref().unwrap_or(""), &new_text);
        let diff = Diff {
            path: path.clone(),
            old_text,
            new_text,
        };
        Ok(Planned::new(
            format!("{verb} {}", shown(ctx, &path)),
            vec![Location {
                path,
                line: Some(line),
            }],
            Access::Edit(vec![diff.clone()]),
            Ok(diff),
        ))
    }

    async fn run(&self, diff: Result<Diff>, ctx: &Context, _: &dyn CallReport) -> Result<Output> {
        let diff = diff?;
        let headline = match diff.old_text {
            None => format!("Created {}.", shown(ctx, &diff.path)),
            Some(_) => format!("Wrote {}.", shown(ctx, &diff.path)),
        };
        apply_and_report(ctx, &diff, &headline).await
    }

    fn about(&self) -> About {
        About::new("write", Kind::Edit, DESCRIPTION)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::ToolContent;
    use crate::tools::testing::{Recorder, call, context, prepare, workspace};

    #[tokio::test]
    async fn creates_a_file_and_its_parents() {
        let (dir, ctx) = workspace();
        let input = json!({ "path": "src/new/mod.rs", "content": "pub fn f() {}\n" });
        let path = dir.path().join("src/new/mod.rs");

        let prepared = prepare(&Write, input.clone(), &ctx).await.unwrap();
        // The OS's separator: `src\new\mod.rs` on Windows.
        let shown = std::path::Path::new("src").join("new").join("mod.rs");
        assert_eq!(prepared.title, format!("Create {}", shown.display()));
        let expected = Diff {
            path: path.clone(),
            old_text: None,
            new_text: "pub fn f() {}\n".into(),
        };
        assert_eq!(prepared.access, Access::Edit(vec![expected]));

        let output = call(&Write, input, &ctx).await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "pub fn f() {}\n");
        let created = format!("Created {}.\n\n", shown.display());
        assert!(output.for_model.starts_with(&created));
        assert!(output.for_model.contains("+pub fn f() {}"));
        assert_eq!(
            output.content,
            vec![ToolContent::Diff(Diff {
                path: path.clone(),
                old_text: None,
                new_text: "pub fn f() {}\n".into(),
            })]
        );
    }

    #[tokio::test]
    async fn replaces_a_file_with_a_diff_of_the_old_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "one\ntwo\n").unwrap();
        let ctx = context(dir.path());
        let input = json!({ "path": path, "content": "one\n2\n" });

        let prepared = prepare(&Write, input.clone(), &ctx).await.unwrap();
        assert_eq!(prepared.title, "Write a.txt");
        assert_eq!(prepared.locations[0].line, Some(2));
        let output = call(&Write, input, &ctx).await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n2\n");
        assert!(
            output.for_model.contains("-two\n+2\n"),
            "{}",
            output.for_model
        );
        let ToolContent::Diff(diff) = &output.content[0] else {
            panic!("{:?}", output.content)
        };
        assert_eq!(diff.old_text.as_deref(), Some("one\ntwo\n"));
        assert_eq!(output.raw_output.unwrap()["added"], 1);
    }

    #[tokio::test]
    async fn refuses_to_overwrite_a_file_that_changed_after_prepare() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "v1").unwrap();
        let ctx = context(dir.path());
        let prepared = prepare(&Write, json!({ "path": "a.txt", "content": "v2" }), &ctx)
            .await
            .unwrap();
        std::fs::write(&path, "changed meanwhile").unwrap();
        let (recorder, _output) = Recorder::new();
        let error = Write.run(prepared.plan, &ctx, &recorder).await.unwrap_err();
        assert!(error.0.contains("a.txt changed since"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "changed meanwhile");
    }

    #[tokio::test]
    async fn a_crlf_file_replaced_whole_stays_crlf() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("win.txt");
        std::fs::write(&path, "one\r\ntwo\r\n").unwrap();
        let ctx = context(dir.path());
        let input = json!({ "path": "win.txt", "content": "one\n2\nthree\n" });
        let output = call(&Write, input, &ctx).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "one\r\n2\r\nthree\r\n"
        );
        assert!(
            output.for_model.contains(" one\n-two\n+2\n+three\n"),
            "{:?}",
            output.for_model
        );
        assert_eq!(output.raw_output.unwrap()["added"], 2);
    }
}
