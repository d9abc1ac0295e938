//! `grep`: a regex search through files with ripgrep's crates (`grep-regex` matching,
//! `grep-searcher` line handling and binary detection) over a gitignore-aware walk.

use std::path::PathBuf;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::bounds::cut_line;
use super::paths::{resolve_or_cwd, shown, shown_dir};
use super::walk::{first_in_order, is_dir};
use super::{
    About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool, ToolError,
};
use crate::io::WalkSpec;

pub struct Grep;

/// Matched lines are cut past this many characters (minified files match on one huge line).
const MAX_MATCH_LINE_CHARS: usize = 300;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The regular expression.
    pattern: String,
    /// A directory to search recursively, or one file. Default: the working directory.
    path: Option<String>,
    /// Only search files matching this glob, ripgrep style (`*.rs` matches at any depth, `src/**/*.ts` from `path`; a leading `!` excludes instead).
    glob: Option<String>,
    /// Ignore case. Default: false.
    #[serde(default)]
    case_insensitive: bool,
}

pub struct Call {
    root: PathBuf,
    matcher: RegexMatcher,
    filter: Option<Override>,
}

/// What the model is told `grep` does.
const DESCRIPTION: &str = "Search file contents for a regular expression (Rust regex syntax, \
    like ripgrep: `fn\\s+main`, `TODO|FIXME`, `\\bfoo\\b`). Returns matching lines \
    as `path:line: text`, paths relative to the working directory. Files ignored by \
    .gitignore and binary files are skipped. Matches one line at a time.";

