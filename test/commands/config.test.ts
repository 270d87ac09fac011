import {Config} from '@oclif/core'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {configFilePath} from '../../src/cli/config-file.js'
import {ConfigFile, ConfigGetOutput, ConfigListOutput, ConfigSetOutput, ConfigUnsetOutput} from '../../src/schemas/config.js'
import {isConfigFileShape} from '../../src/schemas/no-zod.js'
import {initStore, ROOT, run, withEnv} from '../helpers/run.js'

/**
 * The config file (src/cli/config-file.ts): in-process, each test with a config folder of its
 * own (XDG_CONFIG_HOME; test/helpers/test-env.ts gives every file one, never the real home).
 */
function configHome(): {file: string; home: string} {
  const home = mkdtempSync(join(tmpdir(), 'pricectl-config-'))
  return {file: join(home, 'pricectl', 'config.json'), home}
}

/** Run with this config folder, and no variable naming a store ('' is unset to pricectl). */
async function inConfig<T>(home: string, fn: () => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  return withEnv({PRICECTL_DB: '', PRICECTL_PROFILE: '', XDG_CONFIG_HOME: home, ...env}, fn)
}

function fileOf(home: string): any {
  return JSON.parse(readFileSync(join(home, 'pricectl', 'config.json'), 'utf8'))
}

// Secrets with a '-': the output names the temp folder, whose six random letters and digits (mkdtemp) once read "wVk3yA".
const URL_WITH_PASSWORDS = 'postgres://app:s3cret-pw@db.internal:5432/pricing?sslpassword=k3y-pass&application_name=pricectl'
const MASKED = 'postgres://app:***@db.internal:5432/pricing?sslpassword=***&application_name=pricectl'

