//! `read`: a file's text with line numbers, a window of it at a time; an image file as the
//! image (`read_image.rs`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::bounds::{MAX_LINE_CHARS, cut_line, plural};
use super::paths::{resolve, shown};
use super::read_image;
use super::{
    About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool, ToolError,
};

pub struct Read;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The file, absolute or relative to the working directory.
    path: String,
    /// The first line to read (1-based). Default: 1.
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// How many lines to read. Default and maximum: the configured read limit (2000 lines by default).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct Call {
    path: std::path::PathBuf,
    /// 1-based first line.
    offset: usize,
    limit: usize,
}

/// What the model is told `read` does.
const DESCRIPTION: &str = "Read a text file. Returns its lines numbered like `cat -n` \
    (line number, tab, text). Long files come a window at a time: the answer says \
    which lines it shows and the `offset` to read on from. Reads what the editor \
    has, including unsaved changes. An image file (PNG, JPEG, GIF, WebP) comes \
    back as the image, to look at. Other binary files are refused.";

impl Tool for Read {
    type Input = Input;
    type Plan = Call;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Call>> {
        let path = resolve(ctx, &input.path)?;
        let offset = input.offset.unwrap_or(1).max(1);
        let limit = input
            .limit
            .unwrap_or(ctx.limits.read_max_lines)
            .clamp(1, ctx.limits.read_max_lines);
        let title = match (input.offset, input.limit) {
            (None, None) => format!("Read {}", shown(ctx, &path)),
            _ => format!(
                "Read {} (lines {}–{})",
                shown(ctx, &path),
                offset,
                offset.saturating_add(limit - 1)
            ),
        };
        Ok(Planned::new(
            title,
            vec![Location {
                path: path.clone(),
                line: u32::try_from(offset).ok(),
            }],
            Access::Read(vec![path.clone()]),
            Call {
                path,
                offset,
                limit,
            },
        ))
    }

    async fn run(&self, call: Call, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        if read_image::is_image(ctx, &call.path).await {
            return read_image::read(ctx, &call.path).await;
        }
        let text = ctx.io.read_text(&call.path).await?;
        let window = number_lines(&text, &call, ctx.limits.read_max_bytes)
            .map_err(|e| ToolError(format!("{}: {}", shown(ctx, &call.path), e.0)))?;
        Ok(Output {
            raw_output: Some(json!({
                "firstLine": call.offset,
                "lastLine": window.last_line,
                "totalLines": window.total_lines,
            })),
            for_model: window.text,
            ..Output::default()
        })
    }

    fn about(&self) -> About {
        About::new("read", Kind::Read, DESCRIPTION)
    }
}

struct Window {
    text: String,
    last_line: usize,
    total_lines: usize,
}

