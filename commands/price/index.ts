import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {priceFlags} from '../../src/cli/price-flags.js'
import {table} from '../../src/cli/render.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice, type LockConflict} from '../../src/pricing/price.js'
import {assertNoInputConflict, requestFromFlags} from '../../src/cli/pricing/request.js'
import {priceResultSchema} from '../../src/schemas/on-first-use.js'
import type {PriceResult} from '../../src/schemas/price.js'

export default class Price extends BaseCommand<typeof Price> {
  static override summary = 'Localized (or experimental) price of products for a user'
  static override description = `Localized (or experimental) price of products for a user

The first call for a user (or, without a user id, an IP) computes the quote and locks it;
later calls return the locked quote until --override. With --input FILE, prices one request
per JSONL line or CSV row and streams one result per line.`
  static override examples = [
    '<%= config.bin %> price --user-id u1 --product pro_monthly --country DE',
    '<%= config.bin %> price -u u1 -p pro_monthly -p pro_yearly --integration gateway_a --json',
    '<%= config.bin %> price --ip 81.2.69.142 --product pro_monthly',
    'echo \'{"user_id":"u2","products":["pro_monthly"],"country":"IN"}\' | <%= config.bin %> price --body - --json',
    '<%= config.bin %> price --input requests.jsonl > quotes.jsonl',
  ]
  static override flags = {
    ...priceFlags,
    input: Flags.string({description: 'Price every request of a JSONL or CSV file (- for stdin); one result per line on stdout'}),
    'input-format': Flags.string({description: 'Format of --input (default: from the extension, else JSONL)', options: ['jsonl', 'csv']}),
    output: Flags.string({default: 'jsonl', description: 'Format of --input results', options: ['jsonl', 'csv']}),
  }
  static override get outputSchema() {
    return priceResultSchema()
  }

  async run(): Promise<PriceResult | undefined> {
    const {flags} = this
    assertNoInputConflict(flags)
    const ctx = await PricingContext.open(await this.store(), {geoipDb: flags['geoip-db']})
    if (flags.input) {
      const started = performance.now()
      // Loaded only for batches (with its CSV reader): a single call starts faster without it.
      const {priceBatch} = await import('../../src/pricing/batch.js')
      const summary = await priceBatch(ctx, flags.input, process.stdout, {
        format: flags['input-format'] as 'csv' | 'jsonl' | undefined,
        onError: (line, message) => process.stderr.write(`line ${line}: ${message}\n`),
        output: flags.output as 'csv' | 'jsonl',
      })
      const seconds = (performance.now() - started) / 1000
      process.stderr.write(`priced ${summary.priced} of ${summary.read} requests in ${seconds.toFixed(2)} s (${Math.round(summary.read / Math.max(seconds, 1e-9))}/s)${summary.failed ? `; ${summary.failed} failed` : ''}\n`)
      if (summary.failed > 0) this.exit(1)
      return undefined
    }
    // Human output only: --json stays the spec's body.
    const conflicts: LockConflict[] = []
    const onLockWins = this.jsonEnabled() ? undefined : (c: LockConflict) => conflicts.push(c)
    const result = await calculatePrice(ctx, requestFromFlags(flags), {onLockWins})
    if (!this.jsonEnabled()) this.log(renderPrice(result))
    for (const c of conflicts) process.stderr.write(lockNote(c, this.argv) + '\n')
    return result
  }
}

export function renderPrice(r: PriceResult): string {
  const head = `${r.user_id}: ${r.country}, ${r.currency} (${r.currency_symbol}), audience ${r.audience.api_id}` +
    (r.package_id ? `, package ${r.package_id}` : '') +
    (r.variants.experimented_on ? `, experiment ${r.variants.experiment_id} arm ${r.variants.arm_id}` : '')
  const rows = Object.entries(r.products)
  const body = table(rows, [
    {header: 'product', value: ([id]) => id},
    {header: 'price', value: ([, p]) => p.display.price_with_baseline_strike},
    {header: 'interval', value: ([, p]) => (p.interval === 'one_time' ? 'one time' : `${p.interval_count} ${p.interval}`)},
    {header: 'per month', value: ([, p]) => p.display.reference_interval_price},
    {header: 'USD', value: ([, p]) => p.price_usd},
    {header: 'coupon', value: ([, p]) => (p.coupon ? `${p.coupon.api_id}: ${p.coupon.display.local_price_formatted}` : '')},
    {header: 'gateways', value: ([, p]) => Object.entries(p.integrations).map(([g, o]) => `${g} ${o.amount} ${o.currency}`).join('\n')},
  ])
  return `${head}\n${body}`
}

/** Quoted for a POSIX shell when it needs to be. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}

/** "note: u1's quote is locked in FR (EUR) since ...; --country DE was not applied: run ... to recompute". */
export function lockNote(c: LockConflict, argv: string[]): string {
  const asked = [c.asked.country && `--country ${c.asked.country}`, c.asked.currency && `--currency ${c.asked.currency}`].filter(Boolean).join(' and ')
  const again = ['pricectl', 'price', ...argv.filter((a) => a !== '--override'), '--override'].map(shellWord).join(' ')
  const keep = c.asked.currency ? ` (or --override-currency instead of --override to keep the locked amounts and show them in ${c.asked.currency})` : ''
  return `note: ${c.lock_key}'s quote is locked in ${c.country} (${c.currency}) since ${c.created_at}; ${asked} ${asked.includes(' and ') ? 'were' : 'was'} not applied: run "${again}" to recompute${keep}`
}
