#!/usr/bin/env node
// `pricectl --version` (or `-v`) answers without loading oclif (about half of its start-up; see
// docs/performance.md "Cold start"), with oclif's own text: name/version platform-arch
// node-version. oclif answers it on WSL (its platform is then "wsl"). Followed by anything
// (`--version --json`), it is the `version` command, which oclif would not run: it prints
// its text for a leading --version whatever follows.
// The root `--help` (or `-h`) to a pipe is oclif's text rendered at build time
// (scripts/build.mjs renderRootHelp), printed when nothing here could change it.
// Everything else runs through oclif.
import {existsSync, readFileSync} from 'node:fs'
import {arch, homedir, platform, release, tmpdir} from 'node:os'
import {join} from 'node:path'

/** The variables pricectl itself reads: they change no help text. */
const OWN_VARIABLES = new Set(['PRICECTL_DB', 'PRICECTL_GEOIP_DB', 'PRICECTL_IMPORT_BATCH', 'PRICECTL_NOW', 'PRICECTL_PROFILE', 'PRICECTL_PROGRESS_INTERVAL_MS'])

const VERSION_FLAGS = new Set(['--version', '-v'])
const given = process.argv.slice(2)
const argv = VERSION_FLAGS.has(given[0]) && given.length > 1 ? ['version', ...given.slice(1)] : given
const only = argv.length === 1 ? argv[0] : undefined
const rootHelp = only === '--help' || only === '-h' ? await builtRootHelp() : undefined
if (VERSION_FLAGS.has(only) && !maybeWsl()) {
  process.stdout.write(userAgent(packageJson()) + '\n')
} else if (rootHelp !== undefined) {
  process.stdout.write(rootHelp)
} else {
  const {execute} = await import('@oclif/core')
  await execute({args: argv, dir: import.meta.url})
}

function packageJson() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
}

/** oclif's config.userAgent. */
function userAgent(pjson) {
  return `${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`
}

/**
 * The root help rendered at build time, when this run would print the same: stdout not a
 * terminal (oclif then wraps at 80 columns, without colour), Linux (not WSL), no variable
 * oclif reads (OCLIF_*, PRICECTL_* of its own, FORCE_COLOR, DEBUG), no user plugins or theme
 * in oclif's folders, and the manifest the text was rendered from. Else undefined: oclif answers.
 */
async function builtRootHelp() {
  if (process.stdout.isTTY || platform() !== 'linux' || maybeWsl()) return undefined
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('OCLIF_') || (name.startsWith('PRICECTL_') && !OWN_VARIABLES.has(name)) || name === 'FORCE_COLOR' || name === 'DEBUG') return undefined
  }
  let built
  try {
    built = JSON.parse(readFileSync(new URL('../dist/root-help.json', import.meta.url), 'utf8'))
  } catch {
    return undefined
  }
  const pjson = packageJson()
  // oclif's data and config folders (Config.dir): user plugins and a theme change the help.
  const dirname = pjson.oclif?.dirname ?? pjson.name
  const home = process.env.HOME || homedir() || tmpdir()
  const dataDir = join(process.env.XDG_DATA_HOME || join(home, '.local/share'), dirname)
  const configDir = join(process.env.XDG_CONFIG_HOME || join(home, '.config'), dirname)
  if (existsSync(join(dataDir, 'package.json')) || existsSync(join(configDir, 'theme.json'))) return undefined
  const {createHash} = await import('node:crypto')
  const manifest = createHash('sha256').update(readFileSync(new URL('../oclif.manifest.json', import.meta.url))).digest('hex')
  if (manifest !== built.manifest) return undefined
  const agent = userAgent(pjson)
  // A longer line than the one rendered could wrap differently.
  if (agent.length > 70) return undefined
  return `${built.before}\n  ${agent}\n${built.after}`
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
