//! The bwrap layer: where `bwrap` (bubblewrap) is installed in a system directory (never
//! looked for along PATH, see [`find`]), the command runs inside it, which gives what Landlock cannot — a private `/tmp`, read-only holes in the
//! writable roots (`.git/hooks`, `.git/config`, `.hearth/`), and secrets under `$HOME`
//! (`~/.ssh`, `~/.aws`, `~/.gnupg`) hidden. The view: `/` read-only, a fresh `/dev` and
//! `/proc`, a private pid namespace (when its first process dies, the kernel kills the rest),
//! the writable roots and the private temp dir bound read-write on top, then the protected
//! and hidden paths over them. bwrap must mount, which a landlocked process may not, so with
//! this layer Landlock is left out and the mounts do the filesystem; the network namespace,
//! no-new-privs and seccomp are still applied before bwrap starts and reach the command
//! through it. A set-uid bwrap is not used (no-new-privs would break it).

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::launch::Launch;

/// Paths inside each writable root a command may read but not write: what runs later
/// outside the sandbox (git hooks, git's config with its `core.fsmonitor` and aliases) and
/// Hearth's own project settings.
const PROTECTED: &[&str] = &[".git/hooks", ".git/config", ".hearth"];

/// Paths under `$HOME` a command does not see at all.
const HIDDEN: &[&str] = &[".ssh", ".aws", ".gnupg"];

/// Where an installed `bwrap` is: the distributions' places, and NixOS's. Not the command's
/// PATH, which may name a directory a confined command can write (a workspace's `.venv/bin`
/// or `node_modules/.bin`): a `bwrap` planted there that ran its command unwrapped would
/// turn the filesystem's confinement off for every later command (Landlock is left out
/// under this layer).
const INSTALLED: &[&str] = &[
    "/usr/bin/bwrap",
    "/bin/bwrap",
    "/usr/local/bin/bwrap",
    "/run/current-system/sw/bin/bwrap",
];

/// The installed `bwrap`, if there is one that no confined command can have replaced: the
/// file it leads to and its directory owned by root and writable by no one else, outside
/// `writable` (the writable roots and the temp dir); executable, not set-uid (no-new-privs
/// would break it).
pub fn find(writable: &[PathBuf]) -> Option<PathBuf> {
    INSTALLED.iter().map(PathBuf::from).find(|candidate| {
        let Ok(real) = candidate.canonicalize() else {
            return false;
        };
        let trusted = |path: &Path| {
            path.metadata()
                .is_ok_and(|meta| meta.uid() == 0 && meta.mode() & 0o022 == 0)
        };
        let runnable = real.metadata().is_ok_and(|meta| {
            let mode = meta.permissions().mode();
            meta.is_file() && mode & 0o111 != 0 && mode & 0o4000 == 0
        });
        runnable
            && trusted(&real)
            && real.parent().is_some_and(trusted)
            && !writable.iter().any(|root| real.starts_with(root))
    })
}

/// Rewrites `launch` to run its program through `bwrap`, with `writable` (the writable roots
/// and the private temp dir) the only trees it may write and the session's `roots` in view.
pub fn wrap(launch: &mut Launch, bwrap: PathBuf, roots: &[PathBuf], writable: &[PathBuf]) {
    let home = launch
        .env
        .iter()
        .find(|(name, _)| name == "HOME")
        .map(|(_, home)| PathBuf::from(home));
    let mut args = arguments(roots, writable, home.as_deref(), &launch.cwd);
    args.push("--".into());
    args.push(std::mem::replace(&mut launch.program, bwrap.into()));
    args.append(&mut launch.args);
    launch.args = args;
}

/// bwrap's options, up to the command.
fn arguments(
    roots: &[PathBuf],
    writable: &[PathBuf],
    home: Option<&Path>,
    cwd: &Path,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--die-with-parent",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    // A read-only root under /tmp (read-only mode, plan) would be gone under the private one.
    for root in roots.iter().filter(|root| root.starts_with("/tmp")) {
        mount(&mut args, Mount::ReadOnly, root);
    }
    for root in writable {
        mount(&mut args, Mount::Writable, root);
    }
    // `.git` a mount point of its own, which cannot be renamed or removed (EBUSY): else a
    // command could move it away with its read-only hooks and config, and put a `.git` of
    // its own making in its place, whose hooks git would run outside the sandbox. A `.git`
    // file (a worktree's or submodule's pointer to its repository) read-only. A symlink is
    // left alone: bwrap would mount over where it leads, not on the link.
    for git in writable.iter().map(|root| root.join(".git")) {
        match git.symlink_metadata() {
            Ok(meta) if meta.is_dir() => mount(&mut args, Mount::Writable, &git),
            Ok(meta) if meta.is_file() => mount(&mut args, Mount::ReadOnly, &git),
            _ => {}
        }
    }
    for path in writable
        .iter()
        .flat_map(|root| PROTECTED.iter().map(move |p| root.join(p)))
    {
        if path.exists() {
            mount(&mut args, Mount::ReadOnly, &path);
        }
    }
    for path in home
        .into_iter()
        .flat_map(|home| HIDDEN.iter().map(move |p| home.join(p)))
    {
        if path.is_dir() {
            mount(&mut args, Mount::EmptyDir, &path);
        } else if path.exists() {
            mount(&mut args, Mount::EmptyFile, &path);
        }
    }
    args.extend(["--chdir".into(), cwd.into()]);
    args
}