describe('config set / get / list / unset', () => {
  it('set writes the default store, owner-only, as an absolute path; get prints it', async () => {
    const {file, home} = configHome()
    const cwd = process.cwd()
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-cwd-'))
    process.chdir(dir)
    try {
      const r = await inConfig(home, () => run(undefined, ['config', 'set', 'db', 'shop.db', '--json']))
      expect(r.code, r.stderr).toBe(0)
      expect(r.json).toEqual({config_file: file, key: 'db', message: `db set to ${join(dir, 'shop.db')} in ${file}`, profile: null, success: true, value: join(dir, 'shop.db')})
      expect(ConfigSetOutput.parse(r.json)).toEqual(r.json)
    } finally {
      process.chdir(cwd)
    }
    expect(fileOf(home)).toEqual({db: join(dir, 'shop.db')})
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(home, 'pricectl')).mode & 0o777).toBe(0o700)
    const get = await inConfig(home, () => run(undefined, ['config', 'get', 'db']))
    expect(get.code).toBe(0)
    expect(get.stdout).toBe(`${join(dir, 'shop.db')}\n`)
  })

  it('set says when there is no store at the path yet, and how to make one', async () => {
    const {home} = configHome()
    const db = join(mkdtempSync(join(tmpdir(), 'pricectl-s-')), 'new.db')
    const r = await inConfig(home, () => run(undefined, ['config', 'set', 'db', db, '--profile', 'staging']))
    expect(r.code).toBe(0)
    expect(r.stderr).toBe(`note: there is no store at ${db} yet: make one with "pricectl db init --profile staging"\n`)
    expect(existsSync(db)).toBe(false)
  })

  it('a password in a URL is kept in the file (owner-only) but never shown: set, get, list and their --json', async () => {
    const {file, home} = configHome()
    const set = await inConfig(home, () => run(undefined, ['config', 'set', 'db', URL_WITH_PASSWORDS, '--profile', 'prod', '--json']))
    expect(set.code, set.stderr).toBe(0)
    expect(set.json.value).toBe(MASKED)
    expect(fileOf(home)).toEqual({profiles: {prod: {db: URL_WITH_PASSWORDS}}})
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const get = await inConfig(home, () => run(undefined, ['config', 'get', 'db', '--profile', 'prod']))
    expect(get.stdout).toBe(`${MASKED}\n`)
    const getJson = await inConfig(home, () => run(undefined, ['config', 'get', 'db', '--profile', 'prod', '--json']))
    expect(getJson.json).toEqual({config_file: file, key: 'db', message: `profiles.prod.db is ${MASKED}`, profile: 'prod', success: true, value: MASKED})
    expect(ConfigGetOutput.parse(getJson.json)).toEqual(getJson.json)
    const list = await inConfig(home, () => run(undefined, ['config', 'list']))
    expect(list.stdout).toBe(`profiles.prod.db=${MASKED}\n`)
    for (const r of [set, get, getJson, list]) expect(r.stdout + r.stderr).not.toMatch(/s3cret-pw|k3y-pass/)
  })

  it('list --json is the file as a plain nested object, passwords masked', async () => {
    const {file, home} = configHome()
    const db = join(home, 'default.db')
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', db]))
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', URL_WITH_PASSWORDS, '--profile', 'prod']))
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', join(home, 'b.db'), '--profile', 'b-side']))
    const r = await inConfig(home, () => run(undefined, ['config', 'list', '--json']))
    expect(r.code).toBe(0)
    expect(r.json).toEqual({config_file: file, db, message: `3 settings in ${file}`, profiles: {'b-side': {db: join(home, 'b.db')}, prod: {db: MASKED}}, success: true})
    expect(ConfigListOutput.parse(r.json)).toEqual(r.json)
    const text = await inConfig(home, () => run(undefined, ['config', 'list']))
    expect(text.stdout).toBe(`db=${db}\nprofiles.b-side.db=${join(home, 'b.db')}\nprofiles.prod.db=${MASKED}\n`)
  })

  it('list and get without a file: nothing set, exit 0; list notes a variable that comes first', async () => {
    const {file, home} = configHome()
    const list = await inConfig(home, () => run(undefined, ['config', 'list', '--json']))
    expect(list.json).toEqual({config_file: file, db: null, message: `0 settings in ${file}`, profiles: {}, success: true})
    const get = await inConfig(home, () => run(undefined, ['config', 'get', 'db', '--json']))
    expect(get.code).toBe(0)
    expect(get.json.value).toBeNull()
    const human = await inConfig(home, () => run(undefined, ['config', 'get', 'db']))
    expect(human.stdout).toBe('')
    expect(human.stderr).toBe(`db is not set in ${file}\n`)
    const noted = await inConfig(home, () => run(undefined, ['config', 'list']), {PRICECTL_DB: '/srv/other.db'})
    expect(noted.stderr).toContain('PRICECTL_DB is set')
    expect(existsSync(file)).toBe(false)
  })

  it('unset removes the default store or a whole profile; a key that is not set is nothing to do', async () => {
    const {file, home} = configHome()
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', join(home, 'a.db')]))
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', join(home, 'p.db'), '--profile', 'p']))
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', join(home, 'q.db'), '--profile', 'q']))
    const p = await inConfig(home, () => run(undefined, ['config', 'unset', 'db', '--profile', 'p', '--json']))
    expect(p.json).toMatchObject({profile: 'p', removed: true, success: true})
    expect(ConfigUnsetOutput.parse(p.json)).toEqual(p.json)
    expect(fileOf(home)).toEqual({db: join(home, 'a.db'), profiles: {q: {db: join(home, 'q.db')}}})
    await inConfig(home, () => run(undefined, ['config', 'unset', 'db', '--profile', 'q']))
    expect(fileOf(home)).toEqual({db: join(home, 'a.db')})
    const top = await inConfig(home, () => run(undefined, ['config', 'unset', 'db', '--json']))
    expect(top.json).toMatchObject({profile: null, removed: true})
    expect(fileOf(home)).toEqual({})
    const again = await inConfig(home, () => run(undefined, ['config', 'unset', 'db']))
    expect(again.code).toBe(0)
    expect(again.stdout).toBe(`db is not set in ${file}; nothing to do\n`)
  })

  it.each([
    [['config', 'set', 'db', ''], 'VALUE: expected a SQLite file path or a postgres:// URL'],
    [['config', 'set', 'db', 'mysql://h/d'], 'not a mysql:// URL'],
    [['config', 'set', 'db', 'postgres://a:pw@[bad/d'], 'postgres://a:***@[bad/d is not a valid URL'],
    [['config', 'set', 'db', '/tmp'], '/tmp is a folder'],
    [['config', 'set', 'db', '/srv/x.db', '--profile', '__proto__'], '"__proto__" is not a profile name'],
    [['config', 'set', 'db', '/srv/x.db', '--profile', 'has space'], '"has space" is not a profile name'],
    [['config', 'set', 'colour', 'x'], 'Expected colour to be one of: db'],
    [['config', 'get', 'db', '--profile', 'nope'], 'unknown profile "nope" (--profile)'],
    [['config', 'unset', 'db', '--profile', 'nope'], 'unknown profile "nope" (--profile)'],
  ])('%j: exit 2, the file untouched', async (args, message) => {
    const {home} = configHome()
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', '/srv/keep.db']))
    const before = readFileSync(join(home, 'pricectl', 'config.json'), 'utf8')
    const r = await inConfig(home, () => run(undefined, args))
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain(message)
    expect(r.stderr).not.toContain('pw@')
    expect(readFileSync(join(home, 'pricectl', 'config.json'), 'utf8')).toBe(before)
  })

  it('the file is written whole: a loose file becomes 0600, no temporary file stays, a dead writer\'s is swept', async () => {
    const {file, home} = configHome()
    mkdirSync(join(home, 'pricectl'))
    writeFileSync(file, '{}\n')
    chmodSync(file, 0o644)
    writeFileSync(`${file}.999999999.tmp`, '{"db": "/half')
    const r = await inConfig(home, () => run(undefined, ['config', 'set', 'db', '/srv/a.db']))
    expect(r.code, r.stderr).toBe(0)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(home, 'pricectl'))).toEqual(['config.json'])
  })
})

