//! ACP `systemPrompt` on `session/new`, `load` and `resume` (unstable): what the client adds
//! to Hearth's system prompt. Only `append` is advertised (`sessionCapabilities.systemPrompt:
//! {}`), so anything else is refused before a session is created or loaded, as the spec asks.

use agent_client_protocol_schema::v1::{ContentBlock, SystemPrompt, SystemPromptMode};

use crate::rpc::RpcError;

/// The text to append (the blocks joined with blank lines), `None` when the request has no
/// `systemPrompt`; -32602 for a mode other than `append`, no content, or a block that is not
/// text.
pub fn appended_text(prompt: Option<&SystemPrompt>) -> Result<Option<String>, RpcError> {
    let Some(prompt) = prompt else {
        return Ok(None);
    };
    if prompt.mode != SystemPromptMode::Append {
        let mode = serde_json::to_value(&prompt.mode).unwrap_or_default();
        return Err(RpcError::invalid_params(format!(
            "`systemPrompt.mode`: {mode} is not supported; this agent supports only \"append\""
        )));
    }
    if prompt.content.is_empty() {
        return Err(RpcError::invalid_params(
            "`systemPrompt.content` must not be empty",
        ));
    }
    let texts = prompt
        .content
        .iter()
        .enumerate()
        .map(|(i, block)| match block {
            ContentBlock::Text(text) => Ok(text.text.as_str()),
            _ => Err(RpcError::invalid_params(format!(
                "`systemPrompt.content[{i}]`: only `text` blocks are supported"
            ))),
        })
        .collect::<Result<Vec<&str>, RpcError>>()?;
    Ok(Some(texts.join("\n\n")))
}
