// The npm check's host, run from a fresh project that installed hearth-acp from its tarballs:
// one session through the official ACP TypeScript SDK, either in-process over engine.stream()
// or against `npx hearth acp` spawned as a stdio agent.
//
//   node node-host.mjs in-process|stdio CONFIG_FILE
//
// Prints the answer's text, then `[stopReason]`. Exits non-zero unless the turn ended with end_turn.

import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Readable, Writable } from 'node:stream'

import * as acp from '@agentclientprotocol/sdk'

const [mode, configFile] = process.argv.slice(2)

async function connect() {
  if (mode === 'in-process') {
    const { Engine } = await import('hearth-acp')
    const engine = new Engine(JSON.parse(readFileSync(configFile, 'utf8')))
    return { stream: engine.stream(), stop: () => engine.close() }
  }
  if (mode === 'stdio') {
    // --no: never install anything; `hearth` must be the bin the installed package declares.
    const child = spawn('npx', ['--no', 'hearth', 'acp', '--config', configFile], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout))
    return {
      stream,
      // Closing stdin is how a stdio agent is told to stop; it must exit 0 on its own.
      stop: async () => {
        child.stdin.end()
        const { code, signal } = await exited
        if (code !== 0) throw new Error(`hearth acp exited with ${signal ?? code}`)
      },
    }
  }
  throw new Error(`usage: node node-host.mjs in-process|stdio CONFIG_FILE (got ${mode})`)
}

const { stream, stop } = await connect()
const connection = acp.client({ name: 'hearth-package-check' }).connect(stream)
let stopReason
try {
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'hearth-package-check', version: '0.0.0' },
  })
  stopReason = await connection.agent.buildSession(process.cwd()).withSession(async (session) => {
    session.prompt('Say hello.')
    for (;;) {
      const message = await session.nextUpdate()
      if (message.kind === 'stop') return message.stopReason
      const { update } = message
      if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
        process.stdout.write(update.content.text)
      }
    }
  })
  process.stdout.write(`\n[${stopReason}]\n`)
} finally {
  connection.close()
  await stop()
}
if (stopReason !== 'end_turn') process.exit(1)
