// node_host.mjs — the in-process Node host of the throughput harness: the `hearth-acp`
// package (bindings/node, its public Engine class) over the release addon, one engine on a
// copy of the prepared data directory, one `session/load` whose replayed `session/update`
// frames are counted (see README.md).
//
//   NAPI_RS_NATIVE_LIBRARY_PATH=/abs/hearth_node.node node node_host.mjs CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE
//
// onFrame does what every driver's callback does and no more: a prefix check and a count, and
// for a response, the clock. It runs on the JS thread, where every Node host receives frames.
// Writes `FRAMES ELAPSED_NS DELIVERY_CPU_NS MAIN_CPU_NS` to RESULT_FILE, like every driver.
// PAUSE_MS > 0 is the drained mode: the first frame's callback blocks the JS thread that long,
// so the rest of the replay queues up on the threadsafe function meanwhile, and the clock
// starts when it resumes.

import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { Engine } from '../node_engine.mjs'

const [configPath, sessionId, pause, resultPath] = process.argv.slice(2)
const pauseMs = Number(pause)
if (process.argv.length !== 6 || !Number.isInteger(pauseMs)) {
  console.error('usage: node node_host.mjs CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE')
  process.exit(2)
}

const UPDATE = '{"jsonrpc":"2.0","method":"session/update",'
let updates = 0
let resumed = null // drained mode: when the first frame's pause ended
let waiting = null // { prefix, resolve } of the request in flight

const engine = new Engine(readFileSync(configPath, 'utf8'), (frame) => {
  if (frame.startsWith(UPDATE)) {
    if (updates++ === 0 && pauseMs > 0) {
      // A synchronous sleep: the JS thread must not run, or it would drain the queue.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs)
      resumed = process.hrtime.bigint()
    }
  } else if (waiting !== null && frame.startsWith(waiting.prefix)) {
    const { resolve } = waiting
    waiting = null
    resolve(process.hrtime.bigint())
  } else {
    console.error(`node_host: unexpected frame: ${frame}`)
    process.exit(1)
  }
})

// On-CPU nanoseconds so far of the engine's delivery thread and of the main (JS) thread, from
// the kernel's per-thread accounting (/proc/self/task/TID/schedstat).
function threadCpu() {
  const cpu = { delivery: 0n, main: 0n }
  for (const tid of readdirSync('/proc/self/task')) {
    const read = (name) => readFileSync(`/proc/self/task/${tid}/${name}`, 'utf8')
    const ns = BigInt(read('schedstat').split(' ')[0])
    if (Number(tid) === process.pid) cpu.main += ns
    else if (read('comm').trimEnd() === 'hearth-delivery') cpu.delivery += ns
  }
  return cpu
}

// Sends request `id`; resolves to the time its response arrived.
function call(id, method, params) {
  const answered = new Promise((resolve) => {
    waiting = { prefix: `{"jsonrpc":"2.0","id":${id},"result":`, resolve }
  })
  engine.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
  return answered
}

await call(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
const before = threadCpu()
const started = process.hrtime.bigint()
const answered = await call(2, 'session/load', { sessionId, cwd: '/tmp', mcpServers: [] })
const after = threadCpu()
const cpu = `${after.delivery - before.delivery} ${after.main - before.main}`
writeFileSync(resultPath, `${updates} ${answered - (resumed ?? started)} ${cpu}\n`)
await engine.close()
