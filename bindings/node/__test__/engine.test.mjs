// The raw-frame API: new Engine(config, onFrame), send, close.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

import { Engine, FrameQueue, initialize, request } from './support/frames.mjs'

const memory = { dataDir: ':memory:' }

/** An in-memory engine that is closed when the test ends, pass or fail: an open engine
 * keeps the process alive, so a failed assertion must not leave one behind. */
function open(t, onFrame, options) {
  const engine = new Engine(memory, onFrame, options)
  t.after(() => engine.close())
  return engine
}

test('initialize round-trips as raw frames', async (t) => {
  const frames = new FrameQueue()
  const engine = open(t, frames.push)
  engine.send(initialize(1))
  const answer = await frames.next()
  assert.equal(answer.jsonrpc, '2.0')
  assert.equal(answer.id, 1)
  assert.equal(answer.result.protocolVersion, 1)
  assert.equal(answer.result.agentInfo.name, 'hearth')
})

test('the config may be given as JSON text', async (t) => {
  const frames = new FrameQueue()
  const engine = new Engine('{"dataDir": ":memory:", "workerThreads": 1}', frames.push)
  t.after(() => engine.close())
  engine.send(initialize('a'))
  assert.equal((await frames.next()).id, 'a')
})

test('frames arrive in the order the engine produced them', async (t) => {
  const frames = new FrameQueue()
  const engine = open(t, frames.push)
  engine.send(initialize(0))
  assert.equal((await frames.next()).id, 0)
  // Unknown methods are answered at once, in the order they were sent.
  for (let id = 1; id <= 200; id++) engine.send(request(id, 'no/such_method', {}))
  for (let id = 1; id <= 200; id++) {
    const answer = await frames.next()
    assert.equal(answer.id, id)
    assert.equal(answer.error.code, -32601)
  }
})

test('close() resolves only after every frame produced before it was delivered', async () => {
  const seen = []
  const engine = new Engine(memory, (frame) => seen.push(JSON.parse(frame).id))
  for (let id = 1; id <= 100; id++) engine.send(request(id, 'no/such_method', {}))
  await engine.close()
  assert.deepEqual(seen, Array.from({ length: 100 }, (_, i) => i + 1))
})

test('send() may be called from inside the callback', async (t) => {
  const frames = new FrameQueue()
  const engine = open(t, (frame) => {
    frames.push(frame)
    if (JSON.parse(frame).id === 1) engine.send(initialize(2))
  })
  engine.send(initialize(1))
  assert.equal((await frames.next()).id, 1)
  assert.equal((await frames.next()).id, 2)
})

test('close() may be called from inside the callback', async () => {
  let closeFromCallback
  const closing = new Promise((resolve) => (closeFromCallback = resolve))
  const ids = []
  const engine = new Engine(memory, (frame) => {
    ids.push(JSON.parse(frame).id)
    if (ids.length === 1) closeFromCallback(engine.close())
  })
  for (let id = 1; id <= 3; id++) engine.send(initialize(id))
  await closing
  // The frames queued before close() still arrive.
  assert.deepEqual(ids, [1, 2, 3])
  assert.throws(() => engine.send(initialize(4)), { code: 'ERR_HEARTH_CLOSED' })
})

test('a throwing callback does not kill the process and later frames still arrive', async () => {
  const reported = []
  const ids = []
  const engine = new Engine(
    memory,
    (frame) => {
      const { id } = JSON.parse(frame)
      ids.push(id)
      throw new Error(`callback failed on frame ${id}`)
    },
    { onError: (error) => reported.push(error.message) },
  )
  engine.send(initialize(1))
  engine.send(request(2, 'no/such_method', {}))
  engine.send(initialize(3))
  await engine.close()
  assert.deepEqual(ids, [1, 2, 3])
  assert.deepEqual(reported, [
    'callback failed on frame 1',
    'callback failed on frame 2',
    'callback failed on frame 3',
  ])
})

test('after close() resolves, the store is flushed: a new engine on the same dataDir sees the session', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-node-store-'))
  const cwd = mkdtempSync(join(tmpdir(), 'hearth-node-cwd-'))
  t.after(() => [dataDir, cwd].forEach((dir) => rmSync(dir, { recursive: true, force: true })))
  // session/new wants a credential; nothing here reaches a model.
  const config = { dataDir, providers: { openai: { apiKey: 'unused' } } }
  const first = new FrameQueue()
  const writer = new Engine(config, first.push)
  let sessionId
  try {
    writer.send(initialize(1))
    await first.next()
    writer.send(request(2, 'session/new', { cwd, mcpServers: [] }))
    sessionId = (await first.next()).result.sessionId
  } finally {
    await writer.close()
  }

  const second = new FrameQueue()
  const reader = new Engine(config, second.push)
  try {
    reader.send(initialize(1))
    await second.next()
    reader.send(request(2, 'session/list', {}))
    const { sessions } = (await second.next()).result
    assert.deepEqual(
      sessions.map((s) => [s.sessionId, s.cwd]),
      [[sessionId, cwd]],
    )
  } finally {
    await reader.close()
  }
})

test('send() after close() throws a clear Error', async () => {
  const engine = new Engine(memory, () => {})
  await engine.close()
  assert.throws(() => engine.send(initialize(1)), {
    name: 'Error',
    code: 'ERR_HEARTH_CLOSED',
    message: 'the engine is closed',
  })
})

test('close() is idempotent, and Symbol.asyncDispose closes', async () => {
  const engine = new Engine(memory, () => {})
  const first = engine.close()
  assert.equal(engine.close(), first)
  await first
  await engine.close()
  await engine[Symbol.asyncDispose]()

  const disposed = new Engine(memory, () => {})
  await disposed[Symbol.asyncDispose]()
  assert.throws(() => disposed.send(initialize(1)), { code: 'ERR_HEARTH_CLOSED' })
})

test('a bad config throws an Error that names the key', () => {
  assert.throws(() => new Engine({ dataDir: ':memory:', bogusKey: 1 }, () => {}), (error) => {
    assert.ok(error instanceof Error)
    assert.equal(error.code, 'ERR_HEARTH_CONFIG')
    assert.match(error.message, /`bogusKey`/)
    return true
  })
  assert.throws(() => new Engine({ providers: { openai: { baseURL: 'http://x' } } }, () => {}), {
    code: 'ERR_HEARTH_CONFIG',
    message: /`providers\.openai\.baseURL`/,
  })
  assert.throws(() => new Engine({ workerThreads: 'two' }, () => {}), {
    code: 'ERR_HEARTH_CONFIG',
    message: /`workerThreads`/,
  })
  assert.throws(() => new Engine('{"dataDir": ', () => {}), { code: 'ERR_HEARTH_CONFIG' })
})

test('a store that cannot be opened throws ERR_HEARTH_STORE', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-node-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const notADirectory = join(dir, 'file')
  writeFileSync(notADirectory, '')
  assert.throws(() => new Engine({ dataDir: notADirectory }, () => {}), { code: 'ERR_HEARTH_STORE' })
})

test('wrong argument types are TypeErrors', (t) => {
  assert.throws(() => new Engine(42, () => {}), TypeError)
  assert.throws(() => new Engine(memory, 'not a function'), TypeError)
  const engine = open(t, () => {})
  assert.throws(() => engine.send({ jsonrpc: '2.0' }), TypeError)
})
