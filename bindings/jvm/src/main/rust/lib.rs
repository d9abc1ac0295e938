//! hearth-jvm — the JNI glue behind `dev.hearth.Engine`.
//!
//! Thin by design (DESIGN.md, "The bindings"): the Java side hands over a config string and a
//! `FrameListener`, then frames go in through `send` and come back through the listener. No
//! protocol logic lives here.
//!
//! - `exports` — the `native` methods of `dev.hearth.NativeEngine` and the handle they share;
//! - `binding` — one engine's lifetime: send, a thread-safe idempotent close, release;
//! - `listener` — the `Host` that calls the Java listener on the delivery thread;
//! - `daemon` — attaching that thread to the JVM once, as a daemon, until it ends;
//! - `errors` — how failures become Java exceptions.

mod binding;
mod daemon;
mod errors;
mod exports;
mod listener;
