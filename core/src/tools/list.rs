//! `list`: the entries of a directory, a few levels deep, gitignore-aware.

use std::path::PathBuf;

use super::bounds::listing;
use super::paths::{resolve_or_cwd, shown, shown_dir};
use super::walk::{first_of_walk, require_dir};
use super::{About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool};
use crate::io::WalkSpec;
use schemars::JsonSchema;
use serde::Deserialize;

pub struct List;

const DEFAULT_DEPTH: usize = 2;
const MAX_DEPTH: usize = 10;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The directory, absolute or relative to the working directory. Default: the working directory.
    path: Option<String>,
    /// How many levels to descend (1 = only the directory's own entries). Default: 2.
    #[schemars(range(min = 1, max = MAX_DEPTH))]
    depth: Option<usize>,
}

pub struct Call {
    root: PathBuf,
    depth: usize,
}

/// What the model is told `list` does.
const DESCRIPTION: &str = "List a directory's files and subdirectories (directories end with \
    `/`), a few levels deep, sorted. Files ignored by .gitignore and the .git \
    directory are left out. Paths are shown relative to the working directory.";

impl Tool for List {
    type Input = Input;
    type Plan = Call;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Call>> {
        let root = resolve_or_cwd(ctx, input.path.as_deref())?;
        let depth = input.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH);
        Ok(Planned::new(
            format!("List {}", shown_dir(ctx, &root)),
            vec![Location {
                path: root.clone(),
                line: None,
            }],
            Access::Read(vec![root.clone()]),
            Call { root, depth },
        ))
    }

    async fn run(&self, call: Call, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        require_dir(ctx, &call.root).await?;
        let mut spec = WalkSpec::new(&call.root);
        spec.max_depth = Some(call.depth);
        let (entries, total) = first_of_walk(ctx, spec, |entry| {
            (entry.depth > 0).then_some((entry.path, entry.is_dir))
        })
        .await?;
        let lines: Vec<String> = entries
            .iter()
            .map(|(path, is_dir)| match is_dir {
                true => shown_dir(ctx, path),
                false => shown(ctx, path),
            })
            .collect();
        let hint = "list a subdirectory or lower the depth";
        Ok(listing(
            &lines,
            total,
            "(empty directory)\n",
            "entries",
            hint,
        ))
    }

    fn about(&self) -> About {
        About::new("list", Kind::Read, DESCRIPTION)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::testing::{self, call, context, prepare};

    fn tree() -> tempfile::TempDir {
        testing::tree(&[
            ("src/main.rs", b"x"),
            ("src/deep/er/x.rs", b"x"),
            ("target/debug/app", b"x"),
            ("README.md", b"x"),
            (".github/ci.yml", b"x"),
            (".git/HEAD", b"ref"),
            (".gitignore", b"target/\n"),
        ])
    }

    #[tokio::test]
    async fn lists_sorted_entries_honouring_gitignore() {
        let dir = tree();
        let ctx = context(dir.path());
        assert_eq!(
            prepare(&List, json!({}), &ctx).await.unwrap().title,
            "List ."
        );
        let output = call(&List, json!({}), &ctx).await.unwrap();
        assert_eq!(
            output.for_model,
            ".github/\n.github/ci.yml\n.gitignore\nREADME.md\nsrc/\nsrc/deep/\nsrc/main.rs\n"
        );
    }

    #[tokio::test]
    async fn lists_a_subdirectory_to_a_depth() {
        let dir = tree();
        let ctx = context(dir.path());
        let input = json!({ "path": "src", "depth": 3 });
        assert_eq!(
            prepare(&List, input.clone(), &ctx).await.unwrap().title,
            "List src/"
        );
        let output = call(&List, input, &ctx).await.unwrap();
        assert_eq!(
            output.for_model,
            "src/deep/\nsrc/deep/er/\nsrc/deep/er/x.rs\nsrc/main.rs\n"
        );
    }

    #[tokio::test]
    async fn bounds_the_listing() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..30 {
            std::fs::write(dir.path().join(format!("f{n:02}")), "").unwrap();
        }
        let mut ctx = context(dir.path());
        ctx.limits.search_max_results = 10;
        let output = call(&List, json!({}), &ctx).await.unwrap();
        assert!(output.for_model.starts_with("f00\nf01\n"));
        assert!(
            output
                .for_model
                .ends_with("f09\n… 20 more entries (list a subdirectory or lower the depth)\n")
        );
    }

    #[tokio::test]
    async fn explains_a_missing_or_wrong_directory() {
        let dir = tree();
        let ctx = context(dir.path());
        let missing = call(&List, json!({ "path": "nope" }), &ctx)
            .await
            .unwrap_err();
        assert_eq!(missing.0, "nope does not exist");
        let file = call(&List, json!({ "path": "README.md" }), &ctx)
            .await
            .unwrap_err();
        assert_eq!(file.0, "README.md is a file, not a directory");
        let empty = tempfile::tempdir().unwrap();
        let output = call(&List, json!({}), &context(empty.path()))
            .await
            .unwrap();
        assert_eq!(output.for_model, "(empty directory)\n");
    }
}
