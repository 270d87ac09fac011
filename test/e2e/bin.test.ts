import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eInitStore, e2eStore, itWithoutStore} from '../helpers/e2e.js'
import {ROOT, runBin} from '../helpers/run.js'

describe('bin scripts', () => {
  it('bin/dev.js runs the TypeScript sources, bin/run.js the build', async () => {
    const db = await e2eInitStore()
    const dev = runBin(db, ['db', 'info', '--json'], {bin: 'dev.js', env: {DEBUG: 'oclif:config:pricectl'}})
    expect(dev.code).toBe(0)
    expect(dev.stderr).toMatch(/\(import\) \S+\/commands\/db\/info\.ts/)
    expect(dev.json.schema_version).toBeGreaterThan(0)
    const built = runBin(db, ['db', 'info', '--json'], {env: {DEBUG: 'oclif:config:pricectl'}})
    expect(built.code).toBe(0)
    expect(built.stderr).toMatch(/\(import\) \S+\/dist\/commands\/db\/info\.js/)
  })

  itWithoutStore('--version and --help answer from the manifest', () => {
    const version = runBin(undefined, ['--version'])
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/^pricectl\/\d+\.\d+\.\d+ /)
    const help = runBin(undefined, ['--help'])
    expect(help.code).toBe(0)
    for (const topic of ['price', 'products', 'coupons', 'fx', 'db']) expect(help.stdout).toContain(topic)
  })

  itWithoutStore('the root --help to a pipe comes from the build without loading oclif, byte for byte what oclif prints', () => {
    // An environment that changes nothing (bin/run.js builtRootHelp): a home of its own, no OCLIF_/PRICECTL_ variables.
    const home = mkdtempSync(join(tmpdir(), 'pricectl-help-home-'))
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OCLIF_|PRICECTL_|XDG_|DEBUG$|FORCE_COLOR$|NODE_ENV$)/.test(k)))
    const help = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [join(ROOT, 'bin', 'run.js'), ...args], {cwd: ROOT, encoding: 'utf8', env: {...clean, HOME: home, NODE_DEBUG: 'module', ...env}})
    const fast = help(['--help'])
    expect(fast.status).toBe(0)
    expect(fast.stderr).not.toMatch(/@oclif/)
    expect(fast.stdout).toMatch(/^VERSION\n {2}pricectl\/\d+\.\d+\.\d+ \S+ node-v[\d.]+\n\nUSAGE\n/m)
    // oclif's own rendering at the width of a pipe (OCLIF_COLUMNS is one of the variables that make oclif answer).
    const oclif = help(['--help'], {OCLIF_COLUMNS: '80'})
    expect(oclif.stderr).toMatch(/@oclif/)
    expect(fast.stdout).toBe(oclif.stdout)
    expect(help(['-h']).stdout).toBe(fast.stdout)
    expect(help(['help']).stdout).toBe(fast.stdout)
    // Another width, colours or a theme: oclif answers.
    expect(help(['--help'], {OCLIF_COLUMNS: '120'}).stdout).not.toBe(fast.stdout)
    expect(help(['--help'], {FORCE_COLOR: '3'}).stderr).toMatch(/@oclif/)
    mkdirSync(join(home, '.config', 'pricectl'), {recursive: true})
    writeFileSync(join(home, '.config', 'pricectl', 'theme.json'), '{}')
    expect(help(['--help']).stderr).toMatch(/@oclif/)
  })

  itWithoutStore('the root help the build rendered is tied to the manifest on disk (its commands in id order, whoever wrote it last)', () => {
    const bytes = readFileSync(join(ROOT, 'oclif.manifest.json'))
    const built = JSON.parse(readFileSync(join(ROOT, 'dist', 'root-help.json'), 'utf8')) as {manifest: string}
    expect(built.manifest).toBe(createHash('sha256').update(bytes).digest('hex'))
    const ids = Object.keys((JSON.parse(bytes.toString('utf8')) as {commands: Record<string, unknown>}).commands)
    expect(ids).toEqual(ids.toSorted())
  })

  itWithoutStore('the manifest every start parses holds commands, not their zod output schemas', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, Record<string, unknown>>}
    expect(Object.keys(manifest.commands)).toContain('price')
    for (const [id, command] of Object.entries(manifest.commands)) expect(command.outputSchema, id).toBeUndefined()
  })

  itWithoutStore('the price bundle loads no PostgreSQL adapter at start: it is a chunk imported for a postgres:// store only', () => {
    const imported = new Set<string>()
    const walk = (file: string) => {
      if (imported.has(file)) return
      imported.add(file)
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|[;\s}])import\s*(?:[\w{},\s$*]*from\s*)?"(\.{1,2}\/[^"]+)"/g)) walk(join(file, '..', m[1]))
    }
    walk(join(ROOT, 'dist', 'commands', 'price', 'index.js'))
    expect(imported.size).toBeGreaterThan(1)
    for (const file of imported) expect(readFileSync(file, 'utf8'), file).not.toContain('"PgStore"')
    const chunks = readdirSync(join(ROOT, 'dist', 'bundle')).map((f) => join(ROOT, 'dist', 'bundle', f))
    expect(chunks.filter((f) => readFileSync(f, 'utf8').includes('"PgStore"'))).toHaveLength(1)
  })

  itWithoutStore('an unknown command exits 127 (as a shell does) with a hint', async () => {
    const r = runBin(await e2eStore(), ['nosuch'])
    expect(r.code).toBe(127)
    expect(r.stderr).toContain('nosuch')
  })
})
