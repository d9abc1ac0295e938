//! A started child's whole process tree, the one handle on it: signalled now (`terminate`,
//! `kill`), stopped politely then by force (`stop`, `stop_after`, which never block: the
//! waiting happens on a thread of its own, so they may be called from a task, a session's
//! close or a `Drop`), waited for, and killed when dropped — whatever happens to the code
//! that started it, nothing it started survives.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::os::Tree;

/// How long a stopped group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(1);

/// How often a stopping group is looked at.
const POLL: Duration = Duration::from_millis(20);

pub struct Group {
    /// `None` when the process was already gone (reaped) when it was started.
    tree: Option<Tree>,
    /// Set once it was killed or a stop began: nothing more is sent from here (a recycled
    /// group id is never signalled), and a drop leaves the stop to finish.
    done: AtomicBool,
    killer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// What serves the tree and must last as long as it: the allowlist proxy of a command
    /// whose only way out it is.
    _serving: Option<Box<dyn Send + Sync>>,
}

impl Group {
    /// The tree the just-spawned `child` leads (it was started by the launcher).
    pub(super) fn led_by(child: &tokio::process::Child) -> std::io::Result<Self> {
        Ok(Group {
            tree: Tree::led_by(child)?,
            done: AtomicBool::new(false),
            killer: Mutex::new(None),
            _serving: None,
        })
    }

    /// This group, keeping `server` alive until it is dropped.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    pub(super) fn serving(mut self, server: impl Send + Sync + 'static) -> Self {
        self._serving = Some(Box::new(server));
        self
    }

    /// Asks every process of the group to stop (SIGTERM), and nothing more.
    pub fn terminate(&self) {
        if let Some(tree) = self
            .tree
            .as_ref()
            .filter(|_| !self.done.load(Ordering::Acquire))
        {
            tree.terminate();
        }
    }

    /// Kills every process of the group (SIGKILL). Later calls and the drop do nothing.
    pub fn kill(&self) {
        if let Some(tree) = self
            .tree
            .as_ref()
            .filter(|_| !self.done.swap(true, Ordering::AcqRel))
        {
            tree.kill();
        }
    }

    /// SIGTERM to every process of the group now, SIGKILL to what is left after a grace
    /// period. Later calls do nothing.
    pub fn stop(&self) {
        self.stop_after(Duration::ZERO);
    }

    /// Like `stop`, once the group has had `polite` to leave by itself (a server that was
    /// asked to exit).
    pub fn stop_after(&self, polite: Duration) {
        let Some(tree) = self.tree.clone() else {
            return;
        };
        if self.done.swap(true, Ordering::AcqRel) {
            return;
        }
        if polite.is_zero() && !tree.terminate() {
            return;
        }
        let stopping = tree.clone();
        let killer = std::thread::Builder::new()
            .name("hearth-process-stop".into())
            .spawn(move || {
                let tree = stopping;
                if !polite.is_zero() {
                    if gone_within(&tree, polite) {
                        return;
                    }
                    tree.terminate();
                }
                if !gone_within(&tree, GRACE) {
                    tree.kill();
                }
            });
        match killer {
            Ok(handle) => *self.killer.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle),
            // No thread to wait on: no grace either.
            Err(_) => tree.kill(),
        }
    }

    /// Waits until the group is gone or killed: at most the grace period after `stop`.
    pub fn wait(&self) {
        let killer = self.killer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(killer) = killer {
            let _ = killer.join();
        }
    }

    /// Whether a stop has finished (or none is under way): nothing is left to wait for.
    pub fn settled(&self) -> bool {
        let killer = self.killer.lock().unwrap_or_else(|e| e.into_inner());
        killer.as_ref().is_none_or(|killer| killer.is_finished())
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Polls the group until it is empty (true), or `limit` passed (false).
fn gone_within(tree: &Tree, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if tree.is_gone() {
            return true;
        }
        std::thread::sleep(POLL);
    }
    false
}
