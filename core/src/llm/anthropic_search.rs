//! Anthropic's server-side web search (`web_search_20250305`): the tool a request offers, and
//! what the client is shown of the blocks the answer carries — a `server_tool_use` with the
//! query, then a `web_search_tool_result` with the pages (or an error code). The blocks
//! themselves go back to the API unchanged (`AssistantPart::ServerBlock`); their
//! `encrypted_content` is the API's, never read here.

use serde_json::{Value, json};

use super::{SearchEvent, SearchLink};
use crate::config::AnthropicSearch;

/// The name the model calls it by, as Anthropic's documentation has it.
const NAME: &str = "web_search";

/// The server tool, as the request's `tools` lists it.
pub fn tool(search: &AnthropicSearch) -> Value {
    let mut tool =
        json!({ "type": "web_search_20250305", "name": NAME, "max_uses": search.max_uses });
    if !search.allowed_domains.is_empty() {
        tool["allowed_domains"] = json!(search.allowed_domains);
    }
    if !search.blocked_domains.is_empty() {
        tool["blocked_domains"] = json!(search.blocked_domains);
    }
    tool
}

/// The search a complete `server_tool_use` block starts (none for another server tool).
pub fn started(block: &Value) -> Option<SearchEvent> {
    (block["name"] == NAME).then(|| SearchEvent::Started {
        id: text(block, "id"),
        query: text(&block["input"], "query"),
    })
}

/// What a `web_search_tool_result` block found: its pages, or the error it reports
/// (`{"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}`).
pub fn finished(block: &Value) -> SearchEvent {
    let content = &block["content"];
    let found = match content.as_array() {
        Some(results) => Ok(results.iter().filter_map(link).collect()),
        None => Err(format!(
            "the search failed: {}",
            content["error_code"].as_str().unwrap_or("no results")
        )),
    };
    SearchEvent::Finished {
        id: text(block, "tool_use_id"),
        found,
    }
}

fn link(result: &Value) -> Option<SearchLink> {
    let url = result["url"].as_str()?.to_string();
    Some(SearchLink {
        title: result["title"].as_str().unwrap_or(&url).to_string(),
        age: result["page_age"].as_str().map(str::to_string),
        url,
    })
}

fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_carries_its_limit_and_filters_only_when_set() {
        let mut search = AnthropicSearch::default();
        assert_eq!(
            tool(&search),
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
        );
        search.blocked_domains = vec!["spam.example".into()];
        assert_eq!(tool(&search)["blocked_domains"], json!(["spam.example"]));
        assert!(tool(&search).get("allowed_domains").is_none());
    }

    #[test]
    fn results_and_errors_read_as_the_client_sees_them() {
        let block = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
            {"type": "web_search_result", "url": "https://tokio.rs/", "title": "Tokio", "encrypted_content": "e1", "page_age": "April 1, 2026"},
            {"type": "web_search_result", "url": "https://docs.rs/", "encrypted_content": "e2"},
        ]});
        let link = |title: &str, url: &str, age: Option<&str>| SearchLink {
            title: title.into(),
            url: url.into(),
            age: age.map(str::to_string),
        };
        assert_eq!(
            finished(&block),
            SearchEvent::Finished {
                id: "srvtoolu_1".into(),
                found: Ok(vec![
                    link("Tokio", "https://tokio.rs/", Some("April 1, 2026")),
                    link("https://docs.rs/", "https://docs.rs/", None),
                ]),
            }
        );
        let error = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}});
        assert_eq!(
            finished(&error),
            SearchEvent::Finished {
                id: "srvtoolu_2".into(),
                found: Err("the search failed: max_uses_exceeded".into()),
            }
        );
        let other = json!({"type": "server_tool_use", "id": "srvtoolu_3", "name": "web_fetch", "input": {}});
        assert_eq!(started(&other), None);
    }
}
