// Lays out the two npm packages napi-rs's per-platform scheme asks for, ready for `npm pack`:
//
//   node npm-packages.mjs OUT_DIR PLATFORM ADDON HEARTH_BINARY
//
// - OUT_DIR/hearth-acp: bindings/node's published files and a package.json that names the
//   platform package as an optional dependency (what `napi prepublish` adds at publish time);
//   the loader napi-rs generated (index.js) already requires `hearth-acp-<platform>` when no
//   addon sits next to it, and bin/hearth.js finds the `hearth` binary there;
// - OUT_DIR/hearth-acp-PLATFORM: the addon and the `hearth` binary, with the os/cpu/libc fields
//   that make npm install it only on matching machines.
// Only this machine's platform is built: a release would run the same layout once per
// `napi build --target`, adding each platform to optionalDependencies.

import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const [outDir, platform, addon, hearthBinary] = process.argv.slice(2)
if (!hearthBinary) {
  console.error('usage: node npm-packages.mjs OUT_DIR PLATFORM ADDON HEARTH_BINARY')
  process.exit(2)
}
const bindingDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bindings', 'node')
const source = JSON.parse(readFileSync(join(bindingDir, 'package.json'), 'utf8'))
const platformName = `${source.name}-${platform}`
const [os, cpu, libc] = platform.split('-')

const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)

// The main package: what bindings/node publishes, minus the build's addon (*.node) and the
// development-only fields.
const main = join(outDir, source.name)
mkdirSync(main, { recursive: true })
const mainFiles = source.files.filter((pattern) => !pattern.endsWith('.node'))
for (const file of mainFiles) cpSync(join(bindingDir, file), join(main, file))
for (const doc of ['README.md']) copyFileSync(join(bindingDir, doc), join(main, doc))
const { devDependencies, scripts, ...published } = source
writeJson(join(main, 'package.json'), {
  ...published,
  files: mainFiles,
  optionalDependencies: { [platformName]: source.version },
})

// The platform package.
const native = join(outDir, platformName)
mkdirSync(native, { recursive: true })
const addonName = basename(addon)
copyFileSync(addon, join(native, addonName))
copyFileSync(hearthBinary, join(native, 'hearth'))
chmodSync(join(native, 'hearth'), 0o755)
writeJson(join(native, 'package.json'), {
  name: platformName,
  version: source.version,
  description: `The ${platform} build of ${source.name}: its Node addon and the hearth command`,
  license: source.license,
  repository: source.repository,
  os: [os],
  cpu: [cpu],
  ...(os === 'linux' ? { libc: [libc === 'musl' ? 'musl' : 'glibc'] } : {}),
  main: addonName,
  files: [addonName, 'hearth'],
  engines: source.engines,
})
writeFileSync(
  join(native, 'README.md'),
  `# ${platformName}\n\nThe ${platform} binaries of [\`${source.name}\`](https://www.npmjs.com/package/${source.name}); install that package instead.\n`,
)
