// engine.stream(): the { readable, writable } pair of message objects, and how it shares
// the engine with the raw callback.

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Engine } from './support/frames.mjs'

const memory = { dataDir: ':memory:' }
const initialize = (id) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: 1 } })

function open(t, onFrame) {
  const engine = new Engine(memory, onFrame)
  t.after(() => engine.close())
  return engine
}

test('the writable takes message objects and the readable yields parsed frames', async (t) => {
  const engine = open(t)
  const { readable, writable } = engine.stream()
  const writer = writable.getWriter()
  const reader = readable.getReader()
  await writer.write(initialize(7))
  const { value } = await reader.read()
  assert.equal(value.id, 7)
  assert.equal(value.result.protocolVersion, 1)
})

test('the readable closes when the engine closes, after every frame', async () => {
  const engine = new Engine(memory)
  const { readable, writable } = engine.stream()
  const writer = writable.getWriter()
  for (let id = 1; id <= 20; id++) await writer.write(initialize(id))
  const closed = engine.close()
  const ids = []
  for await (const message of readable) ids.push(message.id)
  await closed
  assert.deepEqual(ids, Array.from({ length: 20 }, (_, i) => i + 1))
  await assert.rejects(writer.write(initialize(99)), { code: 'ERR_HEARTH_CLOSED' })
})

test('stream() is for engines without onFrame, one open stream at a time', async (t) => {
  const withCallback = open(t, () => {})
  assert.throws(() => withCallback.stream(), /only available on an engine constructed without onFrame/)

  const engine = open(t)
  const first = engine.stream()
  assert.throws(() => engine.stream(), /already has an open stream/)
  await first.readable.cancel()

  // Once the reader has gone (as when an SDK connection ends), a new stream can be had.
  const second = engine.stream()
  const reader = second.readable.getReader()
  await second.writable.getWriter().write(initialize(1))
  assert.equal((await reader.read()).value.id, 1)

  await engine.close()
  assert.deepEqual(await reader.read(), { done: true, value: undefined })
  assert.throws(() => engine.stream(), { code: 'ERR_HEARTH_CLOSED' })
})
