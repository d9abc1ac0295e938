// The extension's Hearth wiring, without VS Code: one engine in the extension host's process,
// the official ACP client connected to it over engine.stream(), one session per question.
// extension.ts hands in what VS Code provides (the storage path, the key from SecretStorage,
// a quick pick); test/chat.test.ts drives the same code against the real engine.
//
// The extension is CommonJS, as the extension hosts of every VS Code this supports load it;
// the official SDK is an ES module, so it comes in through import() (types statically).

import type * as Acp from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' }
import { Engine, type Config } from 'hearth-acp'

import { permissionChoices, permissionResponse, permissionTitle, type PermissionChoice } from './permissions.js'

export interface ChatOptions {
  /** Where Hearth keeps its sessions: the extension's globalStorageUri. */
  dataDir: string
  /** The provider's key, read from SecretStorage by the caller. */
  apiKey: string
  /** An OpenAI-compatible endpoint; Hearth's default (OpenAI) when empty. */
  baseUrl?: string
  model?: string
  /** Shows the choices (a quick pick in VS Code); resolves with the pick, or undefined if dismissed. */
  pick: (title: string, choices: PermissionChoice[]) => Promise<PermissionChoice | undefined>
}

/** Builds Hearth's config from the extension's settings: the key goes in the config, never the environment. */
export function hearthConfig(options: Pick<ChatOptions, 'dataDir' | 'apiKey' | 'baseUrl' | 'model'>): Config {
  return {
    dataDir: options.dataDir,
    providers: { openai: { apiKey: options.apiKey, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) } },
    ...(options.model ? { model: options.model } : {}),
  }
}

type Connection = ReturnType<ReturnType<typeof Acp.client>['connect']>

export class HearthChat {
  readonly #engine: Engine
  readonly #connection: Connection

  private constructor(engine: Engine, connection: Connection) {
    this.#engine = engine
    this.#connection = connection
  }

  /** Starts the engine in this process and initializes the ACP connection to it. */
  static async start(options: ChatOptions): Promise<HearthChat> {
    const acp = await import('@agentclientprotocol/sdk')
    const engine = new Engine(hearthConfig(options))
    const connection = acp
      .client({ name: 'hearth-vscode-example' })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) =>
        permissionResponse(await options.pick(permissionTitle(params), permissionChoices(params))),
      )
      .connect(engine.stream())
    try {
      await connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        // Hearth then reads and writes the workspace itself, asking before each edit.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'hearth-vscode-example', version: '0.1.0' },
      })
    } catch (error) {
      connection.close()
      await engine.close()
      throw error
    }
    return new HearthChat(engine, connection)
  }

  /** Asks in a new session rooted at `cwd`; `onText` gets the answer as it streams. Resolves with the stop reason. */
  async ask(cwd: string, prompt: string, onText: (text: string) => void): Promise<string> {
    return this.#connection.agent.buildSession(cwd).withSession(async (session) => {
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

  /** deactivate(): cancels turns, flushes the sessions to disk, stops the engine's threads. */
  async dispose(): Promise<void> {
    this.#connection.close()
    await this.#engine.close()
  }
}
