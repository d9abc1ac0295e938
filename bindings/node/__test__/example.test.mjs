// examples/node/extension.mjs, run as its README says, against the mock LLM.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { repoRoot, startMockLlm } from './support/mock-llm.mjs'

const exampleDir = join(repoRoot, 'examples', 'node')

test('the VS Code-shaped example streams an answer from the engine', async (t) => {
  assert.ok(
    existsSync(join(exampleDir, 'node_modules', 'hearth-acp')),
    'examples/node has no node_modules: run `npm ci` there (run-tests.sh does)',
  )
  const mock = await startMockLlm({
    responses: [{ events: [{ text: 'Hello' }, { text: ' from' }, { text: ' Hearth.' }] }],
  })
  t.after(() => mock.stop())

  const child = spawn(process.execPath, ['extension.mjs', 'Say hello'], {
    cwd: exampleDir,
    env: { ...process.env, OPENAI_BASE_URL: mock.baseUrl, OPENAI_API_KEY: 'test-key' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  const code = await new Promise((resolve) => child.on('close', resolve))
  clearTimeout(killer)

  assert.equal(code, 0, stderr)
  assert.equal(stdout, 'Hello from Hearth.\n[end_turn]\n')
  const [modelRequest] = await (await fetch(`${mock.url}/_mock/requests`)).json()
  assert.match(JSON.stringify(modelRequest.body.messages), /Say hello/)
})
