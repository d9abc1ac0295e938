//! Where a path really leads, as the kernel would find it — what the permission checks
//! compare against the workspace roots.

use std::path::{Component, Path, PathBuf};

/// The real location of `path`, as the kernel would find it: each component's symlinks are
/// followed — dangling ones too, since writing through a dangling link creates its target —
/// and `..` applies to what a link pointed at.
pub fn resolve(path: &Path) -> PathBuf {
    resolve_links(path, &mut 0)
}

/// Links followed before giving up (the kernel's limit): a loop resolves to where it stopped.
const MAX_LINKS: usize = 40;

/// `tools/paths.rs` folds the same components lexically; this walk follows each link.
fn resolve_links(path: &Path, followed: &mut usize) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let candidate = out.join(name);
                let is_link =
                    std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.file_type().is_symlink());
                match std::fs::read_link(&candidate) {
                    Ok(target) if is_link && *followed < MAX_LINKS => {
                        *followed += 1;
                        out = resolve_links(&out.join(target), followed);
                    }
                    _ => out = candidate,
                }
            }
            root => out.push(root),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `path` really leads outside `root`.
    #[cfg(unix)]
    fn escapes(root: &Path, path: &Path) -> bool {
        !resolve(path).starts_with(resolve(root))
    }

    // Symlinks on Windows need a privilege (or developer mode) a test cannot count on.
    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_workspace_are_outside() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("link")).unwrap();
        let through_link = root.path().join("link/new-file.txt");
        assert!(escapes(root.path(), &through_link));
        let honest = root.path().join("sub/new.txt");
        assert!(!escapes(root.path(), &honest));
    }

    // Symlinks on Windows need a privilege (or developer mode) a test cannot count on.
    #[cfg(unix)]
    #[test]
    fn dangling_links_and_dot_dot_through_links_resolve_where_the_kernel_goes() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        // A dangling link: writing to it creates its (outside) target.
        std::os::unix::fs::symlink(
            elsewhere.path().join("not-yet"),
            root.path().join("dangling"),
        )
        .unwrap();
        assert!(escapes(root.path(), &root.path().join("dangling")));
        // `..` after a link climbs from the link's target, not from the link.
        std::fs::create_dir(elsewhere.path().join("deep")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("deep"), root.path().join("hop")).unwrap();
        assert!(escapes(root.path(), &root.path().join("hop/../x")));
        // A link that stays inside is fine.
        std::fs::create_dir(root.path().join("real")).unwrap();
        std::os::unix::fs::symlink(root.path().join("real"), root.path().join("alias")).unwrap();
        assert!(!escapes(root.path(), &root.path().join("alias/new.txt")));
    }
}
