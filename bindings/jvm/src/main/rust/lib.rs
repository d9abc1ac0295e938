//! hearth-jvm — the JNI glue behind `dev.hearth.Engine`.
//!
//! Thin by design: the Java side hands over a config string and a `FrameListener`, then frames
//! go in through `send` and come back through the listener. The core owns every rule of the
//! engine's life (send from any thread, an idempotent close that is safe to race and refused
//! inside the listener, errors by code); this crate only converts between Java and Rust and
//! attaches the delivery thread to the JVM. No protocol logic lives here.
//!
//! - `exports` — the `native` methods of `dev.hearth.NativeEngine` and the handle they share;
//! - `listener` — the `Host` that calls the Java listener on the delivery thread;
//! - `daemon` — attaching that thread to the JVM once, as a daemon, until it ends;
//! - `errors` — how failures become Java exceptions.

mod daemon;
mod errors;
mod exports;
mod listener;
