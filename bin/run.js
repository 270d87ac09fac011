#!/usr/bin/env node
// `pricectl --version` answers without loading oclif (about half of its start-up; see
// docs/performance.md "Cold start"), with oclif's own text: name/version platform-arch
// node-version. oclif answers it on WSL (its platform is then "wsl") and for anything else.
import {existsSync, readFileSync} from 'node:fs'
import {arch, platform, release} from 'node:os'

const argv = process.argv.slice(2)
if (argv.length === 1 && argv[0] === '--version' && !maybeWsl()) {
  const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}\n`)
} else {
  const {execute} = await import('@oclif/core/execute')
  await execute({dir: import.meta.url})
}

/** Whether this may be WSL, where oclif's platform reads "wsl" (is-wsl decides there). */
function maybeWsl() {
  if (platform() !== 'linux') return false
  if (release().toLowerCase().includes('microsoft')) return true
  try {
    if (readFileSync('/proc/version', 'utf8').toLowerCase().includes('microsoft')) return true
  } catch {}
  return existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL')
}
