//! `ask_user`: the model asks the user a question — free text, or a single or multiple choice
//! among options, with free text beside them or not — and waits for the answer.
//!
//! The field names follow Claude Code's `AskUserQuestion` and Gemini CLI's `ask_user`
//! (`question`, `options[].label`, `options[].description`, `multiSelect` as Hearth's snake
//! case `multi_select`). The question becomes a form (`question::Question`: a choice property
//! `answer`, a text property `other`) which the call's `User` carries to the client. Every
//! ending is said to the model: answered, declined, cancelled, or no way to ask — never a
//! silent default.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{About, Access, CallReport, Context, Kind, Output, Planned, Result, Tool, ToolError};
use crate::question::{Question, Reply};

pub struct AskUser;

/// The name the model calls it by.
pub const NAME: &str = "ask_user";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The question, complete and self-contained: the user sees nothing else.
    question: String,
    /// The choices; none for a free-text question.
    #[serde(default)]
    options: Vec<Choice>,
    /// Whether the user may pick several options. Default: false.
    #[serde(default)]
    multi_select: bool,
    /// Whether the user may answer in their own words beside the options. Default: true.
    allow_free_text: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Choice {
    /// What the user picks, short (1–5 words).
    label: String,
    /// What choosing it means, when the label does not say.
    description: Option<String>,
}

/// What the model is told `ask_user` does.
const DESCRIPTION: &str = "Ask the user a question and wait for the answer: to settle an \
    ambiguity, choose between approaches, or confirm something you must not guess. Give \
    `options` for a choice (`multi_select` for several); the user may also answer in their own \
    words unless `allow_free_text` is false. Ask only what you cannot find out yourself. The \
    result says if the user declined or could not be asked: then do not assume an answer.";

/// The form's properties: the pick and the free text.
const ANSWER: &str = "answer";
const OTHER: &str = "other";

impl Tool for AskUser {
    type Input = Input;
    type Plan = Question;

    async fn prepare(&self, input: Input, _ctx: &Context) -> Result<Planned<Question>> {
        let question = input.question.trim();
        if question.is_empty() {
            return Err(ToolError("`question` is empty".into()));
        }
        if input.options.iter().any(|o| o.label.trim().is_empty()) {
            return Err(ToolError("every option needs a `label`".into()));
        }
        let free_text = input.allow_free_text.unwrap_or(true);
        if input.options.is_empty() && !free_text {
            return Err(ToolError(
                "give `options`, or allow free text: the user must have a way to answer".into(),
            ));
        }
        let question = Question {
            tool_call_id: None,
            message: question.to_string(),
            schema: schema(&input.options, input.multi_select, free_text),
            asked_on: None,
        };
        let title = format!("Ask: {}", question.message);
        Ok(Planned::new(title, Vec::new(), Access::None, question))
    }

    async fn run(
        &self,
        question: Question,
        ctx: &Context,
        _report: &dyn CallReport,
    ) -> Result<Output> {
        let Some(user) = &ctx.user else {
            return Err(ToolError(cannot_ask("nobody is there to answer")));
        };
        match user.ask(question).await {
            Reply::Answered(answer) => {
                let said = said(&answer);
                Ok(Output {
                    for_model: format!("The user answered: {said}"),
                    content: vec![super::ToolContent::Text(said)],
                    raw_output: Some(Value::Object(answer)),
                    ..Output::default()
                })
            }
            Reply::Declined => Err(ToolError(
                "The user declined to answer. Do not assume an answer; go on without it or \
                 say what you need."
                    .into(),
            )),
            Reply::Cancelled => Err(ToolError(
                "The question was cancelled before the user answered.".into(),
            )),
            Reply::CannotAsk(why) => Err(ToolError(cannot_ask(&why))),
        }
    }

    fn about(&self) -> About {
        About::new(NAME, Kind::Think, DESCRIPTION)
    }
}

