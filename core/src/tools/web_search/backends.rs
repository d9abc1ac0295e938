//! The search backends `web_search` speaks, each one request and one reading of its answer
//! into the same [`Hit`]s:
//!
//! - SearXNG (self-hosted, no key): `GET <url>/search?q=…&format=json` → `results[] {title,
//!   url, content, publishedDate?}`;
//! - Brave: `GET …/res/v1/web/search?q=…&count=…`, header `X-Subscription-Token` →
//!   `web.results[] {title, url, description, age?}`;
//! - Tavily: `POST /search {query, max_results, include_domains?, exclude_domains?}` with a
//!   bearer key → `results[] {title, url, content, published_date?}`;
//! - Exa: `POST /search {query, numResults, includeDomains?, excludeDomains?, contents:
//!   {highlights}}`, header `x-api-key` → `results[] {title, url, highlights?, text?,
//!   publishedDate?}`.
//!
//! The domain filters go to the backends that take them (Tavily, Exa); `web_search` applies
//! them to every answer as well.

use reqwest::{Client, Url};
use serde_json::{Value, json};

use crate::config::{SearchProvider, WebSearchConfig};
use crate::net::root_cause;

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
    pub published: Option<String>,
}

/// What the search asks for.
pub struct Query<'a> {
    pub text: &'a str,
    /// Results to ask the backend for (more than are shown when filters may drop some).
    pub count: usize,
    pub allowed: &'a [String],
    pub blocked: &'a [String],
}

/// Runs `query` on the configured backend.
pub async fn search(
    http: &Client,
    config: &WebSearchConfig,
    query: &Query<'_>,
) -> Result<Vec<Hit>, String> {
    let key = config.api_key.as_ref().map_or("", |k| k.expose());
    let endpoint = config.endpoint();
    let count = query.count.to_string();
    let with_params = |params: &[(&str, &str)]| {
        Url::parse_with_params(&endpoint, params)
            .map_err(|e| format!("`{endpoint}` is not a valid search URL: {e}"))
    };
    let request = match config.provider {
        SearchProvider::Searxng => http.get(with_params(&[("q", query.text), ("format", "json")])?),
        SearchProvider::Brave => http
            .get(with_params(&[("q", query.text), ("count", &count)])?)
            .header("X-Subscription-Token", key)
            .header("Accept", "application/json"),
        SearchProvider::Tavily => http.post(&endpoint).bearer_auth(key).json(&json!({
            "query": query.text,
            "max_results": query.count,
            "include_domains": query.allowed,
            "exclude_domains": query.blocked,
        })),
        SearchProvider::Exa => http.post(&endpoint).header("x-api-key", key).json(&json!({
            "query": query.text,
            "numResults": query.count,
            "includeDomains": query.allowed,
            "excludeDomains": query.blocked,
            "contents": { "highlights": true },
        })),
    };
    let provider = config.provider.as_str();
    let failed = |e: reqwest::Error| format!("the {provider} search failed: {}", root_cause(&e));
    let response = request.send().await.map_err(failed)?;
    let status = response.status();
    let body = response.text().await.map_err(failed)?;
    if !status.is_success() {
        let excerpt: String = body.chars().take(300).collect();
        return Err(format!(
            "the {provider} search answered HTTP {}: {excerpt}",
            status.as_u16()
        ));
    }
    let answer: Value = serde_json::from_str(&body)
        .map_err(|e| format!("the {provider} search did not answer JSON: {e}"))?;
    Ok(hits(config.provider, &answer))
}

/// The results of a backend's answer, in its order.
fn hits(provider: SearchProvider, answer: &Value) -> Vec<Hit> {
    let (list, snippet, published) = match provider {
        SearchProvider::Searxng => ("/results", "content", "publishedDate"),
        SearchProvider::Brave => ("/web/results", "description", "age"),
        SearchProvider::Tavily => ("/results", "content", "published_date"),
        SearchProvider::Exa => ("/results", "text", "publishedDate"),
    };
    let text = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
    answer
        .pointer(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let url = text(item, "url")?;
            let highlights = item.get("highlights").and_then(Value::as_array).map(|h| {
                h.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" … ")
            });
            Some(Hit {
                title: text(item, "title").unwrap_or_else(|| url.clone()),
                snippet: highlights
                    .filter(|h| !h.is_empty())
                    .or_else(|| text(item, snippet))
                    .unwrap_or_default(),
                published: text(item, published),
                url,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backends_answer_gives_the_same_hits() {
        let hit = |snippet: &str, published: Option<&str>| Hit {
            title: "Rust".into(),
            url: "https://www.rust-lang.org/".into(),
            snippet: snippet.into(),
            published: published.map(str::to_string),
        };
        let searxng = json!({"results": [{"title": "Rust", "url": "https://www.rust-lang.org/", "content": "A language", "engines": ["ddg"]}]});
        assert_eq!(
            hits(SearchProvider::Searxng, &searxng),
            [hit("A language", None)]
        );
        let brave = json!({"web": {"results": [{"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language", "age": "2 days ago"}]}});
        assert_eq!(
            hits(SearchProvider::Brave, &brave),
            [hit("A language", Some("2 days ago"))]
        );
        let tavily = json!({"results": [{"title": "Rust", "url": "https://www.rust-lang.org/", "content": "A language", "score": 0.9}]});
        assert_eq!(
            hits(SearchProvider::Tavily, &tavily),
            [hit("A language", None)]
        );
        let exa = json!({"results": [{"title": "Rust", "url": "https://www.rust-lang.org/", "highlights": ["A language", "fast"], "publishedDate": "2026-01-01"}]});
        assert_eq!(
            hits(SearchProvider::Exa, &exa),
            [hit("A language … fast", Some("2026-01-01"))]
        );
        assert_eq!(hits(SearchProvider::Brave, &json!({"query": {}})), []);
    }
}
