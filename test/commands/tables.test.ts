import fc from 'fast-check'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import stringWidth from 'string-width'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'

import {fitWidths, wrapText} from '../../src/cli/render.js'
import {run, tempStore, withEnv} from '../helpers/run.js'

const lines = (text: string) => text.split('\n').filter((l) => l !== '')
/** The widest line of the tables in an output (sentences around them may be longer). */
const widest = (text: string) => Math.max(...lines(text).filter((l) => /^[┌│├└]/.test(l)).map((l) => stringWidth(l)))

describe('fitting a width', () => {
  it('keeps natural widths that fit, and cuts only the widest columns to a common cap', () => {
    expect(fitWidths([5, 10, 20], 100)).toEqual([5, 10, 20])
    expect(fitWidths([5, 10, 40], 35)).toEqual([5, 10, 20])
    expect(fitWidths([5, 30, 40], 35)).toEqual([5, 15, 15])
    // A header's longest word is kept whole while the floors fit.
    expect(fitWidths([8, 30, 40], 40, [8, 12, 14])).toEqual([8, 16, 16])
    // Nothing below 6 columns: a table too wide even then runs over rather than shrink to nothing.
    expect(fitWidths([20, 20, 20], 9)).toEqual([6, 6, 6])
  })

  it('wraps at spaces and after _ - / : , ; and cuts longer words, dropping nothing (property)', () => {
    expect(wrapText('gateway_a_with_interval:prod_pro:month:1 gateway_c:pro-monthly', 12)).toBe('gateway_a_\nwith_\ninterval:\nprod_pro:\nmonth:1\ngateway_c:\npro-monthly')
    expect(wrapText('averyveryverylongtoken', 8)).toBe('averyver\nyverylon\ngtoken')
    expect(wrapText('short', 8)).toBe('short')
    fc.assert(
      fc.property(fc.string({maxLength: 200, unit: fc.constantFrom('a', 'b', ' ', '_', '-', ':', 'é', '€', '日')}), fc.integer({max: 30, min: 2}), (text, width) => {
        const wrapped = wrapText(text, width)
        for (const line of wrapped.split('\n')) expect(stringWidth(line)).toBeLessThanOrEqual(width)
        expect(wrapped.replaceAll(/\s/g, '')).toBe(text.replaceAll(/\s/g, ''))
      }),
    )
  })
})

describe('tables', () => {
  let db: string
  beforeAll(async () => {
    db = tempStore()
    expect((await run(db, ['demo'])).code).toBe(0)
  })
  afterEach(() => {
    delete process.env.COLUMNS
  })

  it('draw no rule between rows: one under the header, the frame around', async () => {
    const r = await run(db, ['products', 'list'])
    expect(r.code, r.stderr).toBe(0)
    const ls = lines(r.stdout)
    expect(ls.filter((l) => l.startsWith('├'))).toHaveLength(1)
    expect(ls.filter((l) => l.startsWith('│'))).toHaveLength(8) // the header and seven products
  })

  it('fit $COLUMNS when output is not a terminal (price explain, the revenue report), and keep whole lines without it', async () => {
    const explain = ['price', 'explain', '-u', 'bob', '-p', 'pro_yearly', '--ip', '81.2.69.142']
    const whole = await run(db, explain)
    expect(widest(whole.stdout)).toBeGreaterThan(150)
    process.env.COLUMNS = '80'
    const fitted = await run(db, explain)
    expect(fitted.code, fitted.stderr).toBe(0)
    expect(widest(fitted.stdout)).toBeLessThanOrEqual(80)
    // Wrapped, not cut: every word of the explanation is still there.
    expect(fitted.stdout.replaceAll(/[\s│]/g, '')).toContain('nolocalizationfactor')
    const report = await run(db, ['revenue', 'report'])
    expect(report.code, report.stderr).toBe(0)
    expect(widest(report.stdout)).toBeLessThanOrEqual(80)
    const record = await run(db, ['db', 'info'])
    expect(widest(record.stdout)).toBeLessThanOrEqual(80)
  })
})

