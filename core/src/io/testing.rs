//! Test helpers: watching a process group through /proc.

use std::time::Duration;

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