impl Tool for Grep {
    type Input = Input;
    type Plan = Call;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Call>> {
        let root = resolve_or_cwd(ctx, input.path.as_deref())?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(input.case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(&input.pattern)
            .map_err(|e| ToolError(format!("invalid regular expression: {e}")))?;
        let filter = match &input.glob {
            Some(glob) => Some(path_filter(&root, glob)?),
            None => None,
        };
        Ok(Planned::new(
            title(ctx, &input, &root),
            vec![Location {
                path: root.clone(),
                line: None,
            }],
            Access::Read(vec![root.clone()]),
            Call {
                root,
                matcher,
                filter,
            },
        ))
    }

    async fn run(&self, call: Call, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        is_dir(ctx, &call.root).await?;
        let max = ctx.limits.search_max_results;
        let (matches, more) = search(ctx, call).await?;
        let mut for_model = String::new();
        for (path, line, text) in &matches {
            let text = cut_line(text.trim_end_matches(['\n', '\r']), MAX_MATCH_LINE_CHARS);
            for_model.push_str(&format!("{}:{line}: {text}\n", shown(ctx, path)));
        }
        if matches.is_empty() {
            for_model.push_str("No matches.\n");
        } else if more {
            for_model.push_str(&format!(
                "[Showing the first {max} matches; there are more. Narrow the pattern, path or glob.]\n"
            ));
        }
        Ok(Output {
            for_model,
            raw_output: Some(json!({ "matches": matches.len(), "more": more })),
            ..Output::default()
        })
    }

    fn about(&self) -> About {
        About::new("grep", Kind::Search, DESCRIPTION)
    }
}

/// A ripgrep-style `--glob` filter relative to the search root.
fn path_filter(root: &std::path::Path, glob: &str) -> Result<Override> {
    let invalid = |e: ignore::Error| ToolError(format!("invalid glob `{glob}`: {e}"));
    let mut builder = OverrideBuilder::new(root);
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

fn title(ctx: &Context, input: &Input, root: &std::path::Path) -> String {
    let mut title = format!("Search for `{}`", input.pattern);
    if shown(ctx, root) != "." {
        title.push_str(&format!(" in {}", shown_dir(ctx, root)));
    }
    if let Some(glob) = &input.glob {
        title.push_str(&format!(" ({glob})"));
    }
    title
}

/// Searches every file of the walk, on the walker's threads, each with its own searcher;
/// keeps the first `max` matches in path and line order, and whether there are more. Files
/// that cannot be read are skipped. The files are read locally: ACP has no search, and
/// reading a whole tree through the client's `fs/read_text_file` one file at a time would be
/// far too slow.
async fn search(ctx: &Context, call: Call) -> Result<(Vec<Match>, bool)> {
    let max = ctx.limits.search_max_results;
    let mut spec = WalkSpec::new(&call.root);
    spec.filter.clone_from(&call.filter);
    let matcher = call.matcher;
    let searcher = || {
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\0'))
            .line_number(true)
            .build()
    };
    let (matches, total) = first_in_order(ctx, spec, searcher, move |searcher, entry, found| {
        if entry.is_file {
            search_file(searcher, &matcher, &entry.path, max, found);
        }
    })
    .await?;
    Ok((matches, total > max))
}

/// (file, 1-based line, text)
type Match = (PathBuf, u64, String);

/// The matches of one file, `max + 1` at most: no file needs more to fill the answer and say
/// there are more.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &std::path::Path,
    max: usize,
    found: &mut Vec<Match>,
) {
    let mut count = 0;
    let _ = searcher.search_path(
        matcher,
        path,
        Lossy(|line, text| {
            found.push((path.to_owned(), line, text.to_owned()));
            count += 1;
            Ok(count <= max)
        }),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::testing::{self, call, context, prepare};

    fn tree() -> tempfile::TempDir {
        testing::tree(&[
            ("src/main.rs", b"fn main() {\n    helper();\n}\n"),
            ("src/lib.rs", b"pub fn helper() {}\n// TODO: more\n"),
            ("notes.md", b"Main ideas\n"),
            ("target/gen.rs", b"fn main() {}\n"),
            ("blob.bin", b"fn main\0\x01\x02"),
            (".gitignore", b"target/\n"),
        ])
    }

    #[tokio::test]
    async fn finds_matches_skipping_ignored_and_binary_files() {
        let dir = tree();
        let ctx = context(dir.path());
        let input = json!({ "pattern": "fn \\w+" });
        assert_eq!(
            prepare(&Grep, input.clone(), &ctx).await.unwrap().title,
            "Search for `fn \\w+`"
        );
        let output = call(&Grep, input, &ctx).await.unwrap();
        assert_eq!(
            output.for_model,
            "src/lib.rs:1: pub fn helper() {}\nsrc/main.rs:1: fn main() {\n"
        );
    }

    #[tokio::test]
    async fn filters_by_path_glob_and_case() {
        let dir = tree();
        let ctx = context(dir.path());
        let input = json!({ "pattern": "main", "path": "src", "glob": "main.*" });
        assert_eq!(
            prepare(&Grep, input.clone(), &ctx).await.unwrap().title,
            "Search for `main` in src/ (main.*)"
        );
        let output = call(&Grep, input, &ctx).await.unwrap();
        assert_eq!(output.for_model, "src/main.rs:1: fn main() {\n");

        let output = call(
            &Grep,
            json!({ "pattern": "^main", "case_insensitive": true }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(output.for_model, "notes.md:1: Main ideas\n");
        let output = call(
            &Grep,
            json!({ "pattern": "TODO", "path": "src/lib.rs" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(output.for_model, "src/lib.rs:2: // TODO: more\n");
        let output = call(
            &Grep,
            json!({ "pattern": "helper", "glob": "!lib.rs" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(output.for_model, "src/main.rs:2:     helper();\n");
        let output = call(&Grep, json!({ "pattern": "nothing here" }), &ctx)
            .await
            .unwrap();
        assert_eq!(output.for_model, "No matches.\n");
    }

    #[tokio::test]
    async fn bounds_matches_and_long_lines() {
        let dir = tempfile::tempdir().unwrap();
        let many: String = (1..=50).map(|n| format!("hit {n}\n")).collect();
        std::fs::write(dir.path().join("many.txt"), many).unwrap();
        std::fs::write(
            dir.path().join("wide.txt"),
            format!("hit {}\n", "x".repeat(1000)),
        )
        .unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.search_max_results = 3;
        let output = call(&Grep, json!({ "pattern": "hit", "glob": "many.txt" }), &ctx)
            .await
            .unwrap();
        assert_eq!(
            output.for_model,
            "many.txt:1: hit 1\nmany.txt:2: hit 2\nmany.txt:3: hit 3\n\
             [Showing the first 3 matches; there are more. Narrow the pattern, path or glob.]\n"
        );
        let output = call(&Grep, json!({ "pattern": "hit", "glob": "wide.txt" }), &ctx)
            .await
            .unwrap();
        assert!(
            output.for_model.ends_with("… [704 more characters]\n"),
            "{}",
            output.for_model
        );
    }

    #[tokio::test]
    async fn reports_bad_input_clearly() {
        let dir = tree();
        let ctx = context(dir.path());
        let error = prepare(&Grep, json!({ "pattern": "fn (" }), &ctx)
            .await
            .err()
            .unwrap();
        assert!(error.0.starts_with("invalid regular expression"), "{error}");
        let error = prepare(&Grep, json!({ "pattern": "x", "glob": "[" }), &ctx)
            .await
            .err()
            .unwrap();
        assert!(error.0.starts_with("invalid glob `[`"), "{error}");
        let error = call(&Grep, json!({ "pattern": "x", "path": "nope" }), &ctx)
            .await
            .unwrap_err();
        assert_eq!(error.0, "nope does not exist");
    }
}
