// 100 sessions streaming at once into one engine: every session's chunks arrive complete and in
// order, and every prompt is answered once, after its session's last chunk.

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { Engine, FrameQueue, initialize, request } from './support/frames.mjs'
import { startMockLlm, testConfig } from './support/mock-llm.mjs'

const SESSIONS = 100
// Every session gets the same scripted answer (the mock serves its responses in turn).
const WORDS = Array.from({ length: 40 }, (_, i) => `w${i} `)

test('100 sessions stream at once with no chunk lost or reordered', async (t) => {
  const response = { events: WORDS.map((text) => ({ text })) }
  const mock = await startMockLlm({ responses: Array(SESSIONS).fill(response) })
  t.after(() => mock.stop())
  const frames = new FrameQueue()
  const engine = new Engine({ ...testConfig(mock.baseUrl), workerThreads: 2 }, frames.push)
  t.after(() => engine.close())

  engine.send(initialize(0))
  assert.equal((await frames.next()).id, 0)
  const sessions = []
  for (let id = 1; id <= SESSIONS; id++) {
    engine.send(request(id, 'session/new', { cwd: process.cwd(), mcpServers: [] }))
    let frame
    do frame = await frames.next()
    while (frame.id !== id)
    sessions.push(frame.result.sessionId)
  }
  const text = new Map(sessions.map((id) => [id, []]))
  const answers = new Map()
  const finished = new Set() // sessions whose prompt was answered
  sessions.forEach((sessionId, i) =>
    engine.send(request(1000 + i, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })),
  )
  while (answers.size < SESSIONS) {
    const frame = await frames.next(60_000)
    const update = frame.params?.update
    if (update?.sessionUpdate === 'agent_message_chunk') {
      assert.ok(!finished.has(frame.params.sessionId), 'no chunk after its prompt was answered')
      text.get(frame.params.sessionId).push(update.content.text)
    } else if (frame.id >= 1000) {
      assert.ok(!answers.has(frame.id), `request ${frame.id} answered once`)
      answers.set(frame.id, frame.result?.stopReason)
      const sessionId = sessions[frame.id - 1000]
      finished.add(sessionId)
      assert.equal(text.get(sessionId).join(''), WORDS.join(''), `session ${sessionId}: every chunk, in order`)
    }
  }
  assert.deepEqual([...new Set(answers.values())], ['end_turn'])
})
