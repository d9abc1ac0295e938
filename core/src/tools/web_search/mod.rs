//! `web_search`: a search of the web on the backend the user configured (`webSearch`:
//! SearXNG, Brave, Tavily or Exa — `backends.rs`), offered only when there is one. The model
//! reads the results as a compact numbered list (title, URL, date, snippet); the client gets
//! them as `resource_link` content on a call of kind `fetch`, titled
//! `Searching the web: "<query>"` (the convention Claude's agent and Zed share), and the
//! structured list in `rawOutput`. The domain filters match a domain and its subdomains.
//!
//! The backend's address is the user's, not the model's: it is not held to `fetch`'s address
//! guard (a self-hosted SearXNG is often on loopback); the call asks for network access to
//! it like a fetch, "always" remembered per host.
//!
//! Tests: inline; end to end in `core/tests/web_search.rs`.

mod backends;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

pub use self::backends::Hit;
use self::backends::Query;
use super::ToolContent;
use super::{About, Access, CallReport, Context, Kind, Output, Planned, Result, Tool, ToolError};
use crate::config::WebSearchConfig;
use crate::net::LazyClient;

/// The tool's name, which Anthropic's server-side search shares (`llm/anthropic_search.rs`).
pub const NAME: &str = "web_search";
const DEFAULT_RESULTS: u32 = 5;
const MAX_RESULTS: u32 = 10;
/// Snippets longer than this are cut for the model (a backend may send whole pages).
const SNIPPET_CHARS: usize = 400;

pub struct WebSearch {
    config: Arc<WebSearchConfig>,
    http: LazyClient,
}

impl WebSearch {
    pub fn new(config: WebSearchConfig) -> Self {
        WebSearch {
            config: Arc::new(config),
            http: LazyClient::new(|builder| builder),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// What to search for, as you would type it into a search engine.
    #[schemars(length(min = 1))]
    query: String,
    /// How many results to return (default 5).
    #[schemars(range(min = 1, max = MAX_RESULTS))]
    max_results: Option<u32>,
    /// Only results from these domains (`docs.rs` also matches `www.docs.rs`).
    allowed_domains: Option<Vec<String>>,
    /// No results from these domains.
    blocked_domains: Option<Vec<String>>,
}

/// A validated search.
pub struct Plan {
    query: String,
    max_results: usize,
    allowed: Vec<String>,
    blocked: Vec<String>,
}

const DESCRIPTION: &str = "Search the web and get the top results: title, URL, date when \
    known, and a snippet each. Use it for current information, documentation you do not \
    know, or error messages; then `fetch` a result's URL to read the page. Narrow it with \
    allowed_domains or blocked_domains.";

impl Tool for WebSearch {
    type Input = Input;
    type Plan = Plan;

    async fn prepare(&self, input: Input, _ctx: &Context) -> Result<Planned<Plan>> {
        let query = input.query.trim().to_string();
        if query.is_empty() {
            return Err(ToolError("`query` must not be empty".into()));
        }
        let max_results = input.max_results.unwrap_or(DEFAULT_RESULTS);
        if !(1..=MAX_RESULTS).contains(&max_results) {
            return Err(ToolError(format!(
                "`max_results` must be 1 to {MAX_RESULTS}, not {max_results}"
            )));
        }
        let plan = Plan {
            query,
            max_results: max_results as usize,
            allowed: domains(input.allowed_domains),
            blocked: domains(input.blocked_domains),
        };
        Ok(Planned::new(
            title(&plan.query),
            Vec::new(),
            Access::Network(self.config.endpoint()),
            plan,
        ))
    }

    async fn run(&self, plan: Plan, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        let http = self.http.get().map_err(ToolError)?;
        let filtered = !plan.allowed.is_empty() || !plan.blocked.is_empty();
        let query = Query {
            text: &plan.query,
            // Filters drop results the backend did not: ask for more.
            count: if filtered {
                plan.max_results * 2
            } else {
                plan.max_results
            },
            allowed: &plan.allowed,
            blocked: &plan.blocked,
        };
        let timeout = ctx.limits.fetch_timeout;
        let searched = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(ToolError("cancelled".into())),
            searched = tokio::time::timeout(timeout, backends::search(http, &self.config, &query)) => searched,
        };
        let hits = searched
            .map_err(|_| {
                ToolError(format!(
                    "the search did not answer within {}",
                    humantime::format_duration(timeout)
                ))
            })?
            .map_err(ToolError)?;
        let hits: Vec<Hit> = hits
            .into_iter()
            .filter(|hit| admitted(&hit.url, &plan.allowed, &plan.blocked))
            .take(plan.max_results)
            .collect();
        Ok(output(&plan.query, self.config.provider.as_str(), &hits))
    }

    fn about(&self) -> About {
        About::new(NAME, Kind::Fetch, DESCRIPTION)
    }
}

/// The domains as compared: lower case, without a scheme, `www.` or a trailing dot.
fn domains(list: Option<Vec<String>>) -> Vec<String> {
    list.into_iter()
        .flatten()
        .map(|d| {
            let d = d.trim().to_lowercase();
            let d = d.split_once("://").map_or(d.as_str(), |(_, rest)| rest);
            let d = d.split('/').next().unwrap_or_default();
            d.trim_start_matches("www.")
                .trim_end_matches('.')
                .to_string()
        })
        .filter(|d| !d.is_empty())
        .collect()
}

/// Whether `url`'s host passes the filters: within an allowed domain (when there are any)
/// and within no blocked one.
fn admitted(url: &str, allowed: &[String], blocked: &[String]) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_lowercase))
    else {
        return false;
    };
    let within = |domain: &String| host == *domain || host.ends_with(&format!(".{domain}"));
    (allowed.is_empty() || allowed.iter().any(within)) && !blocked.iter().any(within)
}

