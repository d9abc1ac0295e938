//! Keeping a client's idle timer fed while the model says nothing: clients end a turn that
//! stays silent too long (Hermes's keepalive comes every 45 s), and a model may think, queue
//! or retry for minutes before its first token. Every `limits.liveness` of silence the
//! client gets a `session_info_update` whose `updatedAt` is now — ACP's "time of last
//! activity", which every client accepts and none shows as conversation — with
//! `_meta.hearth.waitingForModelMs`. (A running tool call's own beat is in `calls.rs`.)

use std::future::Future;
use std::time::{Duration, Instant};

use crate::session::events::{EventSink, SessionEvent, Visibility};
use crate::store::now;

/// Awaits `future`, telling `sink` the session is alive after every `interval` it keeps the
/// turn waiting; `since` is when the wait for the model began.
pub async fn waiting_for_model<F: Future>(
    future: F,
    sink: &dyn EventSink,
    interval: Duration,
    since: Instant,
) -> F::Output {
    tokio::pin!(future);
    loop {
        tokio::select! {
            output = &mut future => return output,
            () = tokio::time::sleep(interval) => {
                let beat = SessionEvent::ModelSilent {
                    waited: since.elapsed(),
                    updated_at: now(),
                };
                sink.emit(beat, Visibility::Transient);
            }
        }
    }
}
