//! Checkpoints around the agent's file changes. Before a call that edits files (`write`,
//! `edit`: an `Access::Edit`) runs, each file is recorded as the prompt found it; after it
//! ran, the hash of what it left, so that an undo can tell whether someone changed the file
//! since. `undo.rs` and `rewind.rs` read them back; the rows live in the store, outside the
//! workspace, and survive a restart.
//!
//! The text recorded is the diff's old text: `prepare` read it through the workspace port
//! (an editor's unsaved buffer counts), and the tool writes only if the file still holds it.
//!
//! Around each call in `agent/calls.rs` `execute`: a call whose `Ready::access` is
//! `Access::Edit` has its diffs' files recorded before it runs, under the turn's user message
//! id (`log_prompt`'s): the old text, or its absence, with its SHA-256 (`sha256:<hex>`); after
//! a successful run, the hash of the new text; after a failed one, the record withdrawn if
//! the call made it (`CheckpointOp::Withdraw`). The store keeps one row per prompt and path
//! (`checkpoints`, migration 5; `StoreOp::Checkpoint`, through the outbox): the first record
//! wins, the after-hash follows the last change. `tools/` stays unaware of all this.
//!
//! Tests: end to end in `core/tests/undo.rs`.

use sha2::{Digest, Sha256};

use crate::access::{Access, Diff};
use crate::session::Session;
use crate::tools::Ready;

/// How a file's text is known again: `sha256:` and the hex digest.
pub fn hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Records the files `prepared` will change, as they are now, under the prompt `prompt_id`,
/// and returns their diffs for [`after`]. The prompt's first record of a file is the one kept.
pub fn before(session: &Session, prompt_id: &str, prepared: &Ready) -> Vec<Diff> {
    let Access::Edit(diffs) = &prepared.access else {
        return Vec::new();
    };
    for diff in diffs {
        let content_hash = diff.old_text.as_deref().map(hash);
        session.record_checkpoint(prompt_id, &diff.path, diff.old_text.clone(), content_hash);
    }
    diffs.clone()
}

/// Records what a call that ran left: its diffs' new text. A call that failed wrote nothing
/// (the tools write last, and only to a file that still holds the diff's old text): its
/// record is withdrawn if it was the prompt's first, else it would keep what the file held
/// when the call was prepared — which the user may have changed meanwhile, the very reason
/// it failed — and an undo would put that back over the user's text.
pub fn after(session: &Session, prompt_id: &str, diffs: &[Diff], succeeded: bool) {
    if !succeeded {
        for diff in diffs {
            let found = diff.old_text.as_deref().map(hash);
            session.withdraw_checkpoint(prompt_id, &diff.path, found);
        }
        return;
    }
    for diff in diffs {
        let after = Some(hash(&diff.new_text));
        session.record_checkpoint_after(prompt_id, &diff.path, after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_sha256_in_hex() {
        assert_eq!(
            hash("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
