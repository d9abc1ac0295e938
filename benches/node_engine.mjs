// node_engine.mjs — the `hearth-acp` package's public Engine over the release addon, for the
// Node drivers of every harness under benches/.
//
// run.sh (through build.sh) builds the release addon into target/bench/node and points
// NAPI_RS_NATIVE_LIBRARY_PATH at it; napi-rs's generated loader honours that variable, so the
// debug addon the Node tests load from bindings/node stays untouched.

import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

if (!process.env.NAPI_RS_NATIVE_LIBRARY_PATH) {
  // Without it the loader would silently pick up the debug addon in bindings/node.
  console.error('set NAPI_RS_NATIVE_LIBRARY_PATH to the release addon (run.sh does)')
  process.exit(2)
}

// The package directory, not its name: bindings/node is not installed anywhere, and this
// resolves through its package.json `main` like an installed package would.
const require = createRequire(import.meta.url)
export const { Engine } = require(fileURLToPath(new URL('../bindings/node', import.meta.url)))
