//! Test helpers: a local backend, a confinement policy that marks what it wraps, and
//! watching a process group through /proc.

use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::LocalIo;
use super::process::{ChildKind, Confinement, Launch, Launcher};

/// A launcher passing on this process's environment as it is (the tests of credentials give
/// theirs explicitly).
pub fn launcher() -> Arc<Launcher> {
    Arc::new(Launcher::new(&[]))
}

/// The local backend, on `launcher()`.
pub fn local() -> LocalIo {
    LocalIo::new(launcher())
}

/// What a test engine's process has in its environment: provider keys, which no child may
/// see.
pub fn with_keys() -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    env.push(("OPENAI_API_KEY".into(), "sk-openai-must-not-leak".into()));
    env.push(("ANTHROPIC_API_KEY".into(), "sk-ant-must-not-leak".into()));
    env
}

/// A launcher whose parent environment holds provider keys, told to strip them, every child
/// wrapped by `Wrapped`.
pub fn wrapping_launcher(policy: &Arc<Wrapped>) -> Arc<Launcher> {
    let launcher = Launcher::with_env(with_keys(), &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]);
    Arc::new(launcher.confined(policy.clone()))
}

/// A confinement policy standing for a sandbox: it runs every child as
/// `env HEARTH_WRAPPED=1 <program> <args>` (a prefix wrapper, as `bwrap` would be), and
/// remembers what it was asked to start.
#[derive(Default)]
pub struct Wrapped {
    pub seen: Mutex<Vec<(ChildKind, OsString)>>,
}

impl Wrapped {
    /// The kinds of the children it was asked to start, in order.
    pub fn kinds(&self) -> Vec<ChildKind> {
        let seen = self.seen.lock().unwrap();
        seen.iter().map(|(kind, _)| *kind).collect()
    }
}

impl Confinement for Wrapped {
    fn confine(&self, launch: &mut Launch) -> Result<(), String> {
        let mut seen = self.seen.lock().unwrap();
        seen.push((launch.kind, launch.program.clone()));
        let program = std::mem::replace(&mut launch.program, "env".into());
        let mut args = vec!["HEARTH_WRAPPED=1".into(), program];
        args.append(&mut launch.args);
        launch.args = args;
        Ok(())
    }
}

/// The processes of group `pgid` that are still alive (zombies waiting for a reaper don't
/// count: they run nothing and hold nothing but a table entry).
pub fn live_group_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // After the command name in parentheses: state, ppid, pgrp.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
        })
        .collect()
}

/// Whether every process of the group is gone within a few seconds.
pub async fn group_is_gone(pgid: i32) -> bool {
    for _ in 0..50 {
        if live_group_members(pgid).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}
