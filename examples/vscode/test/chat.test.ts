// chat.ts and permissions.ts against the real engine (the debug addon bindings/node builds)
// and the scripted mock LLM: what the extension does, minus VS Code. The quick pick is played
// by a function that records what it was shown and picks like a user would.

import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, it } from 'node:test'

import { HearthChat } from '../src/chat.js'
import { permissionChoices, permissionResponse, type PermissionChoice } from '../src/permissions.js'

// out/test/ → examples/vscode → the repository root.
const repo = resolve(__dirname, '..', '..', '..', '..')
const mockBinary = join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'debug', 'hearth-mock-llm')

/** One scripted model turn that calls `write`, then the model's follow-up once it has the result. */
function writeTurn(file: string, followUp: string): object[] {
  return [
    { events: [{ toolCall: { id: `call_${file}`, name: 'write', arguments: JSON.stringify({ path: file, content: 'hi\n' }) } }] },
    { events: [{ text: followUp }] },
  ]
}

describe('the extension’s Hearth wiring', () => {
  let dir: string
  let workspace: string
  let mock: ChildProcess
  let baseUrl: string
  const shown: { title: string; choices: PermissionChoice[] }[] = []
  let answer: (choices: PermissionChoice[]) => PermissionChoice | undefined = () => undefined
  let chat: HearthChat

  before(async () => {
    assert.ok(existsSync(mockBinary), `${mockBinary} is missing: cargo build -p hearth-mock-llm`)
    dir = mkdtempSync(join(tmpdir(), 'hearth-vscode-'))
    workspace = join(dir, 'workspace')
    const script = join(dir, 'script.json')
    writeFileSync(
      script,
      JSON.stringify({
        responses: [
          { events: [{ text: 'Hello ' }, { text: 'from Hearth.' }] },
          ...writeTurn('allowed.txt', 'Wrote it.'),
          ...writeTurn('dismissed.txt', 'Left it alone.'),
        ],
      }),
    )
    mock = spawn(mockBinary, ['--script', script], { stdio: ['pipe', 'pipe', 'inherit'] })
    const [line] = await once(createInterface({ input: mock.stdout! }), 'line')
    baseUrl = String(line).trim()
    chat = await HearthChat.start({
      dataDir: join(dir, 'globalStorage'),
      apiKey: 'key-from-secret-storage',
      baseUrl,
      pick: async (title, choices) => {
        shown.push({ title, choices })
        return answer(choices)
      },
    })
    mkdirSync(workspace)
  })

  after(async () => {
    await chat?.dispose()
    mock?.stdin?.end()
    if (mock) await once(mock, 'exit')
    rmSync(dir, { recursive: true, force: true })
  })

  it('streams an answer, with the key from SecretStorage sent as the provider credential', async () => {
    let text = ''
    const stopReason = await chat.ask(workspace, 'Say hello.', (chunk) => (text += chunk))
    assert.equal(stopReason, 'end_turn')
    assert.equal(text, 'Hello from Hearth.')
    const requests = (await (await fetch(new URL('/_mock/requests', baseUrl))).json()) as { headers: Record<string, string> }[]
    assert.equal(requests[0].headers.authorization, 'Bearer key-from-secret-storage')
  })

  it('asks before an edit with quick-pick choices, and writes when allowed', async () => {
    answer = (choices) => choices.find((choice) => choice.label === 'Allow')
    const stopReason = await chat.ask(workspace, 'Create allowed.txt.', () => {})
    assert.equal(stopReason, 'end_turn')
    assert.equal(shown.length, 1)
    assert.deepEqual(
      shown[0].choices.map((choice) => choice.label),
      ['Allow', 'Always allow', 'Reject', 'Always reject'],
    )
    assert.match(shown[0].title, /^Hearth wants to run: /)
    assert.ok(existsSync(join(workspace, 'allowed.txt')))
  })

  it('treats a dismissed quick pick as a refusal: nothing is written', async () => {
    answer = () => undefined
    const stopReason = await chat.ask(workspace, 'Create dismissed.txt.', () => {})
    assert.equal(stopReason, 'end_turn')
    assert.equal(shown.length, 2)
    assert.ok(!existsSync(join(workspace, 'dismissed.txt')))
  })
})

describe('permission choices', () => {
  const request = {
    sessionId: 's',
    toolCall: { toolCallId: 'call_1', title: 'Write notes.txt' },
    options: [
      { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' as const },
      { optionId: 'custom', name: 'Something new', kind: 'reject_always' as const },
    ],
  }

  it('become quick-pick items in Hearth’s order, each carrying its option id', () => {
    assert.deepEqual(permissionChoices(request), [
      { label: 'Allow', description: 'Allow once', optionId: 'allow_once' },
      { label: 'Always reject', description: 'Something new', optionId: 'custom' },
    ])
  })

  it('answer with the picked option, or cancelled when dismissed', () => {
    const [first] = permissionChoices(request)
    assert.deepEqual(permissionResponse(first), { outcome: { outcome: 'selected', optionId: 'allow_once' } })
    assert.deepEqual(permissionResponse(undefined), { outcome: { outcome: 'cancelled' } })
  })
})
