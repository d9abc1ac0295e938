// node_host.mjs — 100 sessions streaming at once into one in-process Node host: the
// `hearth-acp` package's public Engine over the release addon (see c_host.c for what is timed
// and checked; the same here, the frames parsed only as far as the check needs).
//
//   NAPI_RS_NATIVE_LIBRARY_PATH=/abs/hearth_node.node node node_host.mjs CONFIG_FILE SESSIONS WORDS RESULT_FILE

import { readFileSync, writeFileSync } from 'node:fs'
import { Engine } from '../node_engine.mjs'

const [configPath, sessionsArg, wordsArg, resultPath] = process.argv.slice(2)
const sessions = Number(sessionsArg)
const words = Number(wordsArg)
if (process.argv.length !== 6 || !Number.isInteger(sessions) || !Number.isInteger(words)) {
  console.error('usage: node node_host.mjs CONFIG_FILE SESSIONS WORDS RESULT_FILE')
  process.exit(2)
}

function fail(message) {
  console.error(`node_host: ${message}`)
  process.exit(1)
}

const ids = []
const index = new Map() // session id → its index
const nextWord = [] // the next word each session must receive; -1 once answered
let frames = 0
let answered = 0
let allCreated, allAnswered
const created = new Promise((resolve) => (allCreated = resolve))
const done = new Promise((resolve) => (allAnswered = resolve))

function onFrame(frame) {
  frames++
  const message = JSON.parse(frame)
  if (message.id >= 1000) {
    const session = message.id - 1000
    if (nextWord[session] !== words) fail(`session ${session} answered after ${nextWord[session]} of ${words} words`)
    nextWord[session] = -1
    if (++answered === sessions) allAnswered()
  } else if (message.id >= 100) {
    if (!message.result) fail(`session/new failed: ${frame}`)
    index.set(message.result.sessionId, message.id - 100)
    ids[message.id - 100] = message.result.sessionId
    nextWord[message.id - 100] = 0
    if (index.size === sessions) allCreated()
  } else if (message.params?.update?.sessionUpdate === 'agent_message_chunk') {
    const session = index.get(message.params.sessionId)
    if (session === undefined || nextWord[session] < 0) fail(`a chunk for no running prompt: ${frame}`)
    for (const word of message.params.update.content.text.split(' ').filter(Boolean)) {
      if (word !== `w${nextWord[session]}`) fail(`session ${session} got ${word}, expected w${nextWord[session]}`)
      nextWord[session]++
    }
  }
}

const request = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params })
const engine = new Engine(readFileSync(configPath, 'utf8'), onFrame)
engine.send(request(1, 'initialize', { protocolVersion: 1 }))
for (let i = 0; i < sessions; i++) engine.send(request(100 + i, 'session/new', { cwd: '/tmp', mcpServers: [] }))
await created
frames = 0
const start = process.hrtime.bigint()
for (let i = 0; i < sessions; i++) {
  engine.send(request(1000 + i, 'session/prompt', { sessionId: ids[i], prompt: [{ type: 'text', text: 'go' }] }))
}
await done
const elapsed = process.hrtime.bigint() - start
writeFileSync(resultPath, `${frames} ${elapsed}\n`)
await engine.close()
