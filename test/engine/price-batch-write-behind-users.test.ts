import {afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {openStore} from '../../src/store/db.js'
import {WriteBehindWriter} from '../../src/store/sqlite/write-behind.js'
import {batchInput, written} from '../helpers/pricing-store.js'
import {tempStore} from '../helpers/run.js'
import {at, coupon, must, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * Write-behind's users rows (docs/performance.md "New users: write-behind"): a new user's
 * users row is not sent to the writer but marked in its lock row, and the writer makes it from the
 * lock's key, country and time. What it makes must be the row that was sent before, in the
 * same order (the users table's rowids), also when marked and sent rows alternate: a lock
 * with a coupon has its quote as a text (never numbered), so its user's row is sent, and so
 * are the rest of that chunk's.
 */
const NOW = '2026-03-01T00:00:00Z'
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP']
/** Groups of 500 in chunks of 50, written behind from 500 on: the default's shape (5,000, 512) at a tenth. */
const GROUP = 500
const CHUNK = 50
const N = 1200

let fixture: string

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
  await must(fixture, ['coupons', 'create'], coupon('TEN', {coupon_type: 'percentage', value: 10}))
}, 60_000)

afterEach(() => {
  vi.restoreAllMocks()
})

/** New users; some with a coupon, some without a country (a stored one is read), some overridden a group later. */
function requests(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < N; i++) {
    if (i >= 600 && i % 19 === 0) out.push({country: 'JP', override: true, products: ['basic'], user_id: `u-${i - 550}`})
    else if (i % 199 === 0) out.push({coupons: {basic: 'TEN'}, country: COUNTRIES[i % COUNTRIES.length], products: ['basic'], user_id: `u-${i}`})
    else if (i % 13 === 0) out.push({products: ['basic'], user_id: `u-${i}`})
    else out.push({country: COUNTRIES[i % COUNTRIES.length], products: ['basic', 'yearly'], user_id: `u-${i}`})
  }
  return out
}

async function batch(reqs: Record<string, unknown>[], batchSize = GROUP): Promise<{lines: string[]; path: string}> {
  const {file, lines, out, path} = batchInput(fixture, reqs)
  const store = openStore(path)
  try {
    await at(NOW, async () => priceBatch(await PricingContext.open(store), file, out, {batchSize, chunkSize: CHUNK, output: 'jsonl', writeBehindMin: GROUP}))
  } finally {
    await store.close()
  }
  return {lines: lines(), path}
}

/** Users rows in what write-behind sent (write-behind.ts `rows`): made by the writer from a marked lock row, or sent. */
function usersRows(sent: unknown[][]): {made: number; sent: number} {
  let made = 0
  let sentRows = 0
  for (const values of sent) {
    for (let i = 0; i < values.length; ) {
      const v = values[i]
      if (v === false) i += 3
      else if (v === true) {
        sentRows++
        i += 4
      } else if (v === null || v === 0) {
        if (v === 0) made++
        i += 13
      } else {
        if (typeof values[i + 3] === 'number' && (values[i + 3] as number) < 0) made++
        i += 5
      }
    }
  }
  return {made, sent: sentRows}
}

describe('batch pricing with write-behind: users rows', () => {
  it('a users row the writer makes from its lock row is the one sent before, in the same order', async () => {
    const reqs = requests()
    // Groups of 499: write-behind does not start (its groups are 500 and more).
    const usual = await batch(reqs, GROUP - 1)
    const sent: unknown[][] = []
    const rows = WriteBehindWriter.prototype.rows
    const commit = WriteBehindWriter.prototype.commit
    vi.spyOn(WriteBehindWriter.prototype, 'rows').mockImplementation(function (this: WriteBehindWriter, values, exposures) {
      sent.push(values)
      rows.call(this, values, exposures)
    })
    vi.spyOn(WriteBehindWriter.prototype, 'commit').mockImplementation(function (this: WriteBehindWriter, values, exposures) {
      sent.push(values)
      return commit.call(this, values, exposures)
    })
    const behind = await batch(reqs)
    expect(behind.lines).toHaveLength(N)
    expect(behind.lines).toEqual(usual.lines)
    const stored = written(behind.path)
    // Rowid order: the users rows were inserted in the same order.
    expect(stored.users).toEqual(written(usual.path).users)
    expect(stored.locks).toEqual(written(usual.path).locks)
    // Both kinds were written behind: made from lock rows (most) and sent (coupons' users, and the rest of their chunk).
    const users = usersRows(sent)
    expect(users.made).toBeGreaterThan(500)
    expect(users.sent).toBeGreaterThan(0)
    // Groups 2 and 3 (700 requests) were written behind: a users row for each new lock, none for the overrides' users that kept their country.
    expect(users.made + users.sent).toBeGreaterThan(650)
    expect(users.made + users.sent).toBeLessThanOrEqual(700)
  }, 60_000)
})
