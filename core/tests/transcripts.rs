//! The golden transcripts (`tests/transcripts/*.jsonl`), played in-process through `Engine`.
//! `cli/tests/transcripts.rs` plays the same files through `hearth acp`.

use hearth_testkit::{InProcess, transcript};

#[test]
fn golden_transcripts_in_process() {
    transcript::run_all(|config, _dir| InProcess::start(config));
}
