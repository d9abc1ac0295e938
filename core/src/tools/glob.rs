//! `glob`: the files whose path matches a glob pattern, gitignore-aware.

use std::path::PathBuf;

use super::bounds::listing;
use super::paths::{resolve_or_cwd, shown, shown_dir};
use super::walk::{first_in_order, relative_text, require_dir};
use super::{
    About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool, ToolError,
};
use crate::io::WalkSpec;
use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;

pub struct Glob;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The glob, relative to `path`.
    pattern: String,
    /// The directory to search in. Default: the working directory.
    path: Option<String>,
}

pub struct Call {
    root: PathBuf,
    matcher: GlobMatcher,
}

/// What the model is told `glob` does.
const DESCRIPTION: &str = "Find files by path pattern, e.g. `**/*.rs`, `src/**/test_*.py`, \
    `*.{json,toml}`. The pattern matches paths relative to `path`: `*` stays \
    within one directory, `**` crosses directories. Files ignored by .gitignore \
    are left out. Returns matching file paths (relative to the working \
    directory), sorted.";

impl Tool for Glob {
    type Input = Input;
    type Plan = Call;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Call>> {
        let root = resolve_or_cwd(ctx, input.path.as_deref())?;
        let pattern = input.pattern.trim().trim_start_matches("./");
        if pattern.starts_with('/') {
            return Err(ToolError(
                "the pattern must be relative; put the directory in `path`".into(),
            ));
        }
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError(format!("invalid glob pattern: {e}")))?
            .compile_matcher();
        let title = match shown(ctx, &root).as_str() {
            "." => format!("Find `{pattern}`"),
            _ => format!("Find `{pattern}` in {}", shown_dir(ctx, &root)),
        };
        Ok(Planned::new(
            title,
            vec![Location {
                path: root.clone(),
                line: None,
            }],
            Access::Read(vec![root.clone()]),
            Call { root, matcher },
        ))
    }

    async fn run(&self, call: Call, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        require_dir(ctx, &call.root).await?;
        let Call { root, matcher } = call;
        let spec = WalkSpec::new(&root);
        let root_text = root.to_string_lossy().into_owned();
        let (found, total) = first_in_order(
            ctx,
            spec,
            || (),
            move |(), entry, found| {
                let matched = entry.is_file
                    && matcher.is_match(&*relative_text(&root_text, &root, &entry.path));
                if matched {
                    found.push(entry.path);
                }
            },
        )
        .await?;
        let lines: Vec<String> = found.iter().map(|path| shown(ctx, path)).collect();
        let hint = "narrow the pattern or the path";
        Ok(listing(&lines, total, "No files match.\n", "files", hint))
    }

    fn about(&self) -> About {
        About::new("glob", Kind::Search, DESCRIPTION)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::testing::{self, call, context, prepare};

    fn tree() -> tempfile::TempDir {
        testing::tree(&[
            ("build.rs", b"x"),
            ("src/main.rs", b"x"),
            ("src/a/lib.rs", b"x"),
            ("src/a/notes.md", b"x"),
            ("gen/out.rs", b"x"),
            (".gitignore", b"gen/\n"),
        ])
    }

    #[tokio::test]
    async fn matches_relative_paths_honouring_gitignore() {
        let dir = tree();
        let ctx = context(dir.path());
        let all = call(&Glob, json!({ "pattern": "**/*.rs" }), &ctx)
            .await
            .unwrap();
        assert_eq!(all.for_model, "build.rs\nsrc/a/lib.rs\nsrc/main.rs\n");
        let top = call(&Glob, json!({ "pattern": "*.rs" }), &ctx)
            .await
            .unwrap();
        assert_eq!(top.for_model, "build.rs\n");
        let input = json!({ "pattern": "*/*.{rs,md}", "path": "src" });
        assert_eq!(
            prepare(&Glob, input.clone(), &ctx).await.unwrap().title,
            "Find `*/*.{rs,md}` in src/"
        );
        let nested = call(&Glob, input, &ctx).await.unwrap();
        assert_eq!(nested.for_model, "src/a/lib.rs\nsrc/a/notes.md\n");
        let none = call(&Glob, json!({ "pattern": "*.py" }), &ctx)
            .await
            .unwrap();
        assert_eq!(none.for_model, "No files match.\n");
    }

    #[tokio::test]
    async fn bounds_the_results() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..25 {
            std::fs::write(dir.path().join(format!("f{n:02}.txt")), "").unwrap();
        }
        let mut ctx = context(dir.path());
        ctx.limits.search_max_results = 5;
        let output = call(&Glob, json!({ "pattern": "*.txt" }), &ctx)
            .await
            .unwrap();
        assert_eq!(
            output.for_model,
            "f00.txt\nf01.txt\nf02.txt\nf03.txt\nf04.txt\n… 20 more files (narrow the pattern or the path)\n"
        );
    }

    #[tokio::test]
    async fn rejects_bad_patterns() {
        let dir = tree();
        let ctx = context(dir.path());
        let error = prepare(&Glob, json!({ "pattern": "src/[a" }), &ctx)
            .await
            .err()
            .unwrap();
        assert!(error.0.starts_with("invalid glob pattern"), "{error}");
        let error = prepare(&Glob, json!({ "pattern": "/etc/*" }), &ctx)
            .await
            .err()
            .unwrap();
        assert!(error.0.contains("put the directory in `path`"), "{error}");
    }
}
