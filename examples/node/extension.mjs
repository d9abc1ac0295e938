// A VS Code extension, reduced to what touches Hearth: activate() starts the engine in the
// extension host's own process and connects the official ACP client to it through
// engine.stream(); deactivate() closes it. The `vscode` API is left out so this runs under
// plain node: `node extension.mjs "your prompt"` (see README.md).

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import * as acp from '@agentclientprotocol/sdk'
import { Engine } from 'hearth-acp'

let engine
let connection

/**
 * @param context the parts of `vscode.ExtensionContext` used here
 * @returns the extension's API: `ask(cwd, prompt, onText)`
 */
export async function activate(context) {
  // The provider (OPENAI_BASE_URL, OPENAI_API_KEY) and model (HEARTH_MODEL) come from the
  // environment; an extension could pass them here from its settings and secret storage.
  engine = new Engine({ dataDir: context.globalStorageUri.fsPath })
  connection = acp
    .client({ name: 'hearth-example' })
    .onRequest(acp.methods.client.session.requestPermission, () => {
      // A real extension asks the user (window.showQuickPick); this one allows nothing.
      return { outcome: { outcome: 'cancelled' } }
    })
    .connect(engine.stream())
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'hearth-example', version: '0.1.0' },
  })
  return { ask }
}

/** Runs one prompt in a new session in `cwd`, passing the answer's text on as it streams. */
async function ask(cwd, prompt, onText) {
  return connection.agent.buildSession(cwd).withSession(async (session) => {
    session.prompt(prompt)
    for (;;) {
      const message = await session.nextUpdate()
      if (message.kind === 'stop') return message.stopReason
      const { update } = message
      if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
        onText(update.content.text)
      }
    }
  })
}

export async function deactivate() {
  connection?.close()
  await engine?.close()
}

// Run directly: play the extension host for one prompt.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const prompt = process.argv[2] ?? 'Say hello.'
  const globalStorage = mkdtempSync(join(tmpdir(), 'hearth-example-'))
  const api = await activate({ globalStorageUri: { fsPath: globalStorage } })
  try {
    const stopReason = await api.ask(process.cwd(), prompt, (text) => process.stdout.write(text))
    process.stdout.write(`\n[${stopReason}]\n`)
  } finally {
    await deactivate()
    rmSync(globalStorage, { recursive: true, force: true })
  }
}
