//! A web search the model's provider ran itself (Anthropic's server-side search), shown to
//! the client as the local `web_search` tool's call is: kind `fetch`, titled
//! `Searching the web: "<query>"`, the results as `resource_link`s and the structured list in
//! `rawOutput` (provider `anthropic`). The call starts once the model's query has streamed and
//! ends with the result block; a search whose results never came (a cut stream) fails.
//! Nothing runs here and nothing is asked: the search happens on the provider's servers.

use serde_json::json;

use crate::llm::{SearchEvent, SearchLink};
use crate::session::events::{EventSink, SessionEvent, ToolCallStart, ToolOutcome, Visibility};
use crate::tools::web_search::{self, Hit};
use crate::tools::{Kind, WEB_SEARCH};

/// The provider's searches of one answer that have started and not finished: id and query.
#[derive(Default)]
pub struct HostedSearches {
    open: Vec<(String, String)>,
}

impl HostedSearches {
    pub fn take(&mut self, sink: &dyn EventSink, event: SearchEvent) {
        match event {
            SearchEvent::Started { id, query } => {
                start(sink, &id, &query);
                self.open.push((id, query));
            }
            SearchEvent::Finished { id, found } => {
                let Some(at) = self.open.iter().position(|(open, _)| *open == id) else {
                    return;
                };
                let (id, query) = self.open.remove(at);
                let outcome = match found {
                    Ok(links) => completed(&query, &links),
                    Err(message) => ToolOutcome::Failed(message),
                };
                finish(sink, id, outcome);
            }
        }
    }

    /// Fails the searches whose results never came.
    pub fn end(&mut self, sink: &dyn EventSink) {
        for (id, _) in self.open.drain(..) {
            let outcome = ToolOutcome::Failed("the search's results never came".into());
            finish(sink, id, outcome);
        }
    }
}

fn start(sink: &dyn EventSink, id: &str, query: &str) {
    let start = ToolCallStart {
        id: id.to_string(),
        title: web_search::title(query),
        kind: Kind::Fetch,
        locations: Vec::new(),
        raw_input: json!({ "query": query }),
        name: WEB_SEARCH.to_string(),
        diffs: Vec::new(),
    };
    sink.emit(SessionEvent::ToolCallStarted(start), Visibility::Live);
    let running = SessionEvent::ToolCallRunning { id: id.to_string() };
    sink.emit(running, Visibility::Live);
}

fn completed(query: &str, links: &[SearchLink]) -> ToolOutcome {
    let hits: Vec<Hit> = links
        .iter()
        .map(|link| Hit {
            title: link.title.clone(),
            url: link.url.clone(),
            snippet: String::new(),
            published: link.age.clone(),
        })
        .collect();
    let (content, raw_output) = web_search::shown(query, "anthropic", &hits);
    ToolOutcome::Completed {
        content,
        raw_output: Some(raw_output),
        meta: None,
    }
}

fn finish(sink: &dyn EventSink, id: String, outcome: ToolOutcome) {
    sink.emit(
        SessionEvent::ToolCallFinished { id, outcome },
        Visibility::Live,
    );
}
