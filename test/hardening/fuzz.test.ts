import Database from 'better-sqlite3'
import fc from 'fast-check'
import {copyFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {dump, type StoreDump} from '../helpers/dump.js'
import {run, type Run} from '../helpers/run.js'
import {copyFixtureStore, expectCleanFailure, fixtureExpected, paymentsCsv, STACK_LINE, subscriptionsCsv, tempDir, utf16, WatchedStore, write} from './helpers.js'

/**
 * Bad input everywhere (issue 7, item 1). Every write command and every importer gets
 * malformed values: wrong types, huge numbers, NaN/Infinity, empty strings, unicode,
 * 10,000-character fields, broken quoting, latin-1 and UTF-16 bytes, a BOM, CRLF. What
 * must hold: exit 1 or 2 with one line on stderr (or the JSON error shape under --json),
 * no stack trace, and an unchanged store whenever the command rejects the input. Values
 * that may be legitimately accepted (unicode names) must then leave a sound store.
 *
 * Commands run in-process (fast); a few go through bin/run.js to check the real stderr.
 * fast-check runs with a fixed seed and a bounded number of runs.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_121)
const RUNS = Number(process.env.FUZZ_RUNS ?? 220)

let dir: string
let base: string
/** The dump of `base`, and so of every fresh copy of it. */
let baseDump: StoreDump
const saved = {ci: process.env.CI, debug: process.env.DEBUG, now: process.env.PRICECTL_NOW}

beforeAll(async () => {
  delete process.env.DEBUG
  process.env.CI = '1'
  process.env.PRICECTL_NOW = fixtureExpected().now
  dir = tempDir('pricectl-fuzz-')
  base = copyFixtureStore(dir)
  expect((await run(base, ['db', 'migrate', '--json'])).code).toBe(0)
  baseDump = dump(base)
})

afterAll(() => {
  for (const [k, v] of [['CI', saved.ci], ['DEBUG', saved.debug], ['PRICECTL_NOW', saved.now]] as const) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

let stores = 0
/** A private copy of the migrated fixture store. */
function freshStore(): string {
  const path = join(dir, `s${++stores}.db`)
  copyFileSync(base, path)
  return path
}

const watched: WatchedStore[] = []
/** A private copy of the migrated fixture store, watched for commits (check). */
function watchedStore(): WatchedStore {
  const store = new WatchedStore(freshStore(), baseDump)
  watched.push(store)
  return store
}
afterEach(() => {
  for (const store of watched.splice(0)) store.close()
})

/** SQLite's own verdict on a store a command wrote to. */
function expectSound(db: string, context: string): void {
  const d = new Database(db, {readonly: true})
  try {
    expect(d.pragma('integrity_check', {simple: true}), context).toBe('ok')
    expect(d.pragma('foreign_key_check'), context).toEqual([])
  } finally {
    d.close()
  }
}

type Outcome = {mustReject: boolean}

/**
 * Run one case and check the invariants: a rejection is clean and writes nothing; an
 * acceptance (only allowed when `mustReject` is false) leaves a sound store.
 */
async function check(store: WatchedStore, args: string[], o: Outcome & {json: boolean; partial?: boolean}): Promise<Run> {
  const before = store.current()
  const r = await run(store.path, o.json ? [...args, '--json'] : args)
  const context = `pricectl ${args.map((a) => (a.length > 80 ? `${a.slice(0, 60)}...(${a.length} chars)` : a)).map((a) => JSON.stringify(a)).join(' ')}${o.json ? ' --json' : ''}`
  if (r.code === 0) {
    expect(o.mustReject, `${context}\naccepted input that must be rejected: ${r.stdout.slice(0, 300)}`).toBe(false)
    expect(r.stderr, context).not.toMatch(STACK_LINE)
    expectSound(store.path, context)
    return r
  }
  expectCleanFailure(r, o.json, context)
  // Imports of gateway exports land the good rows and reject the rest (exit 1).
  if (!(o.partial && r.code === 1)) store.expectUnchanged(before, context)
  return r
}

// ------------------------------------------------------------------ values

type Kind = 'amount' | 'country' | 'currency' | 'date' | 'enum' | 'factor' | 'id' | 'int' | 'json' | 'name' | 'signed' | 'text' | 'timestamp'

const TEN_K = 'x'.repeat(10_000)

/** Values no numeric field may accept. */
const BAD_NUMBERS = ['NaN', 'nan', 'Infinity', '-Infinity', '+Infinity', '1e400', '-1e400', '99999999999999999999', '1e21', '', ' ', 'abc', '0x1F', '1,5', '١٢٣', '１２', '12abc', '--1', '1.2.3', '9'.repeat(400), '-7', 'null', 'true', '[]', '{}', TEN_K]
/** Bad for a whole number >= 1 (besides BAD_NUMBERS). */
const BAD_INTS = [...BAD_NUMBERS, '1.5', '0', '1e9999', '2147483648000']
/** Bad for a whole number that may be 0 or negative (priority, seed). */
const BAD_SIGNED = [...BAD_NUMBERS.filter((v) => v !== '-7'), '1.5', '1e9999', '2147483648000000']
const BAD_CODES = ['', ' ', 'xx', 'XXX', 'ZZ', 'EU', 'EURO', '€', '😀', '12', 'D E', '\u0000', TEN_K, "'; DROP TABLE fx_rates; --"]
const BAD_DATES = ['', 'yesterday', '2026-13-45', '2026-02-30', '0000-00-00', '99999-01-01', '2026-1-1', '1e10', 'NaN', TEN_K, '2026-01-01T25:00:00Z']
const BAD_TIMESTAMPS = ['', 'NaN', 'Infinity', '-1', '1.5', '1e400', '99999999999999999999', 'abc', '2026-13-45', TEN_K]
/** Strings a field may accept (unicode) or must reject (empty, control characters, 10,000 characters for ids). */
const ODD_STRINGS: [string, {id: boolean; name: boolean}][] = [
  ['', {id: true, name: true}],
  [' ', {id: false, name: true}],
  ['\t', {id: true, name: true}],
  [TEN_K, {id: true, name: true}],
  ['line\nbreak', {id: true, name: false}],
  ['nul\u0000byte', {id: true, name: true}],
  ['esc\u001b[31mred', {id: true, name: true}],
  ['lone \uD800 surrogate', {id: true, name: true}],
  ['ünïcødé ✓ café', {id: false, name: false}],
  ['😀🔥 emoji', {id: false, name: false}],
  ['مرحبا بالعالم', {id: false, name: false}],
  ['日本語の名前', {id: false, name: false}],
  ['e\u0301 combining', {id: false, name: false}],
  ["x'; DROP TABLE products; --", {id: false, name: false}],
  ['=HYPERLINK("http://evil")', {id: false, name: false}],
  ['%s%n%x', {id: false, name: false}],
  ['../../etc/passwd', {id: false, name: false}],
]

/** [value, must the field reject it?] for a field kind. */
function valuesOf(kind: Kind, enumValues: string[] = []): fc.Arbitrary<[string, boolean]> {
  const all0 = (xs: string[]) => xs.map((x) => [x, true] as [string, boolean])
  const all = (xs: string[]) => fc.constantFrom(...all0(xs))
  switch (kind) {
    case 'amount':
    case 'factor': {
      return all(BAD_NUMBERS)
    }

    case 'int': {
      return all(BAD_INTS)
    }

    case 'signed': {
      return all(BAD_SIGNED)
    }

    case 'country':
    case 'currency': {
      return all(BAD_CODES)
    }

    case 'date': {
      return all(BAD_DATES)
    }

    case 'timestamp': {
      return all(BAD_TIMESTAMPS)
    }

    case 'enum': {
      return all(['', 'x', TEN_K, ...enumValues.map((v) => v.toUpperCase() === v ? `${v.toLowerCase()}_` : v.toUpperCase()), ...enumValues.map((v) => ` ${v}x`)])
    }

    case 'id': {
      return fc.constantFrom(...ODD_STRINGS.map(([v, must]) => [v, must.id] as [string, boolean]))
    }

    case 'name': {
      return fc.constantFrom(...ODD_STRINGS.map(([v, must]) => [v, must.name] as [string, boolean]))
    }

    case 'json': {
      // null may clear an optional object; a long value inside valid JSON may be fine (free-form metadata).
      return fc.constantFrom<[string, boolean]>(...all0(['{', '{"a":', '[1,2', '{"a":NaN}', '{"a":Infinity}', "{'a':1}", '"just a string"', '42', '[]', TEN_K]), ['null', false], [`{"k":"${TEN_K}"}`, false])
    }

    case 'text': {
      // Short forms (KEY=VALUE, COUNTRY=AMOUNT:CURRENCY, rules): the last two parse as a
      // key with an empty or odd value, which some flags may legitimately take.
      return fc.constantFrom<[string, boolean]>(...all0(['', TEN_K, '\u0000', '{', ':::', '=x', '=']), ['x=', false], ['a=b=c:d:e:f:g', false])
    }
  }
}

/**
 * Values of the wrong JSON type (or out of range) for a --body field whose valid value is
 * `valid`, each with whether it must be rejected. null may clear an optional field, an
 * empty list or object may be a valid "none", a string "NaN" is a fine id: those may pass.
 */
function wrongValues(valid: unknown, field: string): [unknown, boolean][] {
  const isArray = Array.isArray(valid)
  const isObject = valid !== null && typeof valid === 'object' && !isArray
  const isNumber = typeof valid === 'number'
  const isString = typeof valid === 'string'
  return [
    [null, false],
    [true, true],
    [false, true],
    [[], !isArray],
    [[1, 2], true],
    [Array.from({length: 10_000}, () => 1), true],
    [{}, !isObject],
    [{nested: {deeper: [1]}}, !isObject],
    [1e308, true],
    [2 ** 63, true],
    [-0.001, true],
    [-1, !(isNumber && field === 'priority')],
    ['', true],
    [TEN_K, true],
    ['NaN', !isString],
    ['Infinity', !isString],
  ]
}

// ------------------------------------------------------------------ write commands

/** `nullable`: an empty value or null means "unset" for this flag (documented), so it may pass. */
type Field = {enum?: string[]; flag: string; kind: Kind; nullable?: boolean}
type Command = {
  /** Body field values of a valid call (snake_case). */
  body?: () => Record<string, unknown>
  fields: Field[]
  name: string
  /** Positional arguments: [value, kind] (fuzzed like fields). */
  positional?: [string, Kind][]
  /** A valid call, made unique per run with `n`. */
  valid: (n: number) => Record<string, string>
}

const f = (flag: string, kind: Kind, extra: Partial<Field> = {}): Field => ({flag, kind, ...extra})

const COMMANDS: Command[] = [
  {
    fields: [f('api-id', 'id'), f('name', 'name'), f('base-px', 'amount'), f('interval', 'enum', {enum: ['day', 'week', 'month', 'year', 'one_time']}), f('interval-count', 'int'), f('min-px', 'amount', {nullable: true}), f('max-px', 'amount', {nullable: true}), f('country-price', 'text'), f('integration', 'text'), f('trial', 'text'), f('feature', 'json'), f('baseline', 'id')],
    name: 'products create',
    valid: (n) => ({'api-id': `fz_${n}`, 'base-px': '9.99', interval: 'month', 'interval-count': '1', name: `Fuzz ${n}`}),
  },
  {
    fields: [f('name', 'name'), f('base-px', 'amount'), f('interval-count', 'int'), f('min-px', 'amount', {nullable: true}), f('max-px', 'amount', {nullable: true}), f('country-price', 'text'), f('integration', 'text'), f('baseline', 'id')],
    name: 'products update pro_monthly',
    valid: () => ({'base-px': '10.99'}),
  },
  {
    fields: [f('api-id', 'id'), f('name', 'name'), f('type', 'enum', {enum: ['percentage', 'fixed_amount']}), f('value', 'amount'), f('currency', 'currency'), f('active-from', 'date'), f('active-till', 'date'), f('status', 'enum', {enum: ['ACTIVE', 'NOT_ACTIVE']}), f('external', 'text')],
    name: 'coupons create',
    valid: (n) => ({'api-id': `FZ${n}`, name: `Fuzz coupon ${n}`, type: 'percentage', value: '10'}),
  },
  {
    fields: [f('name', 'name'), f('value', 'amount'), f('active-till', 'date'), f('status', 'enum', {enum: ['ACTIVE', 'NOT_ACTIVE']})],
    name: 'coupons update WELCOME10',
    valid: () => ({value: '15'}),
  },
  {
    fields: [f('api-id', 'id'), f('name', 'name'), f('priority', 'signed'), f('rule', 'text'), f('price', 'text')],
    name: 'audiences create',
    valid: (n) => ({'api-id': `aud_${n}`, name: `Audience ${n}`, priority: '3', rule: 'country in FR,BE'}),
  },
  {
    fields: [f('name', 'name'), f('priority', 'signed'), f('rule', 'text'), f('price', 'text')],
    name: 'audiences update dach',
    valid: () => ({priority: '2'}),
  },
  {
    fields: [f('name', 'name'), f('product', 'id'), f('country', 'country'), f('audience', 'id')],
    name: 'packages update br_basic',
    valid: () => ({country: 'BR,AR'}),
  },
  {
    fields: [f('api-id', 'id'), f('name', 'name'), f('product', 'id'), f('country', 'country'), f('audience', 'id')],
    name: 'packages create',
    valid: (n) => ({'api-id': `pkg_${n}`, country: 'FR', name: `Package ${n}`, product: 'pro_monthly'}),
  },
  {
    fields: [f('api-id', 'id'), f('name', 'name'), f('coupon', 'id'), f('country', 'country'), f('active-from', 'date'), f('active-till', 'date'), f('product', 'id')],
    name: 'campaigns create',
    valid: (n) => ({'active-from': '2026-04-01', 'active-till': '2026-04-30', 'api-id': `cmp_${n}`, country: 'FR', coupon: 'SAVE5', name: `Campaign ${n}`}),
  },
  {
    fields: [f('name', 'name'), f('product', 'id'), f('arm', 'text'), f('allocation', 'enum', {enum: ['thompson', 'uniform']}), f('country', 'country'), f('seed', 'signed'), f('type', 'enum', {enum: ['price', 'packaging']})],
    name: 'experiments create',
    valid: (n) => ({arm: 'x0.9', name: `Experiment ${n}`, product: 'lifetime'}),
  },
  {
    fields: [f('date', 'date'), f('source', 'name')],
    name: 'fx set',
    positional: [['GBP', 'currency'], ['0.79', 'factor']],
    valid: () => ({date: '2026-02-01', source: 'fuzz'}),
  },
  {
    fields: [],
    name: 'rounding set',
    positional: [['GBP', 'currency'], ['0-10: end .99 nearest; 10+: end 9 nearest', 'text']],
    valid: () => ({}),
  },
  {
    fields: [f('accept', 'text'), f('fallback', 'currency'), f('amount-format', 'enum', {enum: ['minor', 'decimal']})],
    name: 'gateways set gateway_c',
    valid: () => ({accept: 'EUR,USD', fallback: 'USD'}),
  },
  {
    fields: [f('year', 'int'), f('source', 'name')],
    name: 'localization set',
    positional: [['BR', 'country'], ['0.5', 'factor']],
    // BR's prices move by about -50%: beyond --max-change-pct, so --yes.
    valid: () => ({source: 'fuzz', year: '2024', yes: ''}),
  },
  {
    fields: [f('country', 'country')],
    name: 'localization clear',
    valid: () => ({country: 'IN', yes: ''}),
  },
  {
    fields: [f('user-id', 'id'), f('origin', 'enum', {enum: ['gateway_a', 'gateway_b', 'gateway_c']}), f('origin-id', 'id'), f('product', 'id'), f('amount', 'amount'), f('currency', 'currency'), f('created', 'timestamp'), f('status', 'enum', {enum: ['pending', 'trialing', 'active', 'canceled']}), f('country', 'country'), f('event-timestamp', 'timestamp'), f('event-id', 'id')],
    name: 'subscriptions create',
    valid: (n) => ({amount: '9.99', created: '1772323200', currency: 'USD', origin: 'gateway_a', 'origin-id': `sub_fz_${n}`, product: 'pro_monthly', status: 'active', 'user-id': `fz_user_${n}`}),
  },
  {
    fields: [f('amount', 'amount'), f('currency', 'currency'), f('created', 'timestamp'), f('status', 'enum', {enum: ['pending', 'trialing', 'active', 'canceled']}), f('canceled-at', 'timestamp'), f('event-timestamp', 'timestamp')],
    name: 'subscriptions update alice gateway_a sub_1',
    valid: () => ({amount: '89', 'event-timestamp': '1773590000'}),
  },
  {
    fields: [f('user-id', 'id'), f('origin', 'enum', {enum: ['gateway_a', 'gateway_b', 'gateway_c']}), f('origin-id', 'id'), f('product', 'id'), f('amount', 'amount'), f('amount-refunded', 'amount'), f('currency', 'currency'), f('created', 'timestamp'), f('status', 'enum', {enum: ['pending', 'succeeded', 'failed']}), f('metadata', 'json'), f('country', 'country')],
    name: 'charges create',
    valid: (n) => ({amount: '49', created: '1772323200', currency: 'EUR', origin: 'gateway_b', 'origin-id': `ch_fz_${n}`, product: 'lifetime', status: 'succeeded', 'user-id': `fz_user_${n}`}),
  },
  {
    fields: [f('amount', 'amount'), f('currency', 'currency'), f('created', 'timestamp'), f('status', 'enum', {enum: ['pending', 'succeeded', 'failed']}), f('metadata', 'json'), f('event-timestamp', 'timestamp')],
    name: 'charges update bob gateway_b ch_1',
    valid: () => ({'event-timestamp': '1773590000', status: 'failed'}),
  },
  {
    fields: [f('name', 'name')],
    name: 'keys create',
    valid: (n) => ({name: `key ${n}`}),
  },
  {
    fields: [f('user-id', 'id'), f('product', 'id'), f('country', 'country'), f('currency', 'currency'), f('ip', 'text'), f('feature', 'text'), f('coupon', 'text'), f('package-id', 'id'), f('integration', 'enum', {enum: ['gateway_a', 'gateway_b', 'gateway_c', 'gateway_d']})],
    name: 'price',
    valid: (n) => ({country: 'FR', product: 'pro_monthly', 'user-id': `fz_price_${n}`}),
  },
]

/** The spec's body field of a flag (kebab -> snake), where the command reads one. */
const bodyField = (flag: string) => flag.replaceAll('-', '_')

function argsOf(c: Command, flags: Record<string, string>, positional: string[] = (c.positional ?? []).map(([v]) => v)): string[] {
  const out = [...c.name.split(' '), ...positional]
  for (const [k, v] of Object.entries(flags)) out.push(v === '' && k === 'yes' ? '--yes' : `--${k}=${v}`)
  return out
}

let counter = 0

describe('write commands: malformed flag values', () => {
  it('every write command accepts its valid form (so the fuzzing below starts from a good call)', async () => {
    const db = freshStore()
    for (const c of COMMANDS) {
      const r = await run(db, [...argsOf(c, c.valid(++counter)), '--json'])
      expect(r.code, `${c.name}: ${r.stdout} ${r.stderr}`).toBe(0)
    }
  })

  it('one malformed value in any field (or positional argument): a clean rejection and no write', async () => {
    const store = watchedStore()
    const cases = fc.oneof(
      ...COMMANDS.filter((c) => c.fields.length > 0).map((c) =>
        fc.record({
          command: fc.constant(c),
          field: fc.constantFrom(...c.fields),
          json: fc.boolean(),
        }).chain((x) =>
          fc.record({
            command: fc.constant(x.command),
            field: fc.constant(x.field),
            json: fc.constant(x.json),
            value: valuesOf(x.field.kind, x.field.enum).map(([v, must]): [string, boolean] => [v, must && !(x.field.nullable && ['', ' ', 'null'].includes(v))]),
          }),
        ),
      ),
    )
    await fc.assert(
      fc.asyncProperty(cases, async ({command, field, json, value: [value, mustReject]}) => {
        const flags = {...command.valid(++counter), [field.flag]: value}
        await check(store, argsOf(command, flags), {json, mustReject})
      }),
      {numRuns: RUNS, seed: SEED},
    )
  })

  it('malformed positional arguments (currency, country, rate, factor, rule)', async () => {
    const store = watchedStore()
    const withPositional = COMMANDS.filter((c) => c.positional)
    const cases = fc.oneof(
      ...withPositional.flatMap((c) =>
        c.positional!.map((_, i) =>
          fc.tuple(fc.constant(c), fc.constant(i), valuesOf(c.positional![i][1] === 'text' ? 'text' : c.positional![i][1]), fc.boolean()),
        ),
      ),
    )
    await fc.assert(
      fc.asyncProperty(cases, async ([c, i, [value, mustReject], json]) => {
        const positional = c.positional!.map(([v]) => v)
        positional[i] = value
        await check(store, argsOf(c, c.valid(++counter), positional), {json, mustReject})
      }),
      {numRuns: 60, seed: SEED},
    )
  })
})

// ------------------------------------------------------------------ --body

/** Commands with --body and a valid body (the spec's field names). */
const BODIES: {args: string[]; body: (n: number) => Record<string, unknown>; name: string}[] = [
  {args: ['products', 'create'], body: (n) => ({api_id: `fzb_${n}`, base_px: 9.99, interval: 'month', interval_count: 1, name: `Fuzz body ${n}`}), name: 'products create'},
  {args: ['products', 'update', 'pro_monthly', '--yes'], body: () => ({base_px: 11.99, name: 'Pro Monthly'}), name: 'products update'},
  {args: ['coupons', 'create'], body: (n) => ({api_id: `FZB${n}`, coupon_type: 'percentage', name: `Body coupon ${n}`, value: 5}), name: 'coupons create'},
  {args: ['audiences', 'create'], body: (n) => ({api_id: `audb_${n}`, name: `Body audience ${n}`, priority: 1, rules: ['country in FR,BE']}), name: 'audiences create'},
  {args: ['packages', 'create'], body: (n) => ({api_id: `pkgb_${n}`, countries: ['FR'], name: `Body package ${n}`, products: ['pro_monthly']}), name: 'packages create'},
  {args: ['campaigns', 'create'], body: (n) => ({active_from: '2026-04-01', active_till: '2026-04-30', api_id: `cmpb_${n}`, countries: ['FR'], coupon: 'SAVE5', name: `Body campaign ${n}`}), name: 'campaigns create'},
  {args: ['experiments', 'create'], body: (n) => ({arms: [{multiplier: 0.9}], name: `Body experiment ${n}`, products: ['lifetime']}), name: 'experiments create'},
  {args: ['fx', 'set', 'GBP', '0.8'], body: () => ({date: '2026-02-02', source: 'body'}), name: 'fx set'},
  {args: ['gateways', 'set', 'gateway_c'], body: () => ({accepted_currencies: ['EUR', 'USD'], fallback_currency: 'USD'}), name: 'gateways set'},
  {args: ['localization', 'set', 'BR', '0.5', '--yes'], body: () => ({source: 'body', year: 2023}), name: 'localization set'},
  {args: ['subscriptions', 'create'], body: (n) => ({amount: 9.99, created: 1_772_323_200, currency: 'USD', origin: 'gateway_a', origin_id: `subb_${n}`, product: 'pro_monthly', status: 'active', user_id: `fzb_${n}`}), name: 'subscriptions create'},
  {args: ['subscriptions', 'update', 'alice', 'gateway_a', 'sub_1'], body: () => ({amount: 88}), name: 'subscriptions update'},
  {args: ['charges', 'create'], body: (n) => ({amount: 49, created: 1_772_323_200, currency: 'EUR', metadata: {a: 'b'}, origin: 'gateway_b', origin_id: `chb_${n}`, product: 'lifetime', status: 'succeeded', user_id: `fzb_${n}`}), name: 'charges create'},
  {args: ['charges', 'update', 'bob', 'gateway_b', 'ch_1'], body: () => ({status: 'failed'}), name: 'charges update'},
  {args: ['price'], body: (n) => ({country: 'FR', products: ['pro_monthly'], user_id: `fzb_price_${n}`}), name: 'price'},
]

describe('write commands: malformed --body files', () => {
  it('every body command accepts its valid body, also with a BOM and CRLF line ends', async () => {
    const db = freshStore()
    for (const b of BODIES) {
      const text = JSON.stringify(b.body(++counter), null, 2).replaceAll('\n', '\r\n')
      const file = write(dir, `valid-${counter}.json`, '\uFEFF' + text)
      const r = await run(db, [...b.args, '--body', file, '--json'])
      expect(r.code, `${b.name}: ${r.stdout} ${r.stderr}`).toBe(0)
    }
  })

  it('a field of the wrong type or out of range: rejected, nothing written', async () => {
    const store = watchedStore()
    const cases = fc
      .record({b: fc.constantFrom(...BODIES), json: fc.boolean()})
      .chain((x) => fc.record({b: fc.constant(x.b), field: fc.constantFrom(...Object.keys(x.b.body(0))), json: fc.constant(x.json)}))
      .chain((x) => fc.record({b: fc.constant(x.b), field: fc.constant(x.field), json: fc.constant(x.json), wrong: fc.constantFrom(...wrongValues(x.b.body(0)[x.field], x.field))}))
    await fc.assert(
      fc.asyncProperty(cases, async ({b, field, json, wrong: [value, mustReject]}) => {
        const body = {...b.body(++counter), [field]: value}
        const file = write(dir, `body-${counter}.json`, JSON.stringify(body))
        await check(store, [...b.args, '--body', file], {json, mustReject})
      }),
      {numRuns: 150, seed: SEED},
    )
  })

  it('broken JSON, wrong encodings, an array, an empty file: rejected with a clear message', async () => {
    const store = watchedStore()
    const valid = JSON.stringify({api_id: 'enc_1', base_px: 9.99, interval: 'month', interval_count: 1, name: 'Caf\u00e9'})
    const files: [string, string | Buffer, RegExp][] = [
      ['broken.json', '{"api_id": "x", "name": ', /malformed JSON/],
      ['single-quotes.json', "{'api_id': 'x'}", /malformed JSON/],
      ['trailing-comma.json', '{"api_id": "x",}', /malformed JSON/],
      ['nan.json', '{"base_px": NaN}', /malformed JSON/],
      ['array.json', '[1, 2, 3]', /expected a JSON object/],
      ['string.json', '"hello"', /expected a JSON object/],
      ['empty.json', '', /malformed JSON|empty/],
      ['utf16.json', utf16(valid), /UTF-16/],
      ['utf16-no-bom.json', Buffer.from(valid, 'utf16le'), /UTF-16|NUL|not UTF-8/],
      ['latin1.json', Buffer.from(valid, 'latin1'), /not UTF-8/],
      ['binary.json', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x0d, 0x0a, 0x0a]), /not UTF-8|NUL|malformed/],
      ['newline-in-snippet.json', '\n\n{\n"a"\n:\n\n', /malformed JSON/],
      // Refused for its depth before it is parsed (docs/hardening.md, "JSON nesting").
      ['deep.json', '['.repeat(100_000) + ']'.repeat(100_000), /--body: JSON nested more than 64 levels deep \(line 1\)/],
    ]
    for (const [name, content, message] of files) {
      const file = write(dir, name, content)
      for (const json of [false, true]) {
        const r = await check(store, ['products', 'create', '--body', file], {json, mustReject: true})
        // The message, from the JSON error shape.
        if (json) expect(r.json?.message, name).toMatch(message)
      }
    }
  })

  it('a 10,000-character value in every string field of a body: rejected or stored whole', async () => {
    const store = watchedStore()
    for (const b of BODIES) {
      const body = b.body(++counter)
      for (const field of Object.keys(body).filter((k) => typeof body[k] === 'string')) {
        const file = write(dir, `long-${counter}-${field}.json`, JSON.stringify({...body, [field]: TEN_K}))
        await check(store, [...b.args, '--body', file], {json: counter % 2 === 0, mustReject: !['source'].includes(field)})
      }
    }
  })
})

// ------------------------------------------------------------------ importers

/** `text` is a stored text value of the valid file, where the latin-1 case puts an é. */
type Importer = {args: (file: string) => string[]; ext: string; name: string; partial?: boolean; text: string; valid: () => string}

const IMPORTERS: Importer[] = [
  {
    args: (file) => ['products', 'import', file],
    ext: 'csv',
    name: 'products import (CSV)',
    text: 'Imported A',
    valid: () => 'api_id,name,base_px,interval,interval_count\nimp_a,Imported A,9.99,month,1\nimp_b,Imported B,19,year,1\n',
  },
  {
    args: (file) => ['products', 'import', file],
    ext: 'json',
    name: 'products import (JSON)',
    text: 'Imported J',
    valid: () => JSON.stringify([{api_id: 'imp_j', base_px: 5, interval: 'week', interval_count: 2, name: 'Imported J'}], null, 1),
  },
  {args: (file) => ['fx', 'import', file, '--format', 'csv'], ext: 'csv', name: 'fx import', text: 'EUR', valid: () => 'currency,rate,date\nEUR,0.91,2026-02-01\nGBP,0.78,2026-02-01\n'},
  {args: (file) => ['localization', 'import', file, '--format', 'csv', '--yes'], ext: 'csv', name: 'localization import', text: 'FR', valid: () => 'country,factor\nFR,0.9\nPL,0.55\n'},
  {args: (file) => ['charges', 'import', file], ext: 'csv', name: 'charges import', partial: true, text: 'u_1', valid: () => paymentsCsv(3)},
  {args: (file) => ['subscriptions', 'import', file], ext: 'csv', name: 'subscriptions import', partial: true, text: 'u_1', valid: () => subscriptionsCsv(3)},
]

/** Turn a valid file into a malformed one: [label, bytes, must it be rejected?]. */
function malformations(valid: string, text: string): [string, Buffer, boolean][] {
  const lines = valid.trimEnd().split('\n')
  const header = lines[0]
  const cells = lines[1].split(',')
  const row = (i: number, v: string) => cells.map((c, j) => (j === i ? v : c)).join(',')
  const isJson = /^\s*[[{]/.test(valid)
  const out: [string, Buffer, boolean][] = [
    ['a BOM', Buffer.from('\uFEFF' + valid), false],
    ['CRLF line ends', Buffer.from(valid.replaceAll('\n', '\r\n')), false],
    ['a BOM and CRLF', Buffer.from('\uFEFF' + valid.replaceAll('\n', '\r\n')), false],
    ['UTF-16 with a BOM', utf16(valid), true],
    ['UTF-16 without a BOM', Buffer.from(valid, 'utf16le'), true],
    ['an empty file', Buffer.alloc(0), true],
    ['only blank lines', Buffer.from('\n\r\n  \n'), true],
    ['binary garbage', Buffer.from(Array.from({length: 512}, (_, i) => (i * 131 + 7) % 256)), true],
    ['NUL bytes', Buffer.from(valid.replace(',', ',\u0000\u0000')), true],
  ]
  if (isJson) {
    out.push(
      ['broken JSON', Buffer.from(valid.slice(0, -3)), true],
      ['latin-1 bytes', Buffer.from(valid.replace(text, `${text}\u00e9`), 'latin1'), true],
      ['NaN', Buffer.from(valid.replace('5', 'NaN')), true],
      ['a 10,000-character name', Buffer.from(valid.replace('Imported J', TEN_K)), true],
    )
    return out
  }
  const n = cells.length
  out.push(
    ['latin-1 bytes', Buffer.concat([Buffer.from(`${header}\n`), Buffer.from(`${lines.slice(1).join('\n').replace(text, `${text}\u00e9`)}\n`, 'latin1')]), true],
    ['an unclosed quote', Buffer.from(`${header}\n${row(1, '"unclosed')}\n${lines.slice(2).join('\n')}\n`), true],
    // Accepted by lenient CSV readers as the literal text ab"c"d: either outcome is fine.
    ['a quote inside a bare cell', Buffer.from(`${header}\n${row(0, 'ab"c"d')}\n`), false],
    ['a row with too many cells', Buffer.from(`${header}\n${lines[1]},extra,cells\n`), true],
    ['a row with too few cells', Buffer.from(`${header}\n${cells.slice(0, Math.max(1, n - 2)).join(',')}\n`), true],
    ['NaN in every numeric cell', Buffer.from(`${header}\n${cells.map((c) => (/^-?\d/.test(c) ? 'NaN' : c)).join(',')}\n`), true],
    ['Infinity in every numeric cell', Buffer.from(`${header}\n${cells.map((c) => (/^-?\d/.test(c) ? 'Infinity' : c)).join(',')}\n`), true],
    ['huge numbers', Buffer.from(`${header}\n${cells.map((c) => (/^\d+(\.\d+)?$/.test(c) ? '9'.repeat(400) : c)).join(',')}\n`), true],
    ['a 10,000-character first cell', Buffer.from(`${header}\n${row(0, TEN_K)}\n`), true],
    // An export of a quiet period: nothing to import is not an error.
    ['a header only', Buffer.from(`${header}\n`), false],
    ['a header of 10,000 columns', Buffer.from(`${Array.from({length: 10_000}, (_, i) => `c${i}`).join(',')}\n${lines[1]}\n`), true],
  )
  return out
}

describe('importers: malformed files', () => {
  for (const imp of IMPORTERS) {
    describe(imp.name, () => {
      let expected: ReturnType<typeof dump>
      beforeAll(async () => {
        // The plain file imports, so a rejection below is about the malformation.
        const db = freshStore()
        const plain = write(tempDir(), `file.${imp.ext}`, imp.valid())
        const r = await run(db, [...imp.args(plain), '--json'])
        expect(r.code, `${r.stdout} ${r.stderr}`).toBe(0)
        expected = dump(db)
      })

      for (const [label, bytes, mustReject] of malformations(imp.valid(), imp.text)) {
        it(`${mustReject ? 'rejects' : 'accepts'} a file with ${label}`, async () => {
          const store = watchedStore()
          const file = write(tempDir(), `file.${imp.ext}`, bytes)
          const {code} = await check(store, imp.args(file), {json: label.length % 2 === 0, mustReject, partial: imp.partial})
          if (!mustReject && /BOM|CRLF/.test(label)) {
            expect(code).toBe(0)
            // A BOM or CRLF changes nothing in what lands; the history names this run's file.
            const withoutCommand = (tables: typeof expected.tables) => ({...tables, changes: tables.changes.map(({command, ...c}) => c)})
            const got = store.current().tables
            expect(withoutCommand(got)).toEqual(withoutCommand(expected.tables))
            // (Revenue imports are not recorded in the history.)
            if (expected.tables.changes.length > 0) expect(got.changes.at(-1)?.command).toContain(file)
          }
        })
      }
    })
  }
})

// ------------------------------------------------------------------ price --input

describe('price --input: malformed request lines', () => {
  it('each bad line is reported with its number, good lines are priced, the exit is 1, no stack trace', async () => {
    const store = watchedStore()
    const db = store.path
    const good = JSON.stringify({country: 'FR', products: ['pro_monthly'], user_id: 'batch_ok'})
    const bad = ['{', '[]', '"x"', '{"user_id": 5, "products": ["pro_monthly"]}', '{"user_id": "b1", "products": "pro_monthly"}', `{"user_id": "${TEN_K}", "products": ["pro_monthly"]}`, '{"user_id": "b2", "products": ["pro_monthly"], "country": "XX"}', '{"user_id": "b3", "products": ["pro_monthly"], "currency": "NaN"}', '{"user_id": "b4", "products": ["nosuch"]}', '{"ip": "999.1.1.1", "products": ["pro_monthly"]}', '\u0000\u0001\u0002', 'null']
    const file = write(dir, 'requests.jsonl', '\uFEFF' + [good, ...bad, good.replace('batch_ok', 'batch_ok2')].join('\r\n') + '\r\n')
    const r = await run(db, ['price', '--input', file])
    expect(r.code).toBe(1)
    expect(r.stderr).not.toMatch(STACK_LINE)
    const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(out).toHaveLength(bad.length + 2)
    expect(out[0].user_id).toBe('batch_ok')
    expect(out.at(-1).user_id).toBe('batch_ok2')
    for (const [i, o] of out.slice(1, -1).entries()) {
      expect(o, bad[i]).toMatchObject({line: i + 2, success: false})
      expect(o.message, bad[i]).not.toMatch(/^unexpected/)
    }
    const errors = r.stderr.split('\n').filter((l) => /^line \d+: /.test(l))
    expect(errors).toHaveLength(bad.length)

    // Lines and multi-byte characters cut by the 64 KiB read chunks come out whole.
    const many = Array.from({length: 3000}, (_, i) => JSON.stringify({country: 'FR', products: ['pro_monthly'], user_id: `café_ünï_${i}_${'é'.repeat(i % 40)}`}))
    const manyFile = write(dir, 'many.jsonl', many.join('\n'))
    const m = await run(db, ['price', '--input', manyFile])
    expect(m.code, m.stderr).toBe(0)
    expect(m.stdout.trim().split('\n').map((l) => JSON.parse(l).user_id)).toEqual(many.map((l) => JSON.parse(l).user_id))

    // CSV input: broken quoting and wrong encodings fail the file cleanly or the line.
    for (const [label, bytes] of [
      ['unclosed quote', Buffer.from('user_id,products,country\n"u1,pro_monthly,FR\n')],
      ['utf-16', utf16('user_id,products,country\nu1,pro_monthly,FR\n')],
      ['latin-1', Buffer.from('user_id,products,country\ncaf\u00e9,pro_monthly,FR\n', 'latin1')],
    ] as [string, Buffer][]) {
      const csvFile = write(dir, `requests-${label}.csv`, bytes)
      const before = store.current()
      const c = await run(db, ['price', '--input', csvFile, '--output', 'csv'])
      expect([1, 2], `${label}: ${c.stdout} ${c.stderr}`).toContain(c.code)
      expect(c.stderr, label).not.toMatch(STACK_LINE)
      store.expectUnchanged(before, label)
    }
  })
})
