#!/usr/bin/env node
'use strict'
// `hearth` (and `npx hearth-acp`): runs the native `hearth` command that the platform package
// (hearth-acp-<platform>, an optional dependency, the one npm installed for this machine)
// carries next to the addon. A child process rather than an in-process call, because
// `hearth acp` is a stdio server with its own signal handling: stdin, stdout and stderr are
// handed straight to it, and its exit status (or signal) becomes ours.

const { spawn } = require('node:child_process')
const { dirname, join } = require('node:path')

// The platform packages that can carry this machine's binary, in napi-rs's names. Windows has
// one per toolchain (an MSVC build, or the GNU ones scripts/package.sh cross-builds); any of
// them runs, since the binary is a separate process.
function platformPackages() {
  const { platform, arch } = process
  if (platform === 'win32') return ['msvc', 'gnu', 'gnullvm'].map((abi) => `hearth-acp-${platform}-${arch}-${abi}`)
  if (platform !== 'linux') return [`hearth-acp-${platform}-${arch}`]
  const glibc = process.report?.getReport()?.header?.glibcVersionRuntime
  return [`hearth-acp-${platform}-${arch}-${glibc ? 'gnu' : 'musl'}`]
}

function binaryPath() {
  const names = platformPackages()
  for (const name of names) {
    try {
      const dir = dirname(require.resolve(`${name}/package.json`))
      return join(dir, process.platform === 'win32' ? 'hearth.exe' : 'hearth')
    } catch {
      // not installed: try the next
    }
  }
  console.error(
    `hearth-acp: the package ${names.join(' or ')} is not installed, so there is no hearth binary ` +
      `for this platform. npm installs it with hearth-acp unless optional dependencies are ` +
      `omitted (--omit=optional, --no-optional) or the platform has no build.`,
  )
  process.exit(1)
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit' })
// The child shares our terminal and process group, so a Ctrl-C reaches it directly; these
// forward what is sent to this process alone (a parent's kill).
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal))
}
child.on('error', (error) => {
  console.error(`hearth-acp: cannot run ${error.path ?? 'hearth'}: ${error.message}`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal)
  else process.exit(code ?? 1)
})
