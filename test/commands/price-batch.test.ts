import {copyFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {run, tempStore} from '../helpers/run.js'
import {at, coupon, must, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * `price --input` shares computed quotes and serialized product prices between requests
 * for speed. Whatever it shares, each line must be exactly what `price --json` prints for
 * the same request on the same store: the same text, key order included.
 */
const NOW = '2026-03-01T00:00:00Z'

const REQUESTS: Record<string, unknown>[] = [
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u1'},
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u2'},
  {country: 'JP', integrations: ['gateway_a', 'gateway_c'], products: ['basic', 'lifetime'], user_id: 'u3'},
  {country: 'JP', integrations: ['gateway_a', 'gateway_c'], products: ['basic', 'lifetime'], user_id: 'u4'},
  {country: 'US', products: ['basic'], user_id: 'u5'},
  {country: 'US', currency: 'EUR', products: ['basic', 'yearly'], user_id: 'u6'},
  {coupons: {basic: 'TEN'}, country: 'DE', products: ['basic'], user_id: 'u7'},
  {coupons: {basic: 'TEN,USD4'}, country: 'US', products: ['basic', 'yearly'], user_id: 'u8'},
  {country: 'DE', features: {level: 12}, products: ['basic', 'lifetime'], user_id: 'u9'},
  {country: 'DE', features: {level: 3}, products: ['basic', 'lifetime'], user_id: 'u10'},
  {country: 'AT', products: ['basic'], user_id: 'u11'},
  {country: 'FR', user_id: 'u12'},
  {country: 'FR', package_id: 'fr_pkg', user_id: 'u13'},
  {country: 'BR', products: ['basic', 'yearly', 'lifetime'], user_id: 'u14'},
  {country: 'BR', products: ['basic', 'yearly', 'lifetime'], user_id: 'u15'},
  {country: 'GB', products: ['yearly'], run_experiment: false, user_id: 'u16'},
  {ip: '81.2.69.142', products: ['basic']},
  {ip: '81.2.69.142', products: ['basic', 'yearly'], user_id: 'u17'},
  // Locked users: the same users again, one with a product its lock lacks, one overridden.
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u1'},
  {country: 'JP', integrations: ['gateway_a', 'gateway_c'], products: ['basic', 'lifetime'], user_id: 'u3'},
  {country: 'US', products: ['basic', 'lifetime'], user_id: 'u5'},
  {country: 'IN', override: true, products: ['basic'], user_id: 'u2'},
  {currency: 'JPY', override_currency: true, products: ['basic'], user_id: 'u6'},
  {coupons: {basic: 'TEN'}, country: 'DE', products: ['basic'], user_id: 'u7'},
  {country: 'DE', products: ['basic', 'yearly'], user_id: 'u2'},
]

let fixture: string

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
  for (const c of [coupon('TEN', {coupon_type: 'percentage', value: 10}), coupon('USD4', {coupon_type: 'fixed_amount', currency: 'USD', value: 4})]) {
    await must(fixture, ['coupons', 'create'], c)
  }
  await must(fixture, ['audiences', 'create'], {api_id: 'a1', name: 'Level ten', prices: [{multiplier: 0.8, product: 'basic'}], priority: 1, rules: ['feature level gt 9']})
  await must(fixture, ['audiences', 'create'], {api_id: 'dach', name: 'DACH', priority: 2, rules: ['country in AT,CH']})
  await must(fixture, ['campaigns', 'create'], {api_id: 'dach_sale', audience: 'dach', coupon: 'TEN', name: 'Sale'})
  await must(fixture, ['packages', 'create'], {api_id: 'fr_pkg', countries: ['FR'], name: 'France', products: ['basic', 'yearly']})
  const e = await run(fixture, ['experiments', 'create', '--name', 'br', '-p', 'basic', '--arm', 'x0.8', '--arm', 'x1.2', '--country', 'BR', '--allocation', 'uniform', '--json'])
  expect(e.code).toBe(0)
  expect((await run(fixture, ['experiments', 'start', String(e.json.experiment.id)])).code).toBe(0)
}, 60_000)

function copyOf(db: string): string {
  const copy = tempStore()
  copyFileSync(db, copy)
  return copy
}

describe('price --input prints what price --json prints', () => {
  it('line for line, byte for byte, for new and locked users, coupons, audiences, packages, experiments', async () => {
    const batchDb = copyOf(fixture)
    const singleDb = copyOf(fixture)
    const file = join(dirname(batchDb), 'requests.jsonl')
    writeFileSync(file, REQUESTS.map((r) => JSON.stringify(r)).join('\n') + '\n')
    const batch = await at(NOW, () => run(batchDb, ['price', '--input', file]))
    expect(batch.stderr).not.toMatch(/line \d+:/)
    expect(batch.code).toBe(0)
    const lines = batch.stdout.split('\n').filter(Boolean)
    expect(lines).toHaveLength(REQUESTS.length)

    for (const [i, request] of REQUESTS.entries()) {
      const body = join(dirname(singleDb), `request-${i}.json`)
      writeFileSync(body, JSON.stringify(request))
      const single = await at(NOW, () => run(singleDb, ['price', '--body', body, '--json']))
      expect(single.code, single.stderr).toBe(0)
      expect(lines[i], `request ${i}: ${JSON.stringify(request)}`).toBe(JSON.stringify(single.json))
    }
  }, 120_000)

  it('a line spelling its keys with JSON escapes is priced as the plain line (an IP written "\\u0069p" too)', async () => {
    const plain = '{"ip":"81.2.69.142","products":["basic"],"user_id":"esc"}'
    const escaped = String.raw`{"\u0069p":"81.2.69.142","products":["basic"],"user_\u0069d":"esc"}`
    const outputs: string[] = []
    for (const line of [plain, escaped]) {
      const db = copyOf(fixture)
      const file = join(dirname(db), 'requests.jsonl')
      writeFileSync(file, line + '\n')
      const r = await at(NOW, () => run(db, ['price', '--input', file]))
      expect(r.stderr).not.toMatch(/line \d+:/)
      expect(r.code).toBe(0)
      outputs.push(r.stdout)
    }
    expect(JSON.parse(outputs[1]).country).toBe('GB')
    expect(outputs[1]).toBe(outputs[0])
  })

  it('the experiment and the coupons above really apply (the comparison covers them)', async () => {
    const db = copyOf(fixture)
    const file = join(dirname(db), 'requests.jsonl')
    writeFileSync(file, REQUESTS.map((r) => JSON.stringify(r)).join('\n') + '\n')
    const lines = (await at(NOW, () => run(db, ['price', '--input', file]))).stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(lines[13].variants.experimented_on).toBe(true)
    expect(lines[6].products.basic.coupon.api_id).toBe('TEN')
    expect(lines[10].products.basic.coupon.api_id).toBe('TEN')
    expect(lines[8].audience.api_id).toBe('a1')
    expect(lines[12].package_id).toBe('fr_pkg')
  })
})