fn cannot_ask(why: &str) -> String {
    format!(
        "Could not ask the user: {why}. Do not assume an answer: put the question in your \
         reply instead."
    )
}

/// The form: a single or multiple choice `answer` among the options, and free text `other`
/// (required when there are no options; with options, either answers).
fn schema(options: &[Choice], multi_select: bool, free_text: bool) -> Value {
    let mut properties = Map::new();
    if !options.is_empty() {
        let consts: Vec<Value> = options
            .iter()
            .map(|o| {
                let label = o.label.trim();
                let title = match &o.description {
                    Some(d) if !d.trim().is_empty() => format!("{label} — {}", d.trim()),
                    _ => label.to_string(),
                };
                json!({"const": label, "title": title})
            })
            .collect();
        let answer = if multi_select {
            json!({"type": "array", "title": "Choose any", "items": {"anyOf": consts}})
        } else {
            json!({"type": "string", "title": "Choose one", "oneOf": consts})
        };
        properties.insert(ANSWER.into(), answer);
    }
    if free_text {
        let title = if options.is_empty() {
            "Your answer"
        } else {
            "Or answer in your own words"
        };
        properties.insert(OTHER.into(), json!({"type": "string", "title": title}));
    }
    let required: Vec<&str> = match (options.is_empty(), free_text) {
        (true, _) => vec![OTHER],
        (false, false) => vec![ANSWER],
        (false, true) => vec![],
    };
    json!({"type": "object", "properties": properties, "required": required})
}

/// The answer in words: the picks, then the user's own text.
fn said(answer: &Map<String, Value>) -> String {
    let mut parts: Vec<String> = match answer.get(ANSWER) {
        Some(Value::Array(picks)) => picks
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::String(pick)) => vec![pick.clone()],
        _ => Vec::new(),
    };
    if let Some(text) = answer.get(OTHER).and_then(Value::as_str)
        && !text.trim().is_empty()
    {
        parts.push(format!("\"{}\"", text.trim()));
    }
    if parts.is_empty() {
        "(nothing)".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(label: &str) -> Choice {
        Choice {
            label: label.into(),
            description: None,
        }
    }

    #[test]
    fn the_form_is_a_choice_with_free_text_beside_it() {
        let form = schema(&[choice("Rust"), choice("Go")], false, true);
        assert_eq!(
            form["properties"]["answer"]["oneOf"][1],
            json!({"const": "Go", "title": "Go"})
        );
        assert_eq!(form["properties"]["other"]["type"], "string");
        assert_eq!(form["required"], json!([]));
        let multi = schema(&[choice("a")], true, false);
        assert_eq!(multi["properties"]["answer"]["type"], "array");
        assert_eq!(multi["required"], json!(["answer"]));
        assert!(multi["properties"].get("other").is_none());
        let free = schema(&[], false, true);
        assert_eq!(free["required"], json!(["other"]));
    }

    #[tokio::test]
    async fn a_question_needs_text_and_a_way_to_answer() {
        let ctx = crate::tools::testing::context(std::path::Path::new("/"));
        let prepare = |input: Value| async {
            let input: Input = serde_json::from_value(input).unwrap();
            AskUser.prepare(input, &ctx).await.err().map(|e| e.0)
        };
        assert_eq!(
            prepare(json!({"question": " "})).await.as_deref(),
            Some("`question` is empty")
        );
        let no_way = json!({"question": "Which?", "allow_free_text": false});
        assert!(
            prepare(no_way)
                .await
                .unwrap()
                .contains("must have a way to answer")
        );
        let unlabelled = json!({"question": "Which?", "options": [{"label": ""}]});
        assert!(prepare(unlabelled).await.unwrap().contains("`label`"));
    }

    #[test]
    fn the_answer_reads_as_picks_then_words() {
        let answer = json!({"answer": ["a", "b"], "other": " and c "});
        assert_eq!(said(answer.as_object().unwrap()), "a, b, \"and c\"");
        assert_eq!(said(&Map::new()), "(nothing)");
    }
}
