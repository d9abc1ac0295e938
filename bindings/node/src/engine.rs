//! `NativeEngine`: the JS class over `hearth_core::Engine`.

use std::sync::Arc;

use hearth_core::{Config, EngineError};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::close::CloseTask;
use crate::error::{Result, to_js};
use crate::host::{Answer, JsHost};

/// The engine, frames in and frames out. Use the `Engine` class of `hearth-acp` instead:
/// this raw class does not guard against a throwing callback.
#[napi(js_name = "NativeEngine")]
pub struct NativeEngine {
    // Shared with a pending `close()` task, which may still run after this object is
    // garbage-collected.
    engine: Arc<hearth_core::Engine>,
    /// Where the engine's host leaves the answer `send` returns.
    answer: Arc<Answer>,
}

#[napi]
impl NativeEngine {
    /// Starts an engine. `onFrame` receives each outbound frame on the JS thread, in order,
    /// then `null` once the engine has closed — except the answers `send` returns. It must
    /// not throw.
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "configJson: string, onFrame: (frame: string | null) => void"
    )]
    pub fn new(config_json: String, on_frame: Function<Option<String>, ()>) -> Result<Self> {
        let config = Config::from_json(&config_json).map_err(|e| to_js(EngineError::from(e)))?;
        let (host, answer) =
            JsHost::new(on_frame).map_err(|e| Error::new(e.status.into(), e.reason))?;
        let engine = hearth_core::Engine::start(config, Arc::new(host)).map_err(to_js)?;
        Ok(NativeEngine {
            engine: Arc::new(engine),
            answer,
        })
    }

    /// Hands the engine one client frame. Never blocks; throws `ERR_HEARTH_CLOSED` once the
    /// engine is closed. Returns the answer when the engine made it right here with nothing
    /// ahead of it (a request served at once): it never reaches `onFrame`, and the caller
    /// must deliver it before any later `onFrame` call. Otherwise `null`.
    #[napi(catch_unwind)]
    pub fn send(&self, frame: String) -> Result<Option<String>> {
        self.engine.send(&frame).map_err(to_js)?;
        Ok(self.answer.take())
    }

    /// Closes the engine: cancels running turns, flushes the store, joins the engine's
    /// threads, then resolves. Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<CloseTask> {
        AsyncTask::new(CloseTask {
            engine: self.engine.clone(),
        })
    }
}
