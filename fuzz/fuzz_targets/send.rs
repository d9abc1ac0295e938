//! Arbitrary bytes into `Engine::send_bytes`, one frame per line (as `hearth acp` reads
//! stdin). Property: no panic, no hang, and every frame answered exactly as JSON-RPC 2.0
//! requires — each request exactly once with its id, every unreadable or invalid frame
//! exactly once, notifications and responses never (see `hearth_fuzz::expected_answer`).
#![no_main]

use std::collections::BTreeMap;
use std::sync::Mutex;

use hearth_fuzz::{Harness, expect, offline_config};
use libfuzzer_sys::fuzz_target;

static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut guard = HARNESS.lock().unwrap_or_else(|p| p.into_inner());
    let harness = guard.get_or_insert_with(|| Harness::new(&offline_config()));
    harness.begin_round();
    let mut expected = BTreeMap::new();
    for frame in data.split(|&b| b == b'\n') {
        expect(&mut expected, frame);
        harness.send_bytes(frame);
    }
    harness.end_round(expected, &String::from_utf8_lossy(data));
});