/// What is mounted on a path.
enum Mount {
    /// The path itself, read-write.
    Writable,
    /// The path itself, read-only.
    ReadOnly,
    /// An empty tmpfs, over a directory.
    EmptyDir,
    /// An empty file (`/dev/null`), over a file.
    EmptyFile,
}

fn mount(args: &mut Vec<OsString>, what: Mount, path: &Path) {
    match what {
        Mount::Writable => args.extend(["--bind".into(), path.into()]),
        Mount::ReadOnly => args.extend(["--ro-bind".into(), path.into()]),
        Mount::EmptyDir => args.push("--tmpfs".into()),
        Mount::EmptyFile => args.extend(["--ro-bind".into(), "/dev/null".into()]),
    }
    args.push(path.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn roots_are_bound_then_their_protected_paths_and_home_secrets_covered() {
        let dir = tempfile::tempdir().unwrap();
        let (root, home) = (dir.path().join("w"), dir.path().join("h"));
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".aws"), "").unwrap();
        let roots = std::slice::from_ref(&root);
        let args = strings(&arguments(roots, roots, Some(&home), &root));
        let joined = args.join(" ");
        let (r, h) = (root.display(), home.display());
        assert!(joined.starts_with("--die-with-parent --unshare-pid --ro-bind / / "));
        assert!(joined.contains("--tmpfs /tmp"), "{joined}");
        let bind = joined.find(&format!("--bind {r} {r} ")).unwrap();
        let git = joined.find(&format!("--bind {r}/.git {r}/.git ")).unwrap();
        let hooks = joined
            .find(&format!("--ro-bind {r}/.git/hooks {r}/.git/hooks"))
            .unwrap();
        assert!(
            bind < git && git < hooks,
            "root, .git, then the holes: {joined}"
        );
        assert!(joined.contains(&format!("--ro-bind {r}/.git/config {r}/.git/config")));
        assert!(!joined.contains(".hearth"), "a missing path is left alone");
        assert!(joined.contains(&format!("--tmpfs {h}/.ssh")), "{joined}");
        assert!(joined.contains(&format!("--ro-bind /dev/null {h}/.aws")));
        assert!(!joined.contains(".gnupg"));
        assert!(joined.ends_with(&format!("--chdir {r}")));
    }

    #[test]
    fn a_git_file_is_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        std::fs::write(root.join(".git"), "gitdir: /elsewhere/.git/worktrees/w\n").unwrap();
        let roots = std::slice::from_ref(&root);
        let joined = strings(&arguments(roots, roots, None, &root)).join(" ");
        let r = root.display();
        assert!(
            joined.contains(&format!("--ro-bind {r}/.git {r}/.git")),
            "{joined}"
        );
        // A symlink is not mounted on (bwrap would mount where it leads).
        std::fs::remove_file(root.join(".git")).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.join(".git")).unwrap();
        let joined = strings(&arguments(roots, roots, None, &root)).join(" ");
        assert!(!joined.contains(&format!("{r}/.git {r}/.git")), "{joined}");
    }

    /// Whatever the PATH of Hearth or of a command says: only an installed bwrap, and none
    /// that a writable root holds (this one, `/`, holds all).
    #[test]
    fn only_an_installed_bwrap_outside_the_writable_roots_is_taken() {
        if let Some(found) = find(&[]) {
            assert!(
                INSTALLED.iter().any(|path| found == Path::new(path)),
                "{found:?}"
            );
        }
        assert_eq!(find(&[PathBuf::from("/")]), None);
    }

    #[test]
    fn a_read_only_root_under_tmp_stays_in_view_below_the_private_tmp() {
        let root = PathBuf::from("/tmp/project");
        let args = strings(&arguments(std::slice::from_ref(&root), &[], None, &root));
        let joined = args.join(" ");
        let tmpfs = joined.find("--tmpfs /tmp").unwrap();
        let view = joined.find("--ro-bind /tmp/project /tmp/project").unwrap();
        assert!(tmpfs < view, "{joined}");
        assert!(
            !joined.contains("--bind /tmp/project"),
            "not writable: {joined}"
        );
    }

    #[test]
    fn the_program_runs_after_the_options() {
        let dir = tempfile::tempdir().unwrap();
        let mut launch = Launch {
            kind: super::super::ChildKind::Command,
            program: "sh".into(),
            args: vec!["-c".into(), "true".into()],
            cwd: dir.path().to_owned(),
            env: Vec::new(),
            sandbox: None,
        };
        wrap(&mut launch, "/usr/bin/bwrap".into(), &[], &[]);
        assert_eq!(launch.program, "/usr/bin/bwrap");
        let args = strings(&launch.args);
        assert_eq!(args[args.len() - 4..], ["--", "sh", "-c", "true"]);
    }
}
