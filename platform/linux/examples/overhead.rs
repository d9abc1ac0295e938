//! The sandbox's cost per command: `true` started and waited for 100 times confined
//! (workspace-write with the network off: rulesets and filters built, a network namespace
//! entered, Landlock and seccomp applied — what every `run_command` pays), 100 times under
//! the bwrap layer where `bwrap` is installed (the same steps without Landlock, then
//! `/usr/bin/bwrap` with the mounts Hearth gives it: `/` read-only, `/dev`, `/proc`, a
//! private `/tmp`, the workspace bound, a pid namespace), and 100 times not, interleaved; the
//! medians and their differences. With `network`, the network is on: no namespace, so the
//! difference is what the namespace costs.
//!
//! `cargo run --release -p hearth-linux-sandbox --example overhead [runs] [network]`

use std::process::Command;
use std::time::Instant;

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(100, |n| n.parse().expect("a count"));
    let workspace = std::env::temp_dir().join(format!("hearth-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).expect("a workspace");
    let network = std::env::args().nth(2).as_deref() == Some("network");
    let rules = |landlock| hearth_linux_sandbox::Rules {
        writable: vec![workspace.clone()],
        network,
        proxy_port: None,
        landlock,
    };
    let confine = |landlock, command: &mut Command| {
        hearth_linux_sandbox::prepare(&rules(landlock))
            .expect("the sandbox builds")
            .expect("this kernel has Landlock")
            .install(command);
    };
    let bwrap = std::path::Path::new("/usr/bin/bwrap").exists();
    let (mut landlock, mut wrapped, mut open) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        open.push(time(Command::new("true"), |_| {}));
        landlock.push(time(Command::new("true"), |command| confine(true, command)));
        if bwrap {
            let mut command = Command::new("/usr/bin/bwrap");
            command.args(["--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/"]);
            command.args([
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind",
            ]);
            command.args([&workspace, &workspace]).args(["--", "true"]);
            wrapped.push(time(command, |command| confine(false, command)));
        }
    }
    let _ = std::fs::remove_dir_all(&workspace);
    let open = median(open);
    let landlock = median(landlock);
    let network = if network { "on" } else { "off" };
    println!(
        "`true`, network {network}, median of {runs}: unconfined {open:.3} ms, \
         landlock + seccomp {landlock:.3} ms (+{:.3} ms)",
        landlock - open
    );
    if bwrap {
        let wrapped = median(wrapped);
        println!(
            "  bwrap + seccomp {wrapped:.3} ms (+{:.3} ms over unconfined)",
            wrapped - open
        );
    }
}

/// Milliseconds to set up, start and wait for `command`, `setup` adjusting it.
fn time(mut command: Command, setup: impl FnOnce(&mut Command)) -> f64 {
    let started = Instant::now();
    setup(&mut command);
    let status = command.status().expect("true runs");
    assert!(status.success());
    started.elapsed().as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