describe('which store a command opens', () => {
  /** Four stores made by db init, named a config file's db, two profiles and a variable. */
  async function setup() {
    const {home} = configHome()
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-stores-'))
    const stores = {config: join(dir, 'config.db'), env: join(dir, 'env.db'), flag: join(dir, 'flag.db'), one: join(dir, 'one.db'), two: join(dir, 'two.db')}
    for (const db of Object.values(stores)) await initStore(db)
    for (const [args, env] of [
      [['config', 'set', 'db', stores.config], {}],
      [['config', 'set', 'db', stores.one, '--profile', 'one'], {}],
      [['config', 'set', 'db', stores.two, '--profile', 'two'], {}],
    ] as const) expect((await inConfig(home, () => run(undefined, [...args]), env)).code).toBe(0)
    /** The store `db info` opened with these flags and variables. */
    const opened = async (flags: string[], env: Record<string, string> = {}) => {
      const r = await inConfig(home, () => run(undefined, ['db', 'info', ...flags, '--json']), env)
      expect(r.code, r.stderr).toBe(0)
      return r.json.path as string
    }
    return {home, opened, stores}
  }

  it('--db > --profile > PRICECTL_DB > PRICECTL_PROFILE > the config file\'s db > the built-in default', async () => {
    const {home, opened, stores} = await setup()
    const all = {PRICECTL_DB: stores.env, PRICECTL_PROFILE: 'two'}
    expect(await opened(['--db', stores.flag, '--profile', 'one'], all)).toBe(stores.flag)
    expect(await opened(['--profile', 'one'], all)).toBe(stores.one)
    expect(await opened([], all)).toBe(stores.env)
    expect(await opened([], {PRICECTL_PROFILE: 'two'})).toBe(stores.two)
    expect(await opened([])).toBe(stores.config)
    await inConfig(home, () => run(undefined, ['config', 'unset', 'db']))
    const data = mkdtempSync(join(tmpdir(), 'pricectl-data-'))
    expect(await opened([], {XDG_DATA_HOME: data})).toBe(join(data, 'pricectl', 'pricectl.db'))
  })

  it('an unknown profile is exit 2 naming the profiles there are, from --profile or PRICECTL_PROFILE; no store is made', async () => {
    const {home} = await setup()
    const flag = await inConfig(home, () => run(undefined, ['products', 'list', '--profile', 'prdo']))
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('unknown profile "prdo" (--profile): the profiles in ')
    expect(flag.stderr).toContain(' are one, two; add one with: pricectl config set db PATH_OR_URL --profile prdo')
    const env = await inConfig(home, () => run(undefined, ['fx', 'set', 'EUR', '0.9', '--json']), {PRICECTL_PROFILE: 'prdo'})
    expect(env.code).toBe(2)
    expect(env.json.message).toContain('unknown profile "prdo" (PRICECTL_PROFILE)')
    const none = configHome()
    const empty = await inConfig(none.home, () => run(undefined, ['products', 'list', '--profile', 'prod']))
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain(`unknown profile "prod" (--profile): ${none.file} has no profiles`)
  })

  it('a profile or the file\'s db naming no store: a read refuses it, saying where it was named; db init --profile makes it', async () => {
    const {file, home} = configHome()
    const dir = mkdtempSync(join(tmpdir(), 'pricectl-stores-'))
    const typo = join(dir, 'typo.db')
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', typo, '--profile', 'p']))
    const read = await inConfig(home, () => run(undefined, ['products', 'list', '--profile', 'p']))
    expect(read.code).toBe(1)
    expect(read.stderr).toContain(`no store at ${typo} (profile p of ${file}, chosen by --profile): check the path (a typo?), or make one: pricectl db init --profile p`)
    expect(existsSync(typo)).toBe(false)
    await inConfig(home, () => run(undefined, ['config', 'set', 'db', typo]))
    const byFile = await inConfig(home, () => run(undefined, ['products', 'list']))
    expect(byFile.code).toBe(1)
    expect(byFile.stderr).toContain(`no store at ${typo} (the db of ${file}): check the path (a typo?), or make one: pricectl db init`)
    const init = await inConfig(home, () => run(undefined, ['db', 'init', '--profile', 'p', '--json']))
    expect(init.code, init.stderr).toBe(0)
    expect(init.json).toMatchObject({created: true, path: typo})
    expect((await inConfig(home, () => run(undefined, ['products', 'list']))).code).toBe(0)
  })

  it('a config file that is not valid stops the commands that open a store (exit 1, naming the file), not the others', async () => {
    for (const [content, problem] of [
      ['{"db": ', 'is not valid JSON'],
      ['{"db": "relative.db"}', 'db: "relative.db" is neither an absolute file path nor a postgres:// URL'],
      ['{"DB": "/srv/a.db"}', 'Unrecognized key: "DB"'],
      ['{"profiles": {"p": {"db": "/srv/a.db", "colour": "red"}}}', 'profiles.p: Unrecognized key: "colour"'],
      ['{"profiles": {"__proto__": {"db": "/srv/a.db"}}}', 'profiles: "__proto__" cannot be a profile name (JavaScript reserves it)'],
    ]) {
      const {file, home} = configHome()
      mkdirSync(join(home, 'pricectl'))
      writeFileSync(file, content)
      const r = await inConfig(home, () => run(undefined, ['products', 'list']))
      expect(r.code, content).toBe(1)
      expect(r.stderr, content).toContain(`the config file ${file} ${problem.startsWith('is') ? problem : `is not valid: ${problem}`}`)
      // --db names the store: the file is not read.
      const store = await initStore()
      expect((await inConfig(home, () => run(store, ['products', 'list']))).code, content).toBe(0)
      expect((await inConfig(home, () => run(undefined, ['version']))).code, content).toBe(0)
    }
  })

  it("the file is in oclif's config folder: XDG_CONFIG_HOME, or PRICECTL_CONFIG_DIR (oclif's own variable)", async () => {
    const {home} = configHome()
    // The path is oclif's configDir, computed again at each use from the variables as they are then.
    const config = await withEnv({XDG_CONFIG_HOME: home}, () => Config.load({root: ROOT}))
    expect(await withEnv({XDG_CONFIG_HOME: home}, async () => configFilePath(config))).toBe(join(config.configDir, 'config.json'))
    expect(config.configDir).toBe(join(home, 'pricectl'))
    const own = mkdtempSync(join(tmpdir(), 'pricectl-own-'))
    const r = await inConfig(home, () => run(undefined, ['config', 'set', 'db', '/srv/a.db', '--json']), {PRICECTL_CONFIG_DIR: own})
    expect(r.json.config_file).toBe(join(own, 'config.json'))
    expect(existsSync(join(own, 'config.json'))).toBe(true)
  })
})

