//! Paths in tool inputs: absolute, relative to the session's `cwd`, or under `~`. They are
//! resolved lexically (`.` and `..` folded, nothing touched on disk): symlinks are the
//! permission layer's business, and `prepare` must not have side effects or block.

use std::path::{Component, Path, PathBuf};

use super::{Context, ToolError};

/// The absolute path that `raw` names.
pub fn resolve(ctx: &Context, raw: &str) -> Result<PathBuf, ToolError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(ToolError("the path is empty".into()));
    }
    let joined = match raw.strip_prefix("~/").or((raw == "~").then_some("")) {
        Some(rest) => match dirs::home_dir() {
            Some(home) => home.join(rest),
            None => return Err(ToolError("there is no home directory to expand `~`".into())),
        },
        None => ctx.cwd.join(raw),
    };
    Ok(normalize(&joined))
}

/// `raw`, or the working directory when the input left it out.
pub fn resolve_or_cwd(ctx: &Context, raw: Option<&str>) -> Result<PathBuf, ToolError> {
    match raw {
        Some(raw) if !raw.trim().is_empty() => resolve(ctx, raw),
        _ => Ok(normalize(&ctx.cwd)),
    }
}

/// `path` as a human reads it in a title or in the model's text: relative to the working
/// directory when inside it, absolute otherwise.
pub fn shown(ctx: &Context, path: &Path) -> String {
    match path.strip_prefix(&ctx.cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Like `shown`, with a trailing `/` to mark a directory.
pub fn shown_dir(ctx: &Context, path: &Path) -> String {
    match shown(ctx, path) {
        dot if dot == "." => dot,
        other => format!("{}/", other.trim_end_matches('/')),
    }
}

/// `io/canonical.rs` folds the same components but follows links (for the permission checks);
/// this one stays lexical, as `prepare` must not touch the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            // `..` at the root stays at the root, as the kernel does.
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::context;

    #[test]
    fn resolves_relative_absolute_and_dotted_paths() {
        let ctx = context(Path::new("/work/p"));
        assert_eq!(
            resolve(&ctx, "src/main.rs").unwrap(),
            Path::new("/work/p/src/main.rs")
        );
        assert_eq!(resolve(&ctx, "./a/../b").unwrap(), Path::new("/work/p/b"));
        assert_eq!(
            resolve(&ctx, "../other/x").unwrap(),
            Path::new("/work/other/x")
        );
        assert_eq!(
            resolve(&ctx, "/etc/hosts").unwrap(),
            Path::new("/etc/hosts")
        );
        assert_eq!(resolve(&ctx, "/../../x").unwrap(), Path::new("/x"));
        assert_eq!(resolve_or_cwd(&ctx, None).unwrap(), Path::new("/work/p"));
        assert!(resolve(&ctx, "  ").is_err());
    }

    #[test]
    fn shows_paths_relative_to_the_working_directory() {
        let ctx = context(Path::new("/work/p"));
        assert_eq!(shown(&ctx, Path::new("/work/p/src/a.rs")), "src/a.rs");
        assert_eq!(shown(&ctx, Path::new("/work/p")), ".");
        assert_eq!(shown(&ctx, Path::new("/work/q/a.rs")), "/work/q/a.rs");
        assert_eq!(shown_dir(&ctx, Path::new("/work/p/src")), "src/");
        assert_eq!(shown_dir(&ctx, Path::new("/work/p")), ".");
    }
}
