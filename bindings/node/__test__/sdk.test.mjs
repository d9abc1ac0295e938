// The official TypeScript SDK (@agentclientprotocol/sdk 2.4.0) drives a whole session
// in-process through engine.stream(), against the scripted mock LLM.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'

import * as acp from '@agentclientprotocol/sdk'

import { Engine } from './support/frames.mjs'
import { startMockLlm, testConfig } from './support/mock-llm.mjs'

let mock
before(async () => {
  mock = await startMockLlm({
    responses: [
      { events: [{ text: 'Hello' }, { text: ' from' }, { text: ' the mock' }], finish: 'stop' },
      // Keeps the second prompt in flight until it is cancelled.
      { events: [{ text: 'Thinking it over' }, { stallMs: 60_000 }, { text: 'too late' }] },
    ],
  })
})
after(() => mock?.stop())

/** Reads a session's updates until its prompt stops: the text streamed, and the stop. */
async function readTurn(session, onText = () => {}) {
  const chunks = []
  for (;;) {
    const message = await session.nextUpdate()
    if (message.kind === 'stop') return { chunks, stopReason: message.stopReason }
    const { update } = message
    if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
      chunks.push(update.content.text)
      onText(update.content.text)
    }
  }
}

test('the official ACP client runs a session: initialize, new, streamed prompt, cancel', async (t) => {
  const engine = new Engine(testConfig(mock.baseUrl))
  t.after(() => engine.close())
  const cwd = mkdtempSync(join(tmpdir(), 'hearth-node-sdk-'))
  t.after(() => rmSync(cwd, { recursive: true, force: true }))

  await acp.client({ name: 'hearth-node-test' }).connectWith(engine.stream(), async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'hearth-node-test', version: '0.0.0' },
    })
    assert.equal(init.protocolVersion, 1)
    assert.equal(init.agentInfo.name, 'hearth')

    await agent.buildSession(cwd).withSession(async (session) => {
      assert.match(session.sessionId, /\S/)

      const answered = session.prompt('Say hello')
      const turn = await readTurn(session)
      // Deltas already waiting are merged into one chunk, so only the text is fixed.
      assert.equal(turn.chunks.join(''), 'Hello from the mock')
      assert.equal(turn.stopReason, 'end_turn')
      assert.equal((await answered).stopReason, 'end_turn')

      // The second turn stalls after its first chunk; cancel it as soon as that arrives.
      let cancelSent = null
      session.prompt('Think for a long time')
      const cancelled = await readTurn(session, () => {
        cancelSent ??= agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId })
      })
      await cancelSent
      assert.deepEqual(cancelled.chunks, ['Thinking it over'])
      assert.equal(cancelled.stopReason, 'cancelled')
    })
  })

  // The mock saw both model requests, each carrying its prompt.
  const requests = await (await fetch(`${mock.url}/_mock/requests`)).json()
  assert.equal(requests.length, 2)
  assert.match(JSON.stringify(requests[0].body.messages), /Say hello/)
  assert.match(JSON.stringify(requests[1].body.messages), /Think for a long time/)
})
