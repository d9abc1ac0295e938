//! The golden transcripts (`tests/transcripts/*.jsonl`), played through `hearth acp` over
//! stdio. `core/tests/transcripts.rs` plays the same files in-process.

use hearth_testkit::{Stdio, transcript};

#[test]
fn golden_transcripts_over_stdio() {
    transcript::run_all(|config, dir| Stdio::start(config, dir, &[]));
}
