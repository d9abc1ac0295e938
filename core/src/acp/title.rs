//! `session/set_title` (unstable): the user names a session. The title is normalised
//! (`agent::title::from_user`: trimmed, whitespace folded, at most 160 characters) and the
//! answer carries it as stored; one that is empty after that is `-32602`. Any stored session
//! can be named — it is brought up like any session a request names — and the agent never
//! replaces the user's title (`Session::set_title`; the row's `title_source` keeps the rule
//! across restarts).

use agent_client_protocol_schema::v1::{SetSessionTitleRequest, SetSessionTitleResponse};

use super::responder::{Responder, params};
use super::schedule;
use crate::agent::title;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::session::events::{EventSink, SessionEvent, Visibility};
use crate::store::{TitleSource, now};

pub fn set_title(responder: Responder, raw: Params<'_>) {
    let request: SetSessionTitleRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return responder.respond(Err(e)),
    };
    let Some(title) = title::from_user(&request.title) else {
        return responder.respond(Err(RpcError::invalid_params(
            "`title` is empty once its whitespace is trimmed",
        )));
    };
    let id = request.session_id.to_string();
    schedule(responder, id, |responder, live| async move {
        live.session.set_title(title.clone(), TitleSource::User);
        // Logged like the agent's titles, so a replay shows the session named as it was.
        let updated_at = now();
        let event = SessionEvent::Title {
            title: title.clone(),
            updated_at,
        };
        live.session.emit(event, Visibility::Live);
        // Queued after the title's write: the outbox commits it before the answer goes out.
        responder.reply(Ok(SetSessionTitleResponse::new(title)));
    });
}