describe('the hand check of the config file (what a cold command uses) agrees with its zod schema', () => {
  const documents: unknown[] = [
    {},
    {db: '/srv/a.db'},
    {db: 'postgres://app:pw@db/pricing?sslmode=require'},
    {db: 'postgresql://db/pricing'},
    {db: 'relative.db'},
    {db: './a.db'},
    {db: ''},
    {db: 5},
    {db: null},
    {db: 'postgres://[bad/d'},
    {db: '/a.db', extra: 1},
    {DB: '/a.db'},
    {profiles: {}},
    {profiles: {p: {db: '/a.db'}, 'b-side.2': {db: 'postgres://h/d'}}},
    {profiles: {p: {}}},
    {profiles: {p: {db: '/a.db', colour: 'red'}}},
    {profiles: {p: {db: 'rel.db'}}},
    {profiles: {p: null}},
    {profiles: {p: ['/a.db']}},
    {profiles: []},
    {profiles: null},
    {profiles: {_p: {db: '/a.db'}}},
    {profiles: {'has space': {db: '/a.db'}}},
    {profiles: {['a'.repeat(64)]: {db: '/a.db'}}},
    {profiles: {['a'.repeat(65)]: {db: '/a.db'}}},
    JSON.parse('{"profiles": {"__proto__": {"db": "/a.db"}}}'),
    JSON.parse('{"__proto__": {"db": "/a.db"}}'),
    [],
    null,
    'db',
    42,
  ]
  it.each(documents.map((d) => [JSON.stringify(d), d]))('%s', (_text, document) => {
    expect(isConfigFileShape(document)).toBe(ConfigFile.safeParse(document).success)
  })
})
