import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eStore} from '../helpers/e2e.js'
import {ROOT, runBin} from '../helpers/run.js'

describe('bin scripts', () => {
  it('bin/dev.js runs the TypeScript sources, bin/run.js the build', () => {
    const db = e2eStore()
    const dev = runBin(db, ['db', 'info', '--json'], {bin: 'dev.js', env: {DEBUG: 'oclif:config:pricectl'}})
    expect(dev.code).toBe(0)
    expect(dev.stderr).toMatch(/\(import\) \S+\/commands\/db\/info\.ts/)
    expect(dev.json.schema_version).toBeGreaterThan(0)
    const built = runBin(db, ['db', 'info', '--json'], {env: {DEBUG: 'oclif:config:pricectl'}})
    expect(built.code).toBe(0)
    expect(built.stderr).toMatch(/\(import\) \S+\/dist\/commands\/db\/info\.js/)
  })

  it('--version and --help answer from the manifest', () => {
    const version = runBin(undefined, ['--version'])
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/^pricectl\/\d+\.\d+\.\d+ /)
    const help = runBin(undefined, ['--help'])
    expect(help.code).toBe(0)
    for (const topic of ['price', 'products', 'coupons', 'fx', 'db']) expect(help.stdout).toContain(topic)
  })

  it('the manifest every start parses holds commands, not their zod output schemas', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, Record<string, unknown>>}
    expect(Object.keys(manifest.commands)).toContain('price')
    for (const [id, command] of Object.entries(manifest.commands)) expect(command.outputSchema, id).toBeUndefined()
  })

  it('an unknown command exits 127 (as a shell does) with a hint', () => {
    const r = runBin(e2eStore(), ['nosuch'])
    expect(r.code).toBe(127)
    expect(r.stderr).toContain('nosuch')
  })
})
