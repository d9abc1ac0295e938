//! Which engines are alive, across processes: how a turn that another engine on the same data
//! dir is still running is told from one whose engine is gone (killed, crashed, closed before
//! the turn could end) — the only kind crash recovery closes (`session/recovery.rs`).
//!
//! Every engine has an id (`engine_…`), which the `running_turns` rows of its turns name
//! (schema migration 7). Before it records its first turn, an engine on a file store creates
//! `<data dir>/engines/<id>.lock` and holds an exclusive lock on it (std's `File::try_lock`:
//! `flock` on Unix, `LockFileEx` on Windows) until it closes, when it removes the file. The OS
//! drops the lock when the process ends, however it ends (`kill -9` included), and no child of
//! the engine keeps it (std opens files close-on-exec; on Windows, not inheritable). So an
//! engine is gone exactly when its lock can be taken, or its file is missing (it closed, or an
//! engine that found it gone removed it). An engine that never runs a turn takes no lock and
//! leaves no file; nothing is written while an engine merely runs.
//!
//! An in-memory store belongs to one engine: no other can record a turn in it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::ids::new_id;

/// This engine's id, and its lock once taken.
pub struct Lease {
    id: Arc<str>,
    /// Where the engines' lock files are; `None` for an in-memory store.
    dir: Option<PathBuf>,
    state: Mutex<State>,
}

enum State {
    Untaken,
    Held(File),
    /// Released at close, or never taken (the lock could not be made: see `hold`).
    Unheld,
}

impl Lease {
    /// A fresh engine id, whose lock files (if any) go in `dir`.
    pub fn new(dir: Option<PathBuf>) -> Lease {
        Lease {
            id: Arc::from(new_id("engine")),
            dir,
            state: Mutex::new(State::Untaken),
        }
    }

    pub fn id(&self) -> &Arc<str> {
        &self.id
    }

    /// Takes this engine's lock, the first time only: called before a turn names the engine
    /// in the store. A lock that cannot be made is logged and not tried again; the engine's
    /// turns then look gone to the others, as every turn did before engines had ids.
    pub fn hold(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if !matches!(*state, State::Untaken) {
            return;
        }
        *state = State::Unheld;
        let Some(dir) = &self.dir else { return };
        match lock_own(dir, &self.id) {
            Ok(file) => *state = State::Held(file),
            Err(e) => tracing::warn!(
                error = %e,
                dir = %dir.display(),
                "cannot lock this engine's file: other processes will take its turns for interrupted"
            ),
        }
    }

    /// Whether engine `id` is gone: not this one, and its lock free or its file missing. An
    /// engine gone is removed from the dir. A lock that cannot be checked (an error other
    /// than a held lock) counts as held: a live turn is never closed by mistake.
    pub fn is_gone(&self, id: &str) -> bool {
        if id == &*self.id {
            return false;
        }
        let Some(dir) = &self.dir else { return true };
        // Ids are this module's: a name of letters, digits and `_`, never a path.
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return true;
        }
        let path = lock_path(dir, id);
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "cannot check an engine's lock");
                return false;
            }
        };
        match file.try_lock() {
            Ok(()) => {
                // Removed while locked, so no one finds it held meanwhile; others may still
                // open it before it goes, and find it free.
                let _ = std::fs::remove_file(&path);
                true
            }
            Err(TryLockError::WouldBlock) => false,
            Err(TryLockError::Error(e)) => {
                tracing::warn!(error = %e, path = %path.display(), "cannot check an engine's lock");
                false
            }
        }
    }

    /// Lets the lock go and removes its file: the engine is closing, and a turn it leaves
    /// unfinished is interrupted from now on.
    pub fn release(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let State::Held(file) = std::mem::replace(&mut *state, State::Unheld)
            && let Some(dir) = &self.dir
        {
            let _ = std::fs::remove_file(lock_path(dir, &self.id));
            drop(file);
        }
    }
}

fn lock_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.lock"))
}

fn lock_own(dir: &Path, id: &str) -> std::io::Result<File> {
    std::fs::create_dir_all(dir)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path(dir, id))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(std::io::Error::other("held by someone else")),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine is alive while its lock is held, also to a second handle in the same
    /// process (as another engine in it checks), and gone once released, or when its file
    /// is missing; an engine that never held its lock is gone to the others, never to itself.
    #[test]
    fn an_engine_is_gone_once_its_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let engines = Some(dir.path().join("engines"));
        let (running, checking) = (Lease::new(engines.clone()), Lease::new(engines));
        assert!(checking.is_gone(running.id()), "no file: never ran a turn");
        assert!(!running.is_gone(running.id()), "never gone to itself");
        running.hold();
        let file = dir
            .path()
            .join("engines")
            .join(format!("{}.lock", running.id()));
        assert!(file.exists());
        assert!(!checking.is_gone(running.id()));
        assert!(file.exists(), "a live engine's file stays");
        running.release();
        assert!(!file.exists(), "removed at close");
        assert!(checking.is_gone(running.id()));

        // Left behind unlocked, as by a killed process: gone, and the file is swept.
        std::fs::write(dir.path().join("engines/engine_dead.lock"), "").unwrap();
        assert!(checking.is_gone("engine_dead"));
        assert!(!dir.path().join("engines/engine_dead.lock").exists());
        assert!(checking.is_gone("../../etc/passwd"), "never a path");
        let memory = Lease::new(None);
        memory.hold();
        assert!(memory.is_gone("engine_other") && !memory.is_gone(memory.id()));
    }
}
