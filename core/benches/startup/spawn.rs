//! Cold start as an editor sees it: spawn `hearth acp` on a file store, write `initialize`,
//! read the answer's line; then its resident memory, read from /proc before stdin closes,
//! once it has answered a `session/list` too: `hearth acp` opens its store and starts its
//! threads right after the first answer, so only then is its memory what an idle agent holds.
//! The floor is `spawn_floor` (benches/spawn-floor), a Rust binary that reads a line and writes
//! one, spawned the same way; they take turns run by run, so the ratio comes from one run.
//! With `HEARTH_BENCH_BASE` (another build's `hearth`, as benches/compare.sh makes) that
//! build takes its turn too.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::spawned::{self, INITIALIZE, Spawned};

/// One spawned program and what it measured.
struct Subject {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    times: Vec<Duration>,
    rss_kib: Vec<u64>,
    /// Whether it is an agent, asked a second request before its memory is read (the floor
    /// answers one line only).
    agent: bool,
}

impl Subject {
    fn new(name: String, program: PathBuf, args: Vec<String>, agent: bool) -> Subject {
        Subject {
            name,
            program,
            args,
            times: Vec::new(),
            rss_kib: Vec::new(),
            agent,
        }
    }

    /// Spawn → the first line answered; then, started, the process's VmRSS; then EOF and
    /// the exit.
    fn run_once(&mut self) {
        let started = Instant::now();
        let mut agent = Spawned::start(&self.program, &self.args);
        agent.send(INITIALIZE);
        agent.until_answer(1);
        self.times.push(started.elapsed());
        if self.agent {
            agent.send(LIST);
            agent.until_answer(2);
        }
        self.rss_kib.push(agent.memory_kib("VmRSS"));
        agent.finish();
    }
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}"#;

fn median<T: Ord + Copy>(values: &[T]) -> T {
    let mut sorted = values.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// Runs each program `runs` times, taking turns, and prints the table.
pub fn report(runs: usize) {
    let release = spawned::release_builds();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    // A store each: a build refuses a store a newer schema has migrated.
    let args = |name: &str| {
        let dir = scratch.path().join(name);
        std::fs::create_dir_all(&dir).expect("a store's directory");
        spawned::acp_args(&spawned::file_store_config(&dir))
    };
    let mut subjects = vec![
        Subject::new(
            "floor (`spawn_floor`)".into(),
            release.join("spawn_floor"),
            Vec::new(),
            false,
        ),
        Subject::new(
            "`hearth acp`".into(),
            release.join("hearth"),
            args("this"),
            true,
        ),
    ];
    if let Some((name, base)) = spawned::base_build() {
        let name = format!("`hearth acp` at {name}");
        subjects.push(Subject::new(name, base.join("hearth"), args("base"), true));
    }
    // The first start creates the store; an editor's every later start opens it.
    for subject in &mut subjects {
        subject.run_once();
        subject.times.clear();
        subject.rss_kib.clear();
    }
    for round in 0..runs {
        let count = subjects.len();
        for turn in 0..count {
            subjects[(round + turn) % count].run_once();
        }
    }
    print_table(&subjects, runs);
}

fn print_table(subjects: &[Subject], runs: usize) {
    let ms = |s: &Subject| median(&s.times).as_secs_f64() * 1000.0;
    let floor = ms(&subjects[0]);
    println!(
        "| Spawned on a file store (median of {runs}, taking turns) | spawn → `initialize` answered | ratio to the floor | RSS after `initialize` and `session/list` |"
    );
    println!("|---|---|---|---|");
    for subject in subjects {
        println!(
            "| {} | {:.2} ms | {:.2}× | {:.1} MiB |",
            subject.name,
            ms(subject),
            ms(subject) / floor,
            median(&subject.rss_kib) as f64 / 1024.0
        );
    }
}
