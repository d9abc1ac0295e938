//! `_hearth/session/rewind {sessionId, toMessageId, dryRun?}` → `{rewound, filesRestored,
//! conflicts}`: puts the session's files back as they were before the prompt `toMessageId`
//! (the conversation stays). Shaped like claude-agent-acp's `_session/rewind`, so that a
//! standard `session/rewind` later is a rename. It waits for a running turn to end; a file
//! someone changed after the agent is left as it is and listed in `conflicts`. With
//! `dryRun` nothing is touched and the answer says what would be (`rewound: false`).

use serde::{Deserialize, Serialize};

use super::responder::Responder;
use super::{SessionParams, errors, on_session};
use crate::agent::rewind::{Rewound, rewind as rewind_files};
use crate::rpc::envelope::Params;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RewindRequest {
    session_id: String,
    to_message_id: String,
    #[serde(default)]
    dry_run: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RewindResponse {
    rewound: bool,
    /// The files put back (on a dry run: that would be), absolute.
    files_restored: Vec<String>,
    conflicts: Vec<RewindConflict>,
}

#[derive(Serialize)]
struct RewindConflict {
    path: String,
    reason: String,
}

pub fn rewind(responder: Responder, raw: Params<'_>) {
    on_session(
        responder,
        raw,
        |responder, request: RewindRequest, live| async move {
            live.after_turns().await;
            let done = rewind_files(&live.session, &request.to_message_id, request.dry_run).await;
            let outcome = done
                .map(response)
                .map_err(|e| errors::rewind_error(e, &request.to_message_id));
            responder.reply(outcome);
        },
    );
}

fn response(rewound: Rewound) -> RewindResponse {
    let shown = |path: &std::path::Path| path.to_string_lossy().into_owned();
    RewindResponse {
        rewound: rewound.rewound,
        files_restored: rewound
            .outcome
            .restored
            .iter()
            .map(|r| shown(&r.path))
            .collect(),
        conflicts: rewound
            .outcome
            .conflicts
            .iter()
            .map(|c| RewindConflict {
                path: shown(&c.path),
                reason: c.reason.clone(),
            })
            .collect(),
    }
}

impl SessionParams for RewindRequest {
    fn session_id(&self) -> &str {
        &self.session_id
    }
}
