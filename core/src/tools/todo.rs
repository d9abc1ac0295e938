//! `todo`: the model's plan for the task, shown to the user as an ACP `plan`. Each call sends
//! the whole list, which replaces the previous one.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    About, Access, CallReport, Context, Kind, Output, PlanEntry, Planned, Result, Tool, ToolError,
};

pub struct Todo;

const STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];
const PRIORITIES: [&str; 3] = ["high", "medium", "low"];

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The complete plan, in order.
    todos: Vec<Item>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Item {
    /// What the step does, short and concrete.
    content: String,
    #[schemars(extend("enum" = STATUSES))]
    status: String,
    /// Default: medium.
    #[schemars(extend("enum" = PRIORITIES))]
    priority: Option<String>,
}

/// What the model is told `todo` does.
const DESCRIPTION: &str = "Keep a visible plan for a task of several steps. Send the whole \
    list every time: it replaces the previous one. Mark a step `in_progress` \
    when you start it (one at a time) and `completed` as soon as it is done; add \
    steps you discover. Skip it for a single simple step.";

impl Tool for Todo {
    type Input = Input;
    type Plan = Vec<PlanEntry>;

    async fn prepare(&self, input: Input, _ctx: &Context) -> Result<Planned<Vec<PlanEntry>>> {
        let plan = input
            .todos
            .into_iter()
            .enumerate()
            .map(|(index, item)| entry(index, item))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Planned::new(
            "Update plan".into(),
            Vec::new(),
            Access::None,
            plan,
        ))
    }

    async fn run(
        &self,
        plan: Vec<PlanEntry>,
        _ctx: &Context,
        report: &dyn CallReport,
    ) -> Result<Output> {
        let count = |status: &str| plan.iter().filter(|e| e.status == status).count();
        let for_model = format!(
            "Plan updated: {} steps ({} completed, {} in progress, {} pending).",
            plan.len(),
            count("completed"),
            count("in_progress"),
            count("pending")
        );
        report.plan(plan);
        Ok(Output {
            for_model,
            ..Output::default()
        })
    }

    fn about(&self) -> About {
        About::new("todo", Kind::Think, DESCRIPTION)
    }
}

fn entry(index: usize, item: Item) -> Result<PlanEntry> {
    let fail = |why: String| ToolError(format!("todo {}: {why}", index + 1));
    if item.content.trim().is_empty() {
        return Err(fail("`content` is empty".into()));
    }
    if !STATUSES.contains(&item.status.as_str()) {
        return Err(fail(format!(
            "unknown status `{}` (use {})",
            item.status,
            STATUSES.join(", ")
        )));
    }
    let priority = item.priority.unwrap_or_else(|| "medium".into());
    if !PRIORITIES.contains(&priority.as_str()) {
        return Err(fail(format!(
            "unknown priority `{priority}` (use {})",
            PRIORITIES.join(", ")
        )));
    }
    Ok(PlanEntry {
        content: item.content.trim().to_owned(),
        priority,
        status: item.status,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::testing::{Recorder, prepare, report, workspace};

    #[tokio::test]
    async fn returns_the_whole_plan() {
        let (_dir, ctx) = workspace();
        let input = json!({ "todos": [
            { "content": "Read the code", "status": "completed" },
            { "content": "Fix the bug", "status": "in_progress", "priority": "high" },
            { "content": "Add a test", "status": "pending", "priority": "low" },
        ]});
        let prepared = prepare(&Todo, input.clone(), &ctx).await.unwrap();
        assert_eq!(
            (prepared.title.as_str(), &prepared.access),
            ("Update plan", &Access::None)
        );
        let (recorder, _output) = Recorder::new();
        let output = report(&Todo, input, &ctx, &recorder).await.unwrap();
        assert_eq!(
            output.for_model,
            "Plan updated: 3 steps (1 completed, 1 in progress, 1 pending)."
        );
        let [plan] = &recorder.plans()[..] else {
            panic!("one plan: {:?}", recorder.plans());
        };
        assert_eq!(
            plan[0],
            PlanEntry {
                content: "Read the code".into(),
                priority: "medium".into(),
                status: "completed".into()
            }
        );
        assert_eq!(
            (plan[1].priority.as_str(), plan[2].status.as_str()),
            ("high", "pending")
        );
    }

    #[tokio::test]
    async fn rejects_unknown_values_naming_the_item() {
        let (_dir, ctx) = workspace();
        let bad = json!({ "todos": [
            { "content": "ok", "status": "pending" },
            { "content": "x", "status": "done" },
        ]});
        let error = prepare(&Todo, bad, &ctx).await.err().unwrap();
        assert_eq!(
            error.0,
            "todo 2: unknown status `done` (use pending, in_progress, completed)"
        );
        let bad =
            json!({ "todos": [{ "content": "x", "status": "pending", "priority": "urgent" }] });
        assert!(
            prepare(&Todo, bad, &ctx)
                .await
                .err()
                .unwrap()
                .0
                .starts_with("todo 1: unknown priority")
        );
        let (recorder, _output) = Recorder::new();
        let empty = json!({ "todos": [] });
        report(&Todo, empty, &ctx, &recorder).await.unwrap();
        assert_eq!(recorder.plans(), [Vec::new()]);
    }
}
