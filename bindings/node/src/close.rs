//! `close()` as a Promise. `Engine::close` blocks until turns are cancelled, the store is
//! flushed and the engine's threads are joined — up to a couple of seconds. Run on the JS
//! thread it would freeze the event loop (an editor's extension host) for that long, so it
//! runs as an N-API async work item on a libuv worker thread, and the Promise settles back on
//! the JS thread.

use std::sync::Arc;

use napi::bindgen_prelude::*;

pub struct CloseTask {
    pub engine: Arc<hearth_core::Engine>,
}

impl Task for CloseTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        // The only error `close` has is `CloseFromDeliver`, and this is a libuv worker, not
        // the delivery thread; should that ever change, the Promise rejects with the reason.
        self.engine
            .close()
            .map_err(|e| napi::Error::from_reason(e.to_string()))
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}
