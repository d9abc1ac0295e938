// Starts the scripted mock LLM (tests/mock-llm) as a child process: the only model any test
// talks to. It serves until its stdin closes, so a test run that dies never leaves it behind.

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')

/** Where cargo put the binary: `$CARGO_TARGET_DIR` (relative to the repo root) or target/. */
export function mockBinary() {
  const targetDir = resolve(repoRoot, process.env.CARGO_TARGET_DIR ?? 'target')
  const binary = join(targetDir, 'debug', 'hearth-mock-llm')
  if (!existsSync(binary)) {
    throw new Error(
      `the mock LLM is not built: ${binary} is missing. Run \`cargo build -p hearth-mock-llm\` ` +
        'in the repository first (set CARGO_TARGET_DIR if cargo builds elsewhere).',
    )
  }
  return binary
}

/**
 * Starts the mock with `script` (the object form of its script file).
 * @returns {Promise<{ baseUrl: string, url: string, stop: () => Promise<void> }>}
 */
export async function startMockLlm(script) {
  const scriptDir = mkdtempSync(join(tmpdir(), 'hearth-node-mock-'))
  const scriptFile = join(scriptDir, 'script.json')
  writeFileSync(scriptFile, JSON.stringify(script))
  const child = spawn(mockBinary(), ['--script', scriptFile], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const lines = createInterface({ input: child.stdout })
  const baseUrl = await new Promise((resolve, reject) => {
    lines.once('line', resolve)
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the mock LLM exited (${code}) before printing its URL`)))
  })
  lines.close()
  return {
    baseUrl,
    /** The server root, where the `/_mock/*` control routes live. */
    url: baseUrl.replace(/\/v1$/, ''),
    async stop() {
      child.stdin.end()
      await exited
      rmSync(scriptDir, { recursive: true, force: true })
    },
  }
}

/** An engine config that keeps everything in memory and talks only to the mock. */
export function testConfig(baseUrl) {
  return {
    dataDir: ':memory:',
    model: 'test-model',
    providers: { openai: { baseUrl, apiKey: 'test-key' } },
  }
}