/// The numbered lines of `text` from `call.offset`, at most `call.limit` lines and about
/// `max_bytes` bytes, with a closing note when the file goes on.
fn number_lines(text: &str, call: &Call, max_bytes: usize) -> Result<Window> {
    let total_lines = text.lines().count();
    if total_lines == 0 {
        return Ok(Window {
            text: "(empty file)".into(),
            last_line: 0,
            total_lines,
        });
    }
    if call.offset > total_lines {
        return Err(ToolError(format!(
            "offset {} is past the end of the file ({})",
            call.offset,
            plural(total_lines, "line")
        )));
    }
    let mut out = String::new();
    let mut last_line = call.offset - 1;
    for (index, line) in text
        .lines()
        .enumerate()
        .skip(call.offset - 1)
        .take(call.limit)
    {
        let numbered = format!("{:>6}\t{}\n", index + 1, cut_line(line, MAX_LINE_CHARS));
        // The first line always goes in, so a read always makes progress.
        if !out.is_empty() && out.len() + numbered.len() > max_bytes {
            break;
        }
        out.push_str(&numbered);
        last_line = index + 1;
    }
    if last_line < total_lines {
        out.push_str(&format!(
            "\n[Showing lines {}–{last_line} of {total_lines}. To read on, call read with offset={}.]\n",
            call.offset,
            last_line + 1
        ));
    }
    Ok(Window {
        text: out,
        last_line,
        total_lines,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::testing::{call, context, prepare, workspace};

    fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
        lines.map(|n| format!("{n:>6}\tline {n}\n")).collect()
    }

    fn file_of(lines: usize) -> String {
        (1..=lines).map(|n| format!("line {n}\n")).collect()
    }

    #[tokio::test]
    async fn reads_a_whole_file_with_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), file_of(3)).unwrap();
        let ctx = context(dir.path());

        let prepared = prepare(&Read, json!({ "path": "a.txt" }), &ctx)
            .await
            .unwrap();
        assert_eq!(prepared.title, "Read a.txt");
        assert_eq!(
            prepared.access,
            Access::Read(vec![dir.path().join("a.txt")])
        );
        assert_eq!(prepared.locations[0].line, Some(1));

        let output = call(&Read, json!({ "path": "a.txt" }), &ctx).await.unwrap();
        assert_eq!(output.for_model, numbered(1..=3));
    }

    #[tokio::test]
    async fn reads_a_window_and_says_how_to_read_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), file_of(10)).unwrap();
        let ctx = context(dir.path());

        let input = json!({ "path": "a.txt", "offset": 4, "limit": 3 });
        assert_eq!(
            prepare(&Read, input.clone(), &ctx).await.unwrap().title,
            "Read a.txt (lines 4–6)"
        );
        let output = call(&Read, input, &ctx).await.unwrap();
        assert_eq!(
            output.for_model,
            format!(
                "{}\n[Showing lines 4–6 of 10. To read on, call read with offset=7.]\n",
                numbered(4..=6)
            )
        );
        assert_eq!(
            output.raw_output,
            Some(json!({ "firstLine": 4, "lastLine": 6, "totalLines": 10 }))
        );
    }

    #[tokio::test]
    async fn truncates_at_the_line_and_byte_limits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), file_of(100)).unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.read_max_lines = 20;
        let output = call(&Read, json!({ "path": "a.txt" }), &ctx).await.unwrap();
        assert!(output.for_model.starts_with(&numbered(1..=20)));
        assert!(
            output.for_model.ends_with("offset=21.]\n"),
            "{}",
            output.for_model
        );

        ctx.limits.read_max_bytes = 100;
        let output = call(&Read, json!({ "path": "a.txt", "offset": 50 }), &ctx)
            .await
            .unwrap();
        assert!(
            output.for_model.starts_with(&numbered(50..=55)),
            "{}",
            output.for_model
        );
        assert!(
            output.for_model.contains("lines 50–55 of 100")
                && output.for_model.contains("offset=56")
        );
    }

    #[tokio::test]
    async fn cuts_very_long_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("min.js"), "x".repeat(5000)).unwrap();
        let output = call(&Read, json!({ "path": "min.js" }), &context(dir.path()))
            .await
            .unwrap();
        assert!(
            output.for_model.ends_with("… [4500 more characters]\n"),
            "{}",
            output.for_model
        );
    }

    #[tokio::test]
    async fn explains_what_cannot_be_read() {
        let (dir, ctx) = workspace();
        std::fs::write(dir.path().join("bin"), b"\x7fELF\0\0\x01").unwrap();
        std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
        std::fs::write(dir.path().join("short.txt"), "one\n").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();

        let error = |input| async { call(&Read, input, &ctx).await.unwrap_err().0 };
        assert!(
            error(json!({ "path": "bin" }))
                .await
                .contains("binary file")
        );
        assert!(
            error(json!({ "path": "latin1.txt" }))
                .await
                .contains("not UTF-8 text")
        );
        assert!(
            error(json!({ "path": "missing.rs" }))
                .await
                .ends_with("missing.rs does not exist")
        );
        assert!(
            error(json!({ "path": "." }))
                .await
                .contains("is a directory")
        );
        assert_eq!(
            error(json!({ "path": "short.txt", "offset": 5 })).await,
            "short.txt: offset 5 is past the end of the file (1 line)"
        );
        assert!(
            error(json!({ "file": "a" }))
                .await
                .starts_with("invalid arguments")
        );
        let empty = call(&Read, json!({ "path": "empty.txt" }), &ctx)
            .await
            .unwrap();
        assert_eq!(empty.for_model, "(empty file)");
    }
}
