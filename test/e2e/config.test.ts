import {mkdtempSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eStore, onPostgres} from '../helpers/e2e.js'
import {runBin} from '../helpers/run.js'

/**
 * The config file through bin/run.js, as a user would: a profile and the default store named
 * there, on either adapter (a SQLite file, or the PostgreSQL pass's database URL).
 */
describe('config file end to end', () => {
  it('a profile, then the default store, named in the config file: db init, a write and a read through them', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pricectl-home-'))
    // No variable names a store: the config file does.
    const env = {PRICECTL_DB: '', PRICECTL_PROFILE: '', XDG_CONFIG_HOME: join(home, 'config')}
    const bin = (args: string[], extra: Record<string, string> = {}) => runBin(undefined, args, {env: {...env, ...extra}})
    const db = await e2eStore()

    const set = bin(['config', 'set', 'db', db, '--profile', 'shop', '--json'])
    expect(set.code, set.stderr).toBe(0)
    expect(set.json).toMatchObject({config_file: join(home, 'config', 'pricectl', 'config.json'), key: 'db', profile: 'shop', success: true})
    expect(statSync(set.json.config_file).mode & 0o777).toBe(0o600)

    // The store does not exist yet on SQLite: a read refuses it, naming the profile; db init makes it.
    if (!onPostgres) {
      const refused = bin(['products', 'list', '--profile', 'shop'])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(`no store at ${db} (profile shop of ${set.json.config_file}, chosen by --profile)`)
    }
    expect(bin(['db', 'init', '--profile', 'shop']).code).toBe(0)
    const created = bin(['products', 'create', '--api-id', 'tea', '--name', 'Tea', '--base-px', '4', '--interval', 'month', '--interval-count', '1', '--profile', 'shop'])
    expect(created.code, created.stderr).toBe(0)
    const byProfile = bin(['products', 'list', '--json'], {PRICECTL_PROFILE: 'shop'})
    expect(byProfile.code, byProfile.stderr).toBe(0)
    expect(byProfile.json.products.map((p: {api_id: string}) => p.api_id)).toEqual(['tea'])

    const unknown = bin(['products', 'list', '--profile', 'shpo'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown profile "shpo" (--profile): the profiles in ')

    expect(bin(['config', 'set', 'db', db]).code).toBe(0)
    const byDefault = bin(['products', 'get', 'tea', '--json'])
    expect(byDefault.code, byDefault.stderr).toBe(0)
    expect(byDefault.json).toMatchObject({api_id: 'tea', base_px: 4})
    const list = bin(['config', 'list'])
    expect(list.stdout.split('\n').map((l) => l.split('=')[0])).toEqual(['db', 'profiles.shop.db', ''])
  })
})
