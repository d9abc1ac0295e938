// Answers made inside send(): the native send returns them (no delivery thread, no event-loop
// wake-up) and the wrapper hands them to onFrame in a microtask. They must still arrive after
// send() returns, never overtake a frame the delivery thread posted before them, and be
// delivered exactly once.

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Engine, FrameQueue, initialize, request } from './support/frames.mjs'
import { startMockLlm, testConfig } from './support/mock-llm.mjs'

test('an answer made inside send() reaches onFrame after send() returns, before any later frame', async (t) => {
  const ids = []
  const engine = new Engine({ dataDir: ':memory:' }, (frame) => ids.push(JSON.parse(frame).id))
  t.after(() => engine.close())
  engine.send(initialize(1))
  engine.send(request(2, 'no/such_method', {}))
  assert.deepEqual(ids, [], 'nothing is delivered inside send()')
  await Promise.resolve()
  assert.deepEqual(ids, [1, 2], 'both answers arrive in the next microtask, in order')
})

const sessionUpdate = (frame) => frame.params?.update?.sessionUpdate

test('answers returned by send() keep their order with a streaming session', async (t) => {
  const words = Array.from({ length: 400 }, (_, i) => `w${i} `)
  const mock = await startMockLlm({ responses: [{ events: words.map((text) => ({ text })) }] })
  t.after(() => mock.stop())
  const frames = new FrameQueue()
  const engine = new Engine(testConfig(mock.baseUrl), frames.push)
  t.after(() => engine.close())
  const seen = []
  const until = async (id) => {
    for (;;) {
      const frame = await frames.next()
      seen.push(frame)
      if (frame.id === id) return frame
    }
  }
  engine.send(initialize(1))
  await until(1)
  engine.send(request(2, 'session/new', { cwd: process.cwd(), mcpServers: [] }))
  const { sessionId } = (await until(2)).result
  engine.send(request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] }))
  // One request at a time, each once the previous answer is in, racing the stream.
  let id = 100
  while (!seen.some((frame) => frame.id === 3)) {
    id += 1
    engine.send(request(id, 'session/list', {}))
    await until(id)
  }
  const answered = seen.filter((frame) => 'result' in frame || 'error' in frame).map((frame) => frame.id)
  const expected = [1, 2, 3, ...Array.from({ length: id - 100 }, (_, i) => 101 + i)]
  assert.deepEqual([...answered].sort((a, b) => a - b), expected, 'each request answered exactly once')
  const chunks = seen.filter((frame) => sessionUpdate(frame) === 'agent_message_chunk')
  assert.equal(chunks.map((frame) => frame.params.update.content.text).join(''), words.join(''))
  const lastChunk = seen.lastIndexOf(chunks.at(-1))
  assert.ok(seen.findIndex((frame) => frame.id === 3) > lastChunk, "the prompt's answer follows its updates")
})
