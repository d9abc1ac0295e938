//! The Node binding of Hearth: the engine's three calls (`start`, `send`, `close`) exposed to
//! JavaScript as the class `NativeEngine`. Everything a Node user expects on top of them —
//! config objects, a callback that may throw, Web streams for the official ACP SDK,
//! `Symbol.asyncDispose` — lives in the hand-written JS wrapper (`engine.js`), not here.

mod close;
mod engine;
mod error;
mod host;
