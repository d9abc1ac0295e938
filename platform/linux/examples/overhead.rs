//! The sandbox's cost per command: `true` started and waited for 100 times confined
//! (workspace-write with the network off: rulesets and filters built, a network namespace
//! entered, Landlock and seccomp applied — what every `run_command` pays) and 100 times not,
//! interleaved; the medians and their difference. With `network`, the network is on: no
//! namespace, so the difference is what the namespace costs.
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
    let rules = hearth_linux_sandbox::Rules {
        writable: vec![workspace.clone()],
        network: std::env::args().nth(2).as_deref() == Some("network"),
    };
    let (mut confined, mut open) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        open.push(time(|_| {}));
        confined.push(time(|command| {
            let prepared = hearth_linux_sandbox::prepare(&rules)
                .expect("the sandbox builds")
                .expect("this kernel has Landlock");
            prepared.install(command);
        }));
    }
    let _ = std::fs::remove_dir_all(&workspace);
    let (confined, open) = (median(confined), median(open));
    let network = if rules.network { "on" } else { "off" };
    println!(
        "`true`, network {network}, median of {runs}: confined {confined:.3} ms, unconfined {open:.3} ms, overhead {:.3} ms",
        confined - open
    );
}

/// Milliseconds to set up, start and wait for `true`, `setup` adjusting its command.
fn time(setup: impl FnOnce(&mut Command)) -> f64 {
    let started = Instant::now();
    let mut command = Command::new("true");
    setup(&mut command);
    let status = command.status().expect("true runs");
    assert!(status.success());
    started.elapsed().as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
