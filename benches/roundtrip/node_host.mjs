// node_host.mjs — the in-process Node host: the `hearth-acp` package (bindings/node, its
// public Engine class) over the release addon, sequential round trips of one method.
//
//   NAPI_RS_NATIVE_LIBRARY_PATH=/abs/hearth_node.node node node_host.mjs REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD
//
// The command line, the requests and what is timed are those of every driver (bench.h). The
// release addon is loaded through ../node_engine.mjs.
//
// The response reaches JS the way it reaches any Node host: the engine's delivery thread
// queues it on a threadsafe function, libuv wakes the event loop, onFrame runs on the JS
// thread and resolves the Promise the request is awaiting. The clock stops when `await`
// resumes, so the figure includes that microtask hop, as it would for real code.

import { readFileSync, writeFileSync } from 'node:fs'
import { Engine } from '../node_engine.mjs'

const [requests, warmup] = process.argv.slice(2, 4).map(Number)
const [samplesPath, configPath, method] = process.argv.slice(4, 7)
// The params of each method a driver can time (bench.h says why these two).
const PARAMS = {
  initialize: '{"protocolVersion":1,"clientCapabilities":{}}',
  'session/list': '{}',
}
if (process.argv.length !== 7 || !Number.isInteger(requests) || !Number.isInteger(warmup) || !(method in PARAMS)) {
  console.error('usage: node node_host.mjs REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE initialize|session/list')
  process.exit(2)
}

// Same check as ../common.h's response_id: a prefix, no JSON parser, so no host pays for one.
const PREFIX = '{"jsonrpc":"2.0","id":'
function responseId(frame) {
  if (!frame.startsWith(PREFIX)) return -1
  const comma = frame.indexOf(',', PREFIX.length)
  if (comma < 0 || !frame.startsWith(',"result":', comma)) return -1
  const id = Number(frame.slice(PREFIX.length, comma))
  return Number.isInteger(id) ? id : -1
}

let waiting = null // { id, resolve } of the request in flight
const engine = new Engine(readFileSync(configPath, 'utf8'), (frame) => {
  if (waiting === null || responseId(frame) !== waiting.id) {
    console.error(`node_host: unexpected frame: ${frame}`)
    process.exit(1)
  }
  const { resolve } = waiting
  waiting = null
  resolve()
})

function request(id, name = method) {
  return `{"jsonrpc":"2.0","id":${id},"method":"${name}","params":${PARAMS[name]}}`
}

function roundTrip(id, frame) {
  const answered = new Promise((resolve) => (waiting = { id, resolve }))
  engine.send(frame)
  return answered
}

// The engine answers nothing before `initialize`: one first, untimed, whatever the method.
await roundTrip(1, request(1, 'initialize'))
let id = 2
for (let i = 0; i < warmup; i++, id++) await roundTrip(id, request(id))
const samples = new Array(requests)
for (let i = 0; i < requests; i++, id++) {
  const frame = request(id) // built before the clock starts
  const start = process.hrtime.bigint()
  await roundTrip(id, frame)
  samples[i] = process.hrtime.bigint() - start
}
writeFileSync(samplesPath, samples.join('\n') + '\n')
await engine.close()
