import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * One rule for every command (README "Exit codes", docs/api.md "Errors"): a named thing that
 * does not exist exits 1 (HTTP 404), whichever command names it, as an argument, a flag or a
 * field of a body; the message names the value and the command that lists what exists.
 */
describe('a named thing that does not exist', () => {
  let db: string
  beforeAll(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
  })
  const bodies = mkdtempSync(join(tmpdir(), 'pricectl-not-found-'))
  const body = (name: string, value: unknown): string => {
    const file = join(bodies, `${name}.json`)
    writeFileSync(file, JSON.stringify(value))
    return file
  }

  const cases: {args: () => string[]; hint: RegExp; value: string}[] = [
    // products
    {args: () => ['products', 'get', 'nope_product'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['products', 'update', 'nope_product', '--base-px', '5'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['products', 'delete', 'nope_product', '--yes'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['products', 'localize', 'nope_product', '--country', 'DE'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['price', '--product', 'nope_product', '--country', 'US', '--user-id', 'u1'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['price', 'explain', '--product', 'nope_product', '--country', 'US', '--user-id', 'u1'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['price', 'preview', '--product', 'nope_product', '--country', 'US'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['experiments', 'create', '--name', 'x', '-p', 'nope_product', '--arm', 'x0.9'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['experiments', 'simulate', '--product', 'nope_product', '--demand', '9.99=0.1', '--arm', 'x0.9', '--arm', 'x1.1'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['history', '--product', 'nope_product'], hint: /pricectl products list/, value: 'nope_product'},
    {args: () => ['packages', 'create', '--body', body('package', {api_id: 'pk', name: 'P', products: ['nope_product']})], hint: /pricectl products list/, value: 'nope_product'},
    // experiments
    {args: () => ['experiments', 'show', '999'], hint: /pricectl experiments list/, value: '999'},
    {args: () => ['experiments', 'start', '999'], hint: /pricectl experiments list/, value: '999'},
    {args: () => ['experiments', 'results', '999'], hint: /pricectl experiments list/, value: '999'},
    {args: () => ['experiments', 'delete', '999', '--yes'], hint: /pricectl experiments list/, value: '999'},
    {args: () => ['price', 'preview', '--product', 'pro_monthly', '--country', 'US', '--experiment', '999'], hint: /pricectl experiments list/, value: '999'},
    // coupons
    {args: () => ['coupons', 'get', 'NOPE_COUPON'], hint: /pricectl coupons list/, value: 'NOPE_COUPON'},
    {args: () => ['coupons', 'delete', 'NOPE_COUPON', '--yes'], hint: /pricectl coupons list/, value: 'NOPE_COUPON'},
    {args: () => ['price', '--product', 'pro_monthly', '--country', 'US', '--coupon', 'pro_monthly=NOPE_COUPON', '--user-id', 'u1'], hint: /pricectl coupons list/, value: 'NOPE_COUPON'},
    {args: () => ['campaigns', 'create', '--body', body('campaign', {active_from: '2020-01-01', api_id: 'cmp', coupon: 'NOPE_COUPON', name: 'C'})], hint: /pricectl coupons list/, value: 'NOPE_COUPON'},
    // audiences, packages, campaigns
    {args: () => ['audiences', 'get', 'nope_audience'], hint: /pricectl audiences list/, value: 'nope_audience'},
    {args: () => ['audiences', 'delete', 'nope_audience', '--yes'], hint: /pricectl audiences list/, value: 'nope_audience'},
    {args: () => ['price', 'preview', '--product', 'pro_monthly', '--country', 'US', '--audience', 'nope_audience'], hint: /pricectl audiences list/, value: 'nope_audience'},
    {args: () => ['packages', 'get', 'nope_package'], hint: /pricectl packages list/, value: 'nope_package'},
    {args: () => ['packages', 'delete', 'nope_package', '--yes'], hint: /pricectl packages list/, value: 'nope_package'},
    {args: () => ['price', '--package-id', 'nope_package', '--country', 'US', '--user-id', 'u1'], hint: /pricectl packages list/, value: 'nope_package'},
    {args: () => ['campaigns', 'get', 'nope_campaign'], hint: /pricectl campaigns list/, value: 'nope_campaign'},
    {args: () => ['campaigns', 'delete', 'nope_campaign', '--yes'], hint: /pricectl campaigns list/, value: 'nope_campaign'},
    // API keys, users, subscriptions, charges, history
    {args: () => ['keys', 'revoke', 'pk_NOPEnope', '--yes'], hint: /pricectl keys list/, value: 'pk_NOPEnope'},
    {args: () => ['user', 'get', 'nope_user'], hint: /pricectl price/, value: 'nope_user'},
    {args: () => ['subscriptions', 'get', 'nope_user', 'gateway_a', 'sub_1'], hint: /pricectl subscriptions list/, value: 'nope_user'},
    {args: () => ['charges', 'get', 'nope_user', 'gateway_a', 'ch_1'], hint: /pricectl charges list/, value: 'nope_user'},
    {args: () => ['history', 'show', '999'], hint: /pricectl history/, value: '999'},
    {args: () => ['revert', '999', '--yes'], hint: /pricectl history/, value: '999'},
  ]

  it.each(cases.map((c) => [c.args().slice(0, 3).join(' '), c] as const))('%s exits 1 naming the value and what to run', async (_, c) => {
    const args = c.args()
    const text = await run(db, args)
    expect(text.code, `${args.join(' ')}: ${text.stderr}`).toBe(1)
    expect(text.stderr).toContain(c.value)
    expect(text.stderr).toMatch(c.hint)
    // Not a usage error: no "--help" to read.
    expect(text.stderr).not.toMatch(/--help/)
    const json = await run(db, [...args, '--json'])
    expect(json.code).toBe(1)
    expect(json.json).toMatchObject({success: false})
    // The message, or (price preview) the row's entry in "errors".
    expect(JSON.stringify(json.json)).toContain(c.value)
  })
})
