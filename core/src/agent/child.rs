//! Child turns, for the tools that delegate (`tools::ChildTurns`): one model turn of its own,
//! in a fresh context — the prompt as its only message, no tools, the session's model and
//! thought level, and its own system prompt or the session's — whose text comes back to the
//! tool. Nothing of it is logged or shown: the calling tool decides what the user sees.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{TurnError, check_credential, request};
use crate::chat::Message;
use crate::llm::{ChatRequest, Provider, StreamEvent};
use crate::session::Session;
use crate::tools::{ChildPrompt, ChildTurns, ToolError};

/// The child turns of a session's turn.
pub struct Children {
    session: Arc<Session>,
}

impl Children {
    pub fn of(session: &Arc<Session>) -> Arc<dyn ChildTurns> {
        Arc::new(Children {
            session: session.clone(),
        })
    }

    /// The child's request: the session's model and settings, a fresh context.
    fn request(&self, prompt: ChildPrompt) -> ChatRequest {
        let messages = Arc::new(vec![Message::user_text(prompt.prompt)]);
        let mut request = request::build(&self.session, messages, Default::default());
        request.tools = Vec::new();
        if let Some(system) = prompt.system {
            request.system = system.into();
        }
        request
    }
}

impl ChildTurns for Children {
    fn run<'a>(
        &'a self,
        prompt: ChildPrompt,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let model = self.session.state().settings.model.clone();
            let provider = check_credential(self.session.ctx(), &model).map_err(|e| match e {
                TurnError::Auth { provider } => ToolError(format!(
                    "the child turn has no credential for `{}`",
                    provider.as_str()
                )),
                other => ToolError(format!("the child turn could not start: {other:?}")),
            })?;
            answer(&*provider, self.request(prompt), cancel).await
        })
    }
}

/// Streams `request` to its end and returns the model's text; reasoning is left out.
async fn answer(
    provider: &dyn Provider,
    request: ChatRequest,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let failed = |e| ToolError(format!("the child turn failed: {e}"));
    let cancelled = || ToolError("the child turn was cancelled".into());
    let mut events = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(cancelled()),
        started = provider.stream(request) => started.map_err(failed)?,
    };
    let mut text = String::new();
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(cancelled()),
            next = events.next() => next,
        };
        match next {
            None => return Ok(text),
            Some(Err(e)) => return Err(failed(e)),
            Some(Ok(StreamEvent::Text(delta))) => text.push_str(&delta),
            Some(Ok(_)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hearth_mock_llm::{MockLlm, Script};
    use serde_json::json;

    use super::*;
    use crate::config::{Endpoint, Secret};
    use crate::llm::openai::OpenAi;

    fn mock(responses: serde_json::Value) -> (MockLlm, OpenAi) {
        let script: Script = serde_json::from_value(json!({ "responses": responses })).unwrap();
        let mock = MockLlm::start(script).unwrap();
        let endpoint = Endpoint {
            base_url: mock.base_url(),
            api_key: Some(Secret::new("test-key")),
            default_base_url: false,
            max_retries: 0,
        };
        let provider = OpenAi::new(endpoint, Duration::from_secs(5));
        (mock, provider)
    }

    fn request(system: &str, prompt: &str) -> ChatRequest {
        ChatRequest {
            model: "test-model".into(),
            system: system.into(),
            messages: Arc::new(vec![Message::user_text(prompt)]),
            tools: Vec::new(),
            thought_level: None,
            wire: Default::default(),
        }
    }

    #[tokio::test]
    async fn a_child_turn_answers_with_the_models_text() {
        let (mock, provider) = mock(json!([{ "events": [
            { "reasoning": "Two and two." },
            { "text": "It is " },
            { "text": "four." },
        ]}]));
        let cancel = CancellationToken::new();
        let request = request("You add.", "What is 2 + 2?");
        let text = answer(&provider, request, &cancel).await.unwrap();
        assert_eq!(text, "It is four.");
        let sent = &mock.requests()[0].body;
        assert_eq!(sent["messages"][0]["content"], "You add.");
        assert_eq!(sent["messages"][1]["content"], "What is 2 + 2?");
        assert!(sent.get("tools").is_none(), "{sent}");
    }

    #[tokio::test]
    async fn a_child_turn_stops_when_cancelled_and_says_why_it_failed() {
        let (_mock, provider) = mock(json!([
            { "events": [{ "text": "Thinking" }, { "stallMs": 30000 }] },
            { "status": 400, "error": "bad request" },
        ]));
        let cancel = CancellationToken::new();
        let running = answer(&provider, request("s", "slow"), &cancel);
        let stop = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        };
        let (stopped, ()) = tokio::join!(running, stop);
        assert_eq!(stopped.unwrap_err().0, "the child turn was cancelled");
        let failed = answer(&provider, request("s", "bad"), &CancellationToken::new()).await;
        assert!(
            failed
                .unwrap_err()
                .0
                .starts_with("the child turn failed: HTTP 400")
        );
    }
}
