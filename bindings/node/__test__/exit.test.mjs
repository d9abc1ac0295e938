// After close() the process exits by itself, promptly: checked in child processes, since
// a leaked handle would keep the test runner's own process alive instead of failing.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { startMockLlm } from './support/mock-llm.mjs'

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')
// Generous for a loaded 2-core machine; a leaked handle would hang until killed.
const EXIT_WITHIN_MS = 10_000

/** Runs a fixture with node; resolves with its exit code, output and run time. */
function runFixture(name, env = {}) {
  const started = performance.now()
  const child = spawn(process.execPath, [join(fixtures, name)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS)
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started })
    })
  })
}

let mock
before(async () => {
  mock = await startMockLlm({
    responses: [{ events: [{ text: 'Let me think' }, { stallMs: 60_000 }, { text: 'done' }] }],
  })
})
after(() => mock?.stop())

test('the process exits by itself after close(), and a throwing callback did not kill it', async () => {
  const run = await runFixture('close-and-exit.mjs')
  assert.equal(run.signal, null, `killed after ${EXIT_WITHIN_MS} ms: something kept Node alive`)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, 'protocolVersion 1\nclosed\n')
  assert.match(run.stderr, /hearth-acp: delivering a frame failed.*this callback always throws/)
})

test('close() during a streaming prompt answers it cancelled, then the process exits', async () => {
  const run = await runFixture('close-mid-prompt.mjs', { MOCK_BASE_URL: mock.baseUrl })
  assert.equal(run.signal, null, `killed after ${EXIT_WITHIN_MS} ms: something kept Node alive`)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, 'stopReason cancelled\n')
})
