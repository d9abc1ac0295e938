//! What both wire dialects share: the driver that plays a scripted response into a body,
//! and the merged view of the events that non-streamed replies are built from.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;
use futures::channel::mpsc;
use hyper::StatusCode;
use hyper::body::Frame;
use serde_json::Value;

use crate::script::{CitedText, Event, Finish, Response, ServerSearch, ToolCall, Usage};

/// The sending half of a response body.
pub(crate) type BodySender = mpsc::Sender<io::Result<Frame<Bytes>>>;

/// Streamed output is batched up to this size, so long `repeat`s are written in few large
/// writes (fast) without ever holding the whole stream in memory.
const BATCH: usize = 16 * 1024;

/// One API's rendering. The streaming methods append SSE text to `out`.
pub(crate) trait Dialect: Send {
    fn error_body(&self, status: StatusCode, message: &str) -> Value;
    /// The whole non-streamed reply.
    fn message(&self, blocks: &[Block], finish: Finish, usage: Option<Usage>) -> Value;
    fn open(&mut self, usage: Option<Usage>, out: &mut String);
    fn text(&mut self, text: &str, out: &mut String);
    fn reasoning(&mut self, text: &str, signature: Option<&str>, out: &mut String);
    fn redacted_thinking(&mut self, data: &str, out: &mut String);
    fn tool_call(&mut self, call: &ToolCall, index: u32, out: &mut String);
    fn server_search(&mut self, search: &ServerSearch, out: &mut String);
    fn cited_text(&mut self, cited: &CitedText, out: &mut String);
    fn close(&mut self, finish: Finish, usage: Option<Usage>, out: &mut String);
}

/// Consecutive events of one kind, merged: a content block of a non-streamed reply.
pub(crate) enum Block<'a> {
    Text(String),
    Thinking {
        text: String,
        signature: Option<&'a str>,
    },
    RedactedThinking(&'a str),
    ToolCall(&'a ToolCall),
    ServerSearch(&'a ServerSearch),
    CitedText(&'a CitedText),
}

pub(crate) fn blocks(events: &[Event]) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    for event in events {
        match event {
            Event::Text(text) => push_text(&mut blocks, text),
            Event::Repeat(repeat) => {
                for _ in 0..repeat.count {
                    push_text(&mut blocks, &repeat.text);
                }
            }
            Event::Reasoning { text, signature } => match blocks.last_mut() {
                Some(Block::Thinking {
                    text: merged,
                    signature: last,
                }) => {
                    merged.push_str(text);
                    *last = signature.as_deref().or(*last);
                }
                _ => blocks.push(Block::Thinking {
                    text: text.clone(),
                    signature: signature.as_deref(),
                }),
            },
            Event::RedactedThinking(data) => blocks.push(Block::RedactedThinking(data)),
            Event::ToolCall(call) => blocks.push(Block::ToolCall(call)),
            Event::ServerSearch(search) => blocks.push(Block::ServerSearch(search)),
            Event::CitedText(cited) => blocks.push(Block::CitedText(cited)),
            Event::Usage(_) | Event::StallMs(_) => {}
        }
    }
    blocks
}

fn push_text(blocks: &mut Vec<Block>, text: &str) {
    match blocks.last_mut() {
        Some(Block::Text(merged)) => merged.push_str(text),
        _ => blocks.push(Block::Text(text.to_owned())),
    }
}

/// Plays `response` as an SSE stream. Stops early (`Err`) once the client has gone.
pub(crate) async fn stream(
    mut dialect: Box<dyn Dialect>,
    response: Response,
    mut tx: BodySender,
) -> Result<(), mpsc::SendError> {
    let usage = response.usage();
    let mut out = String::new();
    dialect.open(usage, &mut out);
    let mut tool_calls = 0;
    for event in &response.events {
        match event {
            Event::Text(text) => dialect.text(text, &mut out),
            Event::Reasoning { text, signature } => {
                dialect.reasoning(text, signature.as_deref(), &mut out)
            }
            Event::RedactedThinking(data) => dialect.redacted_thinking(data, &mut out),
            Event::ServerSearch(search) => dialect.server_search(search, &mut out),
            Event::CitedText(cited) => dialect.cited_text(cited, &mut out),
            Event::ToolCall(call) => {
                dialect.tool_call(call, call.index.unwrap_or(tool_calls), &mut out);
                tool_calls += 1;
            }
            Event::StallMs(ms) => {
                // Whatever precedes a stall must reach the client before it.
                send(&mut tx, &mut out).await?;
                tokio::time::sleep(Duration::from_millis(*ms)).await;
            }
            Event::Repeat(repeat) if repeat.count > 0 => {
                // The first delta may open a block; every later one renders to the same
                // bytes, so it is rendered once and copied, to go as fast as memcpy.
                dialect.text(&repeat.text, &mut out);
                let mut again = String::new();
                dialect.text(&repeat.text, &mut again);
                for _ in 1..repeat.count {
                    out.push_str(&again);
                    if out.len() >= BATCH {
                        send(&mut tx, &mut out).await?;
                    }
                }
            }
            // Usage goes where each API puts it, at the ends; an empty repeat sends nothing.
            Event::Usage(_) | Event::Repeat(_) => {}
        }
    }
    if response.truncate {
        send(&mut tx, &mut out).await?;
        return abort(&mut tx).await;
    }
    dialect.close(response.finish_reason(), usage, &mut out);
    send(&mut tx, &mut out).await
}

/// Sends `response` as one JSON document. Stalls still delay it, and `truncate` cuts it in
/// half, so clients' non-streaming paths can meet slow and broken bodies too.
pub(crate) async fn complete(
    dialect: Box<dyn Dialect>,
    response: Response,
    mut tx: BodySender,
) -> Result<(), mpsc::SendError> {
    let message = dialect.message(
        &blocks(&response.events),
        response.finish_reason(),
        response.usage(),
    );
    let body = Bytes::from(message.to_string());
    for event in &response.events {
        if let Event::StallMs(ms) = event {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
        }
    }
    if response.truncate {
        tx.send(Ok(Frame::data(body.slice(..body.len() / 2))))
            .await?;
        return abort(&mut tx).await;
    }
    tx.send(Ok(Frame::data(body))).await
}

async fn send(tx: &mut BodySender, out: &mut String) -> Result<(), mpsc::SendError> {
    if out.is_empty() {
        return Ok(());
    }
    let chunk = Bytes::from(std::mem::take(out));
    tx.send(Ok(Frame::data(chunk))).await
}

/// A body error makes hyper drop the connection without the chunked terminator, which is
/// exactly what a client sees when a real stream dies halfway.
async fn abort(tx: &mut BodySender) -> Result<(), mpsc::SendError> {
    tx.send(Err(io::Error::other("mock-llm: truncated by script")))
        .await
}
