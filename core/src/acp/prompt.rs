//! `session/prompt`: what a prompt may contain. The turn itself is `agent::run_turn`,
//! queued per session by `session::turns`; `session/cancel` is routed in `acp::dispatch`.

use agent_client_protocol_schema::v1::{ContentBlock, EmbeddedResourceResource, PromptRequest};

use super::SessionParams;
use crate::rpc::RpcError;

impl SessionParams for PromptRequest {
    fn session_id(&self) -> &str {
        &self.session_id.0
    }

    /// Text, resource links and embedded text resources are accepted (that is what
    /// `initialize` advertises); anything else is refused rather than silently dropped.
    fn validate(&self) -> Result<(), RpcError> {
        if self.prompt.is_empty() {
            return Err(RpcError::invalid_params(
                "`prompt` must contain at least one content block",
            ));
        }
        for (i, block) in self.prompt.iter().enumerate() {
            let refused = match block {
                ContentBlock::Text(_) | ContentBlock::ResourceLink(_) => None,
                ContentBlock::Resource(r) => match r.resource {
                    EmbeddedResourceResource::TextResourceContents(_) => None,
                    _ => Some("binary embedded resources are not supported"),
                },
                ContentBlock::Image(_) => {
                    Some("image content is not supported (promptCapabilities.image is false)")
                }
                ContentBlock::Audio(_) => {
                    Some("audio content is not supported (promptCapabilities.audio is false)")
                }
                _ => Some("this content type is not supported"),
            };
            if let Some(reason) = refused {
                return Err(RpcError::invalid_params(format!("`prompt[{i}]`: {reason}")));
            }
        }
        Ok(())
    }
}
