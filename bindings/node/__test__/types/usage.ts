// Compiled, never run (`npm run typecheck`): engine.d.ts must describe how the package is
// used, including handing engine.stream() to the official SDK without casts.

import * as acp from '@agentclientprotocol/sdk'

import { Engine, type Config, type EngineError, type JsonRpcMessage } from 'hearth-acp'

const config: Config = { dataDir: ':memory:', providers: { openai: { baseUrl: 'http://127.0.0.1:1/v1' } } }

export async function rawFrames(): Promise<void> {
  const engine = new Engine(config, (frame: string) => console.log(frame.length), {
    onError: (error: unknown) => console.error(error),
  })
  engine.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
  await engine.close()
  await engine[Symbol.asyncDispose]()
  new Engine(JSON.stringify(config), () => {})
  // @ts-expect-error unknown config keys are rejected at compile time too
  new Engine({ dataDirectory: '/tmp' })
}

export async function withTheSdk(): Promise<string> {
  const engine = new Engine(config)
  const result = await acp.client({ name: 'types' }).connectWith(engine.stream(), async (agent) => {
    await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION })
    return agent.buildSession('/tmp').withSession((session) => session.prompt('hi'))
  })
  await engine.close()
  return result.stopReason
}

export async function readMessages(engine: Engine): Promise<JsonRpcMessage[]> {
  const messages: JsonRpcMessage[] = []
  for await (const message of engine.stream().readable) messages.push(message)
  return messages
}

export function streamWithErrorHook(): Engine {
  return new Engine(null, null, { onError: (error) => console.error(error) })
}

export function isClosed(error: unknown): boolean {
  return (error as EngineError).code === 'ERR_HEARTH_CLOSED'
}
