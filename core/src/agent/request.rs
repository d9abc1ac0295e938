//! A model request from a session: its system prompt (fixed for as long as its context is not
//! rewritten), its tools, and its context in memory — so that each request of a session
//! begins with exactly the previous one, and building it copies no conversation.
//!
//! The messages are the history's `Arc`, not a copy — those not yet encoded: the older ones
//! the request finds encoded in the session's wire cache, unless it goes to another provider,
//! which first reads them back from the log (`Session::recall`). The system prompt is
//! rendered at the session's first request and kept (`History::system`) until its inputs
//! change (the client's `systemPrompt`, the roots on `load`/`resume`) or a compaction. Both providers put `messages`
//! last in the body, so request n+1 is request n with messages appended, byte for byte, and
//! `llm/wire.rs` encodes only what is new (the engine's time per step at ~100 and ~3,000
//! messages: `benches/README.md`). Anthropic requests carry three cache breakpoints
//! (`llm/anthropic.rs`): the system prompt's, and a rolling pair on the two newest user turns,
//! spliced into the turns the wire cache keeps (`WireCache::turns`).
//! The provider's token counts, cached and uncached, reach the client in `usage_update`'s
//! `_meta.hearth` (`agent/stream.rs`). A Claude session with no search backend of its own is
//! offered Anthropic's server-side search beside its tools (`hosted_search`).

use std::sync::Arc;

use crate::chat::Message;
use crate::config::{AnthropicSearch, ProviderName};
use crate::llm::ChatRequest;
use crate::llm::wire::{Dialect, SharedWire};
use crate::session::Session;
use crate::store::StoreError;
use crate::tools::WEB_SEARCH;

/// The model's window when the catalog does not say.
const DEFAULT_WINDOW: u64 = 128_000;

/// The turn's next request to `provider`, and the weight of its messages (to match the
/// provider's count of its prompt against).
pub async fn next(
    session: &Session,
    provider: ProviderName,
) -> Result<(ChatRequest, usize), StoreError> {
    let images = session.ctx().model_sees(&session.state().settings.model);
    if !session.history().encodes_for(Dialect { provider, images }) {
        // Another provider's encoding, or one with images for a model without vision (or
        // notes for one with): this one encodes every message anew.
        session.recall().await?;
    }
    let (context, weight, wire) = {
        let history = session.history();
        (history.kept(), history.weight(), history.wire())
    };
    Ok((build(session, context, wire), weight))
}

/// A request with the session's model, settings, system prompt and tools, of a context whose
/// first `earlier` messages `wire` holds the encoding of, then `messages`.
pub fn build(
    session: &Session,
    (earlier, messages): (usize, Arc<Vec<Message>>),
    wire: SharedWire,
) -> ChatRequest {
    let settings = session.state().settings.clone();
    let thinks = session.ctx().model_thinks(&settings.model);
    let hosted_search = hosted_search(session, &settings.model);
    let images = session.ctx().model_sees(&settings.model);
    ChatRequest {
        thought_level: thinks.then_some(settings.thought_level),
        model: settings.model,
        system: system(session),
        earlier,
        // Images the conversation has from before a switch to a model without vision.
        messages: if images {
            messages
        } else {
            crate::chat::without_images(messages)
        },
        tools: session.tool_specs(),
        hosted_search,
        wire,
        images,
    }
}

/// Anthropic's own web search, for a session whose model is Claude when the user configured
/// no backend (`Config::hosted_search`) and the session may search (a subagent's type may
/// leave `web_search` out).
fn hosted_search(session: &Session, model: &str) -> Option<AnthropicSearch> {
    let ctx = session.ctx();
    let claude = ctx
        .model(model)
        .is_some_and(|m| m.provider == ProviderName::Anthropic);
    let allowed = claude && session.services().allows(WEB_SEARCH);
    allowed.then(|| ctx.config().hosted_search().cloned())?
}

/// The session's system prompt: rendered for its first request (its MCP servers are ready
/// by then) and again after a compaction, the same bytes in between.
pub fn system(session: &Session) -> Arc<str> {
    if let Some(system) = session.child_system() {
        return system;
    }
    if let Some(system) = session.history().system() {
        return system;
    }
    let system: Arc<str> = super::system_prompt::system_prompt(session).into();
    session.history().fix_system(system.clone());
    system
}

/// The bytes of what every request carries besides the conversation: the system prompt and
/// the tools' descriptions and schemas.
pub fn fixed_bytes(session: &Session) -> usize {
    let tools: usize = session
        .tool_specs()
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum();
    system(session).len() + tools
}

pub fn context_window(session: &Session) -> u64 {
    let model = session.state().settings.model.clone();
    session
        .ctx()
        .model(&model)
        .map_or(DEFAULT_WINDOW, |m| m.context_window)
}
