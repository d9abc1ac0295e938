//! The user as one tool call reaches them (`tools::User`): its questions go to the
//! connection's `Asker` with the call's id, and its plan approval to the permission prompt
//! (`Approver`, with the options of `permissions/plan_exit.rs`). An approval switches the
//! session's mode through `Session::apply_settings`, as `session/set_mode` does, so the client
//! gets `config_option_update` and `current_mode_update` before the call ends.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::permissions::prompt::PermissionAsk;
use crate::permissions::{Mode, plan_exit};
use crate::question::{Question, Reply, Wait, Waiting};
use crate::session::Session;
use crate::session::events::EventSink;
use crate::tools::{Kind, PlanVerdict, User};

pub struct CallUser {
    session: Arc<Session>,
    call_id: String,
    cancel: CancellationToken,
    /// A subagent's own session, for a client that shows it (`Wire::asks_on`).
    asks_on: Option<String>,
    /// The subagent told while a question waits (`EventSink::waits`).
    waits: Option<Arc<dyn Waiting>>,
}

impl CallUser {
    /// The user of call `call_id` of `session`, whose turn emits to `sink` (a subagent's,
    /// or the session's own).
    pub fn for_call(
        session: &Arc<Session>,
        call_id: &str,
        cancel: &CancellationToken,
        sink: &dyn EventSink,
    ) -> Arc<dyn User> {
        let wire = session.ctx().wire();
        let subagent = sink.subagent();
        let asks_on = wire.asks_on(&session.id, subagent.as_ref());
        Arc::new(CallUser {
            session: session.clone(),
            call_id: call_id.to_string(),
            cancel: cancel.clone(),
            asks_on: (asks_on != &*session.id).then(|| asks_on.to_string()),
            waits: sink.waits(),
        })
    }

    /// Leaves plan mode for `mode`.
    fn switch_to(&self, mode: Mode) {
        let mut settings = self.session.state().settings.clone();
        settings.mode = mode;
        self.session.apply_settings(settings);
    }
}

impl User for CallUser {
    fn call_id(&self) -> &str {
        &self.call_id
    }

    fn asks_on(&self) -> Option<&str> {
        self.asks_on.as_deref()
    }

    fn waits(&self) -> Option<Arc<dyn Waiting>> {
        self.waits.clone()
    }

    fn mode(&self) -> Mode {
        self.session.state().settings.mode
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Reply> {
        Box::pin(async move {
            let question = Question {
                tool_call_id: Some(self.call_id.clone()),
                asked_on: self.asks_on.clone(),
                ..question
            };
            let asker = self.session.ctx().asker();
            let _wait = Wait::start(self.waits());
            asker.ask(&self.session.id, &question, &self.cancel).await
        })
    }

    fn approve_plan<'a>(&'a self, plan: &'a str) -> BoxFuture<'a, PlanVerdict> {
        Box::pin(async move {
            // Checked again here: the client may have switched the mode meanwhile.
            let mode = self.mode();
            if mode != Mode::Plan {
                return PlanVerdict::NotPlanning(mode);
            }
            let ask = PermissionAsk {
                tool_call_id: self.call_id.clone(),
                title: "Ready to code? Approve the plan to leave plan mode".into(),
                kind: Kind::SwitchMode.as_str(),
                description: Some(plan.to_string()),
                diffs: Vec::new(),
                raw_input: None,
                options: plan_exit::options(),
                // Only the client's own session plans: a subagent is offered no
                // `exit_plan_mode` (`agent/child.rs`).
                subagent: None,
            };
            let ctx = self.session.ctx();
            let chosen = ctx
                .approver()
                .ask(&self.session.id, &ask, &self.cancel)
                .await;
            match chosen.map(|id| id.map(|id| plan_exit::chosen(&id))) {
                Ok(Some(Ok(Some(mode)))) => {
                    self.switch_to(mode);
                    PlanVerdict::Approved(mode)
                }
                Ok(Some(Ok(None))) => PlanVerdict::KeepPlanning,
                Ok(Some(Err(why))) | Err(why) => PlanVerdict::Failed(why),
                Ok(None) => PlanVerdict::Cancelled,
            }
        })
    }
}
