// Lays out the npm packages of napi-rs's per-platform scheme, ready for `npm pack`:
//
//   node npm-packages.mjs platform OUT_DIR PLATFORM ADDON HEARTH_BINARY
//   node npm-packages.mjs main OUT_DIR PLATFORM...
//
// - `platform`: OUT_DIR/hearth-acp-PLATFORM (PLATFORM in napi-rs's names: linux-x64-gnu,
//   darwin-arm64, win32-x64-gnu...) with the addon and the `hearth` binary (`hearth.exe` on
//   Windows), and the os/cpu/libc fields that make npm install it only on matching machines;
// - `main`: OUT_DIR/hearth-acp, bindings/node's published files and a package.json naming every
//   platform package built as an optional dependency (what `napi prepublish` adds at publish
//   time); the loader napi-rs generated (index.js) requires `hearth-acp-<platform>` when no
//   addon sits next to it, and bin/hearth.js finds the `hearth` binary there.

import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const usage = `usage: node npm-packages.mjs platform OUT_DIR PLATFORM ADDON HEARTH_BINARY
       node npm-packages.mjs main OUT_DIR PLATFORM...`
const [command, outDir, ...rest] = process.argv.slice(2)
const bindingDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bindings', 'node')
const source = JSON.parse(readFileSync(join(bindingDir, 'package.json'), 'utf8'))

const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)

// The main package: what bindings/node publishes, minus the build's addon (*.node) and the
// development-only fields.
function mainPackage(platforms) {
  const main = join(outDir, source.name)
  mkdirSync(main, { recursive: true })
  const mainFiles = source.files.filter((pattern) => !pattern.endsWith('.node'))
  for (const file of mainFiles) cpSync(join(bindingDir, file), join(main, file))
  copyFileSync(join(bindingDir, 'README.md'), join(main, 'README.md'))
  const { devDependencies, scripts, ...published } = source
  writeJson(join(main, 'package.json'), {
    ...published,
    files: mainFiles,
    optionalDependencies: Object.fromEntries(platforms.map((p) => [`${source.name}-${p}`, source.version])),
  })
}

function platformPackage(platform, addon, hearthBinary) {
  const name = `${source.name}-${platform}`
  const [os, cpu, libc] = platform.split('-')
  const exe = os === 'win32' ? 'hearth.exe' : 'hearth'
  const native = join(outDir, name)
  mkdirSync(native, { recursive: true })
  const addonName = basename(addon)
  copyFileSync(addon, join(native, addonName))
  copyFileSync(hearthBinary, join(native, exe))
  chmodSync(join(native, exe), 0o755)
  writeJson(join(native, 'package.json'), {
    name,
    version: source.version,
    description: `The ${platform} build of ${source.name}: its Node addon and the hearth command`,
    license: source.license,
    repository: source.repository,
    os: [os],
    cpu: [cpu],
    ...(os === 'linux' ? { libc: [libc === 'musl' ? 'musl' : 'glibc'] } : {}),
    main: addonName,
    files: [addonName, exe],
    engines: source.engines,
  })
  writeFileSync(
    join(native, 'README.md'),
    `# ${name}\n\nThe ${platform} binaries of [\`${source.name}\`](https://www.npmjs.com/package/${source.name}); install that package instead.\n`,
  )
}

if (command === 'platform' && rest.length === 3) platformPackage(...rest)
else if (command === 'main' && outDir && rest.length > 0) mainPackage(rest)
else {
  console.error(usage)
  process.exit(2)
}
