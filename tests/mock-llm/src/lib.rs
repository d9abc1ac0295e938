//! A scripted mock LLM: a real HTTP server on 127.0.0.1 that speaks OpenAI chat-completions
//! and Anthropic Messages (streamed and not), answering each model request with the next
//! scripted response and recording what it was sent. See README.md for the script format.

mod anthropic;
mod dialect;
mod openai;
mod routes;
mod script;
mod server;

pub use routes::RecordedRequest;
pub use script::{Event, Finish, Repeat, Response, Script, ToolCall, Usage, When};
pub use server::MockLlm;
