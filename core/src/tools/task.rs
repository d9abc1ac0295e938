//! `task`: delegates a self-contained piece of work to a child agent (a subagent) that runs a
//! turn loop of its own in a fresh context and hands back only its final message. The agent
//! types on offer — the built-ins and the session's agent files — are listed in the
//! description; the child itself runs behind the `ChildTurns` port (`agent/child.rs`).
//!
//! Kind `think`, so several `task` calls of one answer run concurrently, like reads (the
//! port bounds how many children run at once).

use std::fmt::Write;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::bounds::cap;
use crate::permissions::Mode;

use super::{
    About, Access, AgentType, CallReport, ChildAnswer, ChildJob, Context, Kind, Output, Planned,
    Result, Tool, ToolContent, ToolError,
};

/// The most of a child's answer the parent model reads.
const MAX_ANSWER_BYTES: usize = 32 * 1024;

/// The agent a call without `subagent_type` gets.
const DEFAULT_AGENT: &str = "general";

/// The tools `explore` has: reading, searching, code navigation, the web and the session's
/// skills, nothing that changes anything.
const EXPLORE_TOOLS: [&str; 9] = [
    "read",
    "list",
    "glob",
    "grep",
    "lsp_diagnostics",
    "lsp_definition",
    "lsp_references",
    "fetch",
    "skill",
];

/// The agent types every session offers, before its agent files.
pub fn builtin_agents() -> Vec<AgentType> {
    vec![
        AgentType {
            name: "general".into(),
            description: "A general-purpose agent with your tools (but `task`), for a \
                          multi-step piece of work: research, or changes to files you name."
                .into(),
            tools: None,
            model: None,
            mode: None,
            max_turns: None,
            prompt: "Keep to the files and the scope you were given; other agents may be \
                     working on other files at the same time."
                .into(),
        },
        AgentType {
            name: "explore".into(),
            description: "A fast read-only agent for finding code and answering questions \
                          about the codebase: it reads, lists, searches and navigates, and \
                          changes nothing. Say how thorough to be."
                .into(),
            tools: Some(EXPLORE_TOOLS.iter().map(|t| t.to_string()).collect()),
            model: None,
            mode: Some(Mode::Plan),
            max_turns: None,
            prompt: "You are read-only: search and read to answer the question, then report \
                     what you found with file paths and line numbers."
                .into(),
        },
    ]
}

pub struct Task {
    agents: Vec<AgentType>,
}

impl Task {
    /// The tool offering `agents` (never empty: the built-ins are always there).
    pub fn new(agents: Vec<AgentType>) -> Task {
        Task { agents }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A 3 to 5 word label, shown while it runs.
    description: String,
    /// The complete task: the agent cannot see this conversation. Say what to return.
    prompt: String,
    /// The agent to run (default `general`).
    subagent_type: Option<String>,
}

const DESCRIPTION: &str = "Delegate a self-contained task to a subagent: it works in a fresh \
    context with its own tools and returns only its final message, so its searching and \
    reading do not fill this conversation. Use it for broad searches of a large codebase and \
    for independent pieces of work; several `task` calls in one answer run in parallel. Do the \
    work yourself when it is a few reads or one edit. The subagent cannot see this \
    conversation and cannot ask the user: give it everything it needs and say what to \
    return. Its result is its final message, for you to check and relay; the user does not \
    see it.\n\nAgent types (`subagent_type`):";

impl Tool for Task {
    type Input = Input;
    type Plan = ChildJob;

    fn about(&self) -> About {
        let mut description = DESCRIPTION.to_string();
        for agent in &self.agents {
            let _ = write!(description, "\n- `{}`: {}", agent.name, agent.description);
        }
        About::new("task", Kind::Think, description)
    }

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<ChildJob>> {
        if ctx.children.is_none() {
            return Err(ToolError("Subagents are not available here.".into()));
        }
        let name = input.subagent_type.as_deref().unwrap_or(DEFAULT_AGENT);
        let agent = self.agents.iter().find(|a| a.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
            ToolError(format!(
                "There is no agent type `{name}`; use one of: {}.",
                known.join(", ")
            ))
        })?;
        if input.prompt.trim().is_empty() {
            return Err(ToolError(
                "`prompt` is empty: say what the agent should do.".into(),
            ));
        }
        let title = match input.description.trim() {
            "" => format!("Task ({name})"),
            label => label.to_string(),
        };
        let job = ChildJob {
            agent: agent.clone(),
            description: title.clone(),
            prompt: input.prompt,
        };
        Ok(Planned::new(title, Vec::new(), Access::None, job))
    }

    async fn run(&self, job: ChildJob, ctx: &Context, report: &dyn CallReport) -> Result<Output> {
        let children = ctx
            .children
            .as_ref()
            .ok_or_else(|| ToolError("Subagents are not available here.".into()))?;
        let agent = job.agent.name.clone();
        let answer = children.run(job, report, &ctx.cancel).await?;
        Ok(output(&agent, answer))
    }
}

/// The parent model reads the child's id and its answer, bounded; the client is shown the
/// answer, with what the child spent in `_meta.hearth`.
fn output(agent: &str, answer: ChildAnswer) -> Output {
    let (text, cut) = cap(&answer.text, MAX_ANSWER_BYTES);
    let mut for_model = format!("task_id: {}\n<task_result>\n{text}", answer.child_id);
    if cut {
        let _ = write!(
            for_model,
            "\n[The answer was cut at {} KiB of {} KiB.]",
            MAX_ANSWER_BYTES / 1024,
            answer.text.len() / 1024
        );
    }
    for_model.push_str("\n</task_result>");
    let tally = answer.tally;
    let meta = json!({ "subagent": {
        "childSessionId": answer.child_id,
        "agent": agent,
        "requests": tally.requests,
        "toolCalls": tally.tool_calls,
        "inputTokens": tally.input_tokens,
        "outputTokens": tally.output_tokens,
        "cachedReadTokens": tally.cached_read_tokens,
    }});
    Output {
        for_model,
        content: vec![ToolContent::Text(answer.text)],
        meta: Some(meta),
        ..Output::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tally;

    #[test]
    fn a_long_answer_is_cut_for_the_model_and_shown_whole() {
        let text = "x".repeat(40 * 1024);
        let answer = ChildAnswer {
            child_id: "sub_1".into(),
            text: text.clone(),
            tally: Tally::default(),
        };
        let output = output("explore", answer);
        assert!(
            output
                .for_model
                .starts_with("task_id: sub_1\n<task_result>\nxxx")
        );
        assert!(
            output
                .for_model
                .ends_with("\n[The answer was cut at 32 KiB of 40 KiB.]\n</task_result>"),
            "{}",
            &output.for_model[output.for_model.len() - 80..]
        );
        assert!(output.for_model.len() < 33 * 1024);
        assert_eq!(output.content, [ToolContent::Text(text)]);
        assert_eq!(output.meta.unwrap()["subagent"]["agent"], "explore");
    }
}