describe('--columns, --sort and --no-header on lists', () => {
  let db: string
  beforeAll(async () => {
    db = tempStore()
    expect((await run(db, ['demo'])).code).toBe(0)
  })

  it('pick and order columns by header, sort by one (numbers as numbers, - descending), drop the header', async () => {
    const r = await run(db, ['products', 'list', '--columns', 'base_px, API_ID', '--sort=-base_px', '--no-header', '--output', 'csv'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('199,lifetime\n99.99,pro_yearly\n79.99,pro_yearly_intro\n26.99,pro_quarterly\n14.99,template_pack\n9.99,pro_monthly\n4.99,basic_monthly\n')
    const table = await run(db, ['products', 'list', '--columns', 'api_id,base_px', '--sort', 'base_px'])
    const rows = lines(table.stdout).filter((l) => l.startsWith('│'))
    expect(rows[0]).toMatch(/│ api_id\s+│ base_px │/)
    expect(rows[1]).toMatch(/│ basic_monthly\s+│ 4\.99\s+│/)
    expect(rows.at(-1)).toMatch(/│ lifetime\s+│ 199\s+│/)
    const bare = await run(db, ['coupons', 'list', '--columns', 'api_id', '--no-header'])
    expect(lines(bare.stdout).some((l) => l.includes('api_id'))).toBe(false)
    expect(lines(bare.stdout).filter((l) => l.startsWith('├'))).toHaveLength(0)
  })

  it('are the same flags on every list, and --json keeps the response shape', async () => {
    for (const list of ['audiences', 'campaigns', 'charges', 'coupons', 'experiments', 'fx', 'gateways', 'keys', 'localization', 'packages', 'products', 'rounding', 'subscriptions']) {
      const r = await run(db, [list, 'list', '--columns', 'nope'])
      // An empty list prints a sentence, not a table: nothing to check the column against.
      if (r.code === 0) continue
      expect(r.code, list).toBe(2)
      expect(r.stderr, list).toMatch(/^Error: --columns: no column "nope" \(columns: .+\)\. See "pricectl \w+ list --help"\.\n$/)
    }
    // --json prints the response as it is: the table flags do not apply (nor are checked).
    const json = await run(db, ['products', 'list', '--columns', 'api_id', '--sort', 'nope', '--json'])
    expect(json.code).toBe(0)
    expect(Object.keys(json.json.products[0])).toContain('base_px')
  })

  it('an unknown --sort column exits 2 naming the columns; the next command is not affected', async () => {
    const r = await run(db, ['products', 'list', '--sort', 'price', '--output', 'csv'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('Error: --sort: no column "price" (columns: api_id, name, base_px, billing, min_px, max_px, countries, integrations). See "pricectl products list --help".\n')
    const next = await run(db, ['rounding', 'test', 'EUR', '9.5', '1.2'])
    expect(next.code, next.stderr).toBe(0)
    expect(next.stdout).toMatch(/amount\s*│\s*rounded/)
  })
})

/**
 * Issue 32 item 9: at a narrow width every line fits (display width, not length); a table
 * that cannot fit without splitting a word becomes records ("key │ value" blocks, as psql's
 * \x), no number or identifier split and every value whole; a wide output is unchanged.
 */
describe('narrow terminals', () => {
  let db: string
  beforeAll(async () => {
    db = tempStore()
    await withEnv({PRICECTL_NOW: '2026-03-01'}, async () => {
      expect((await run(db, ['demo'])).code).toBe(0)
      expect((await run(db, ['experiments', 'create', '--name', 'pro price', '-p', 'pro_monthly', '--arm', 'x0.8', '--arm', 'x1.2', '--seed', '3', '--start'])).code).toBe(0)
      const requests = join(dirname(db), 'visitors.jsonl')
      writeFileSync(requests, Array.from({length: 30}, (_, i) => JSON.stringify({country: 'US', products: ['pro_monthly'], user_id: `v${i}`})).join('\n'))
      expect((await run(db, ['price', '--input', requests])).code).toBe(0)
      for (const i of [1, 2, 3]) {
        const sub = ['subscriptions', 'create', '--user-id', `v${i}`, '--origin', 'gateway_a', '--origin-id', `s${i}`, '--product', 'pro_monthly', '--amount', '1234567.5', '--currency', 'USD']
        expect((await run(db, [...sub, '--created', '2026-01-10T08:30:00Z', '--status', 'active', '--event-timestamp', '2026-01-10T08:30:05Z'])).code).toBe(0)
      }
    })
  })
  const commands = [['products', 'list'], ['revenue', 'report'], ['experiments', 'results', '1']]
  const at = (columns: string, args: string[]) => withEnv({COLUMNS: columns, PRICECTL_NOW: '2026-03-01'}, () => run(db, args))
  /** A word of the output stands whole on one line (not split across lines). */
  const whole = (out: string, word: string) => out.split('\n').some((l) => l.split(/[\s│]+/).includes(word))

  for (const columns of ['60', '40']) {
    it(`every line of products list, revenue report and experiments results fits COLUMNS=${columns}, no number split`, async () => {
      for (const args of commands) {
        const r = await at(columns, args)
        expect(r.code, r.stderr).toBe(0)
        for (const line of r.stdout.split('\n')) expect(stringWidth(line), `${args.join(' ')}: ${line}`).toBeLessThanOrEqual(Number(columns))
      }
      const products = (await run(db, ['products', 'list', '--json'])).json.products as {api_id: string; base_px: number; integrations: unknown[]; max_px: null | number; min_px: null | number; name: string}[]
      const list = (await at(columns, ['products', 'list'])).stdout
      expect(list).toContain('─[ RECORD 7 ]')
      for (const p of products) {
        expect(whole(list, p.api_id), p.api_id).toBe(true)
        for (const n of [p.base_px, p.min_px, p.max_px]) if (n !== null) expect(whole(list, String(n)), String(n)).toBe(true)
        expect(list).toContain(`│ ${p.name}`)
      }
      // Integration ids stand whole where the width allows it (each is one word).
      for (const word of ['gateway_a:prod_basic_monthly', 'gateway_d:pro_monthly_eur:EUR']) expect(whole(list, word), word).toBe(true)
      const report = (await at(columns, ['revenue', 'report'])).stdout
      expect(whole(report, '$3,703,702.50')).toBe(true)
      const results = await at(columns, ['experiments', 'results', '1'])
      const json = (await at(columns, ['experiments', 'results', '1', '--json'])).json
      for (const arm of json.arms) {
        expect(whole(results.stdout, `${(arm.probability_best * 100).toFixed(1)}%`)).toBe(true)
        expect(whole(results.stdout, arm.revenue_per_visitor_ci[1].toFixed(4))).toBe(true)
      }
    })
  }

  it('a wide output keeps the table, unchanged', async () => {
    for (const columns of ['200', '']) {
      const list = (await at(columns, ['products', 'list'])).stdout
      expect(list).not.toContain('RECORD')
      expect(list).toMatch(/│ basic_monthly\s+│ Basic Monthly\s+│ 4\.99\s+│/)
    }
  })
})
