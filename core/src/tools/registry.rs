//! The built-in tools, and lookup by name (the name the model calls).

use std::sync::{Arc, OnceLock};

use super::ask_user::AskUser;
use super::edit::Edit;
use super::exit_plan_mode::ExitPlanMode;
use super::fetch::Fetch;
use super::fetch_guard::{Guard, GuardedResolver, environment_proxies};
use super::glob::Glob;
use super::grep::Grep;
use super::list::List;
use super::read::Read;
use super::run_command::RunCommand;
use super::skill::Skill;
use super::task::Task;
use super::todo::Todo;
use super::web_search::WebSearch;
use super::write::Write;
use super::{AgentType, AnyTool, erase};
use crate::chat::ToolSpec;
use crate::config::Config;
use crate::io::process::Launcher;
use crate::lsp::Servers;
use crate::net::LazyClient;

/// What the built-in tools are built with: made once per engine and handed to the registry
/// of every session.
#[derive(Clone)]
pub struct ToolDeps {
    /// The fetch tool's HTTP client, built on first use, and its guard: the hosts it may reach
    /// on addresses it otherwise refuses, with the resolver that checks the others.
    pub http: Arc<LazyClient>,
    pub fetch_guard: Arc<GuardedResolver>,
    /// The client of streamable-HTTP MCP servers, built on first use.
    pub mcp_http: Arc<LazyClient>,
    /// The language servers, shared by the sessions on each root.
    pub lsp: Arc<Servers>,
    /// How every child process is started (commands, MCP and language servers).
    pub launcher: Arc<Launcher>,
    /// The backend of `web_search`; without one the tool is not offered.
    pub web_search: Option<crate::config::WebSearchConfig>,
    /// The built-in tools, erased (their schemas generated) once, when the first session
    /// comes up: they hold nothing of a session's, so every session shares them.
    builtin: Arc<OnceLock<Vec<Arc<dyn AnyTool>>>>,
}

impl ToolDeps {
    /// The tools' dependencies; language servers run in `sandbox` (the engine's).
    pub fn create(
        config: &Config,
        launcher: Arc<Launcher>,
        sandbox: Arc<crate::sandbox::Setup>,
    ) -> Self {
        let guard = Guard::new(config.tools.fetch_allow_hosts.clone());
        let fetch_guard =
            Arc::new(GuardedResolver::new(Arc::new(guard)).trusting(environment_proxies()));
        ToolDeps {
            http: Arc::new(super::fetch::http_client(fetch_guard.clone())),
            fetch_guard,
            mcp_http: Arc::new(crate::mcp::http_client()),
            lsp: Arc::new(Servers::new(config, launcher.clone(), sandbox)),
            launcher,
            web_search: config.web_search.clone(),
            builtin: Arc::default(),
        }
    }

    /// Every built-in tool, in the order they are offered to the model.
    pub fn builtin(&self) -> &[Arc<dyn AnyTool>] {
        self.builtin.get_or_init(|| all(self))
    }
}

/// Every built-in tool, made anew; `web_search` only with a backend.
fn all(deps: &ToolDeps) -> Vec<Arc<dyn AnyTool>> {
    let mut builtin = vec![
        erase(Read),
        erase(List),
        erase(Glob),
        erase(Grep),
        erase(Edit),
        erase(Write),
        erase(RunCommand::for_session()),
        erase(Fetch::new(deps.http.clone(), deps.fetch_guard.clone())),
        erase(Todo),
        erase(Skill),
        erase(AskUser),
        erase(ExitPlanMode),
    ];
    if let Some(config) = &deps.web_search {
        builtin.push(erase(WebSearch::new(config.clone())));
    }
    builtin.into_iter().chain(super::lsp::tools()).collect()
}

/// A set of tools, found by name. Each live session has its own: the built-ins, the language
/// servers' tools among them (MCP tools are looked up beside it, `session/services.rs`).
#[derive(Clone)]
pub struct Registry {
    tools: Vec<(String, Arc<dyn AnyTool>)>,
}

impl Registry {
    pub fn new(tools: Vec<Arc<dyn AnyTool>>) -> Self {
        let tools = tools
            .into_iter()
            .map(|tool| (tool.spec().name.clone(), tool))
            .collect();
        Registry { tools }
    }

    /// A session's tools: the built-ins, then `task` offering `agents` (none: no `task`).
    /// `task` is made per session, since its description lists the session's agent files.
    pub fn for_session(deps: &ToolDeps, agents: Option<Vec<AgentType>>) -> Self {
        let mut tools = deps.builtin().to_vec();
        tools.extend(agents.map(|agents| erase(Task::new(agents))));
        Registry::new(tools)
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn AnyTool>> {
        self.tools
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, tool)| tool.clone())
    }

    /// Releases what each tool holds (the session is closing).
    pub fn shutdown(&self) {
        for (_, tool) in &self.tools {
            tool.shutdown();
        }
    }

    /// What the model is told about each tool.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|(_, tool)| tool.spec().clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Kind;

    #[test]
    fn finds_every_builtin_tool_by_name() {
        let registry = Registry::for_session(
            &ToolDeps::create(
                &Config::default(),
                crate::io::testing::launcher(),
                Default::default(),
            ),
            None,
        );
        let names: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "read",
                "list",
                "glob",
                "grep",
                "edit",
                "write",
                "run_command",
                "fetch",
                "todo",
                "skill",
                "ask_user",
                "exit_plan_mode",
                "lsp_diagnostics",
                "lsp_definition",
                "lsp_references"
            ]
        );
        assert_eq!(registry.get("run_command").unwrap().kind(), Kind::Execute);
        assert_eq!(registry.get("edit").unwrap().kind(), Kind::Edit);
        assert!(registry.get("rm").is_none());
    }

    #[test]
    fn specs_are_closed_object_schemas_with_descriptions() {
        for spec in Registry::for_session(
            &ToolDeps::create(
                &Config::default(),
                crate::io::testing::launcher(),
                Default::default(),
            ),
            None,
        )
        .specs()
        {
            assert!(spec.description.len() > 40, "{}", spec.name);
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.parameters["additionalProperties"], false,
                "{}",
                spec.name
            );
            let properties = spec.parameters["properties"].as_object().unwrap();
            for required in spec.parameters["required"].as_array().into_iter().flatten() {
                assert!(
                    properties.contains_key(required.as_str().unwrap()),
                    "{}",
                    spec.name
                );
            }
        }
    }
}