/// The title of a search's call: this tool's, or a search the model's provider ran itself
/// (`agent/hosted_search.rs`).
pub fn title(query: &str) -> String {
    format!("Searching the web: \"{query}\"")
}

/// What the client is shown of a search's results, this tool's or the provider's own: a
/// `resource_link` per result, and the structured list for `rawOutput`.
pub fn shown(query: &str, provider: &str, hits: &[Hit]) -> (Vec<ToolContent>, serde_json::Value) {
    let content = hits
        .iter()
        .map(|hit| ToolContent::Link {
            uri: hit.url.clone(),
            name: hit.title.clone(),
            description: Some(hit.snippet.clone()).filter(|s| !s.is_empty()),
        })
        .collect();
    let results: Vec<_> = hits
        .iter()
        .map(|hit| {
            json!({"title": hit.title, "url": hit.url, "snippet": hit.snippet, "published": hit.published})
        })
        .collect();
    let raw = json!({ "query": query, "provider": provider, "results": results });
    (content, raw)
}

/// The model's numbered list, the client's links and the structured results.
fn output(query: &str, provider: &str, hits: &[Hit]) -> Output {
    let for_model = if hits.is_empty() {
        format!("No results for \"{query}\".")
    } else {
        let lines: Vec<String> = hits
            .iter()
            .enumerate()
            .map(|(i, hit)| {
                let date = hit
                    .published
                    .as_ref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                let snippet: String = hit.snippet.chars().take(SNIPPET_CHARS).collect();
                format!(
                    "{}. {}{date}\n   {}\n   {}",
                    i + 1,
                    hit.title,
                    hit.url,
                    snippet.trim()
                )
            })
            .collect();
        format!("Results for \"{query}\":\n{}", lines.join("\n"))
    };
    let (content, raw) = shown(query, provider, hits);
    Output {
        for_model,
        content,
        raw_output: Some(raw),
        ..Output::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_filters_match_a_domain_and_its_subdomains() {
        let allowed = domains(Some(vec!["https://www.Docs.rs/".into()]));
        assert_eq!(allowed, ["docs.rs"]);
        assert!(admitted("https://docs.rs/serde", &allowed, &[]));
        assert!(admitted("https://www.docs.rs/serde", &allowed, &[]));
        assert!(!admitted("https://notdocs.rs/", &allowed, &[]));
        let blocked = domains(Some(vec!["example.com".into()]));
        assert!(!admitted("https://a.example.com/x", &[], &blocked));
        assert!(admitted("https://example.org/", &[], &blocked));
        assert!(!admitted("not a url", &[], &[]));
    }

    #[test]
    fn the_model_reads_a_numbered_list() {
        let hits = [Hit {
            title: "Serde".into(),
            url: "https://serde.rs/".into(),
            snippet: "A framework for serializing".into(),
            published: Some("2026-02-01".into()),
        }];
        let output = output("serde", "searxng", &hits);
        assert_eq!(
            output.for_model,
            "Results for \"serde\":\n1. Serde (2026-02-01)\n   https://serde.rs/\n   A framework for serializing"
        );
        assert_eq!(output.content.len(), 1);
        assert_eq!(output.raw_output.unwrap()["provider"], "searxng");
        assert_eq!(
            super::output("x", "brave", &[]).for_model,
            "No results for \"x\"."
        );
    }
}
