//! Where a path really leads, as the kernel would find it — what the permission checks
//! compare against the workspace roots. The one place paths are OS-specific:
//!
//! - a link's target loses a `\\?\` prefix (Windows writes absolute link targets so); a
//!   verbatim `\\?\C:\x` is another path prefix than `C:\x` to `Path::starts_with`;
//! - on Windows, the part of the path that exists is spelled as the filesystem spells it
//!   (`std::fs::canonicalize`, its `\\?\` dropped): `c:\users\ME\proj` and
//!   `C:\Users\me\proj` are one directory there, and the containment check compares
//!   components exactly. Asking the filesystem, rather than comparing without case, stays
//!   right in a directory made case-sensitive (WSL's per-directory flag), and expands 8.3
//!   short names (`PROGRA~1`) too.

use std::path::{Component, Path, PathBuf};

/// The real location of `path`, as the kernel would find it: each component's symlinks are
/// followed — dangling ones too, since writing through a dangling link creates its target —
/// and `..` applies to what a link pointed at.
pub fn resolve(path: &Path) -> PathBuf {
    as_spelled_on_disk(resolve_links(path, &mut 0))
}

/// `path` with its longest existing ancestor as the filesystem spells it (see the module doc).
#[cfg(windows)]
fn as_spelled_on_disk(path: PathBuf) -> PathBuf {
    let mut existing = path.as_path();
    let mut missing = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut spelled = dunce::simplified(&real).to_path_buf();
            spelled.extend(missing.iter().rev());
            return spelled;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return path,
        }
    }
}

/// `path` itself: Unix filesystems spell a path one way only.
#[cfg(not(windows))]
fn as_spelled_on_disk(path: PathBuf) -> PathBuf {
    path
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
                        out = resolve_links(&out.join(dunce::simplified(&target)), followed);
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

    #[cfg(windows)]
    #[test]
    fn windows_paths_compare_as_the_filesystem_spells_them() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("Src")).unwrap();
        let shouted = PathBuf::from(root.path().to_string_lossy().to_uppercase());
        // Another case, a missing file: still inside, spelled as on disk.
        let new_file = shouted.join("SRC").join("New.rs");
        assert!(!escapes(root.path(), &new_file));
        assert_eq!(
            resolve(&new_file),
            resolve(root.path()).join("Src").join("New.rs")
        );
        // A verbatim path is the same directory, shown without its prefix.
        let verbatim = PathBuf::from(format!(r"\\?\{}", root.path().display()));
        assert_eq!(resolve(&verbatim), resolve(root.path()));
        assert!(!resolve(root.path()).to_string_lossy().starts_with(r"\\?\"));
        // A sibling directory is outside.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(escapes(root.path(), &elsewhere.path().join("x")));
    }
}
