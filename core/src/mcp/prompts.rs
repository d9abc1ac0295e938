//! MCP prompts: what a connected server offers the user as commands (listed once, when it
//! connects), and getting one with its arguments, its messages as text for the model.

use rmcp::RoleClient;
use rmcp::model::{GetPromptRequestParams, GetPromptResponse, JsonObject, Prompt as McpPromptInfo};
use rmcp::service::Peer;
use serde_json::Value;

use super::blocks::block_text;
use super::connect::service_error;

/// One prompt of one connected server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    pub server: String,
    pub name: String,
    pub description: Option<String>,
    /// Its arguments in the server's order, with whether each is required.
    pub arguments: Vec<(String, bool)>,
}

impl McpPrompt {
    pub(super) fn new(server: &str, info: &McpPromptInfo) -> Self {
        let arguments = info.arguments.iter().flatten();
        McpPrompt {
            server: server.to_string(),
            name: info.name.clone(),
            description: info.description.clone().or_else(|| info.title.clone()),
            arguments: arguments
                .map(|a| (a.name.clone(), a.required.unwrap_or(false)))
                .collect(),
        }
    }
}

/// `prompts/get`: the text of every message the server returns, one after the other.
pub(super) async fn get(
    peer: &Peer<RoleClient>,
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<String, String> {
    let mut params = GetPromptRequestParams::new(name);
    if !arguments.is_empty() {
        let object: JsonObject = arguments
            .into_iter()
            .map(|(name, value)| (name, Value::String(value)))
            .collect();
        params = params.with_arguments(object);
    }
    let result = match peer.get_prompt_once(params).await {
        Ok(GetPromptResponse::Complete(result)) => result,
        // Hearth's client answers no server requests (no sampling, elicitation or roots).
        Ok(_) => {
            return Err("the server asked for input Hearth cannot give".into());
        }
        Err(e) => return Err(service_error(&e)),
    };
    let texts: Vec<String> = result
        .messages
        .iter()
        .map(|message| block_text(&message.content))
        .collect();
    Ok(texts.join("\n\n"))
}
