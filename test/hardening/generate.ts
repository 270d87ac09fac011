/** Generated inputs of the hardening tests (no vitest import: bench scripts and tsx can use it too). */

/** Small deterministic PRNG (xorshift32) for generated files and kill points. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 0x1_0000_0000
  }
}

export const PAYMENTS_HEADER = 'id,Created date (UTC),Amount,Amount Refunded,Currency,Status,Customer ID,Description,user_id (metadata),product (metadata)'

/** A gateway_a payments export of `n` rows (ids ch_<prefix><i>), products of fixtures/stores/v1.db. */
export function paymentsCsv(n: number, options: {bad?: number[]; prefix?: string; start?: number} = {}): string {
  const prefix = options.prefix ?? ''
  const start = options.start ?? 0
  const bad = new Set(options.bad ?? [])
  const products = ['prod_pro', 'pro_yearly', 'lifetime']
  const lines = [PAYMENTS_HEADER]
  for (let i = start; i < start + n; i++) {
    const day = new Date(Date.UTC(2026, 0, 1) + (i % 60) * 86_400_000).toISOString().slice(0, 10)
    const currency = bad.has(i) ? 'xyz' : ['usd', 'eur', 'jpy'][i % 3]
    const amount = currency === 'jpy' ? String(1000 + (i % 7)) : `${9 + (i % 5)}.99`
    const status = i % 17 === 0 ? 'Failed' : 'Paid'
    lines.push(`ch_${prefix}${String(i).padStart(7, '0')},${day} 10:00:00,${amount},0.00,${currency},${status},cus_${i % 997},Pro plan,u_${i % 1499},${products[i % 3]}`)
  }
  return lines.join('\n') + '\n'
}

export const SUBSCRIPTIONS_HEADER = 'id,Customer ID,Status,Amount,Currency,Interval,Product,Created (UTC),Current Period Start (UTC),Trial Start (UTC),Trial End (UTC),Canceled At (UTC),user_id (metadata)'

/** A gateway_a subscriptions export of `n` rows. */
export function subscriptionsCsv(n: number, options: {bad?: number[]; start?: number} = {}): string {
  const start = options.start ?? 0
  const bad = new Set(options.bad ?? [])
  const lines = [SUBSCRIPTIONS_HEADER]
  for (let i = start; i < start + n; i++) {
    const day = new Date(Date.UTC(2025, 6, 1) + (i % 200) * 86_400_000).toISOString().slice(0, 10)
    const status = bad.has(i) ? 'exploded' : ['active', 'active', 'canceled', 'trialing'][i % 4]
    const canceled = status === 'canceled' ? `${day} 12:00:00` : ''
    // A 14-day trial (the 28th of the month used to end some trials before they began).
    const trialEnd = new Date(Date.UTC(2025, 6, 1) + ((i % 200) + 14) * 86_400_000).toISOString().slice(0, 10)
    const trial = status === 'trialing' ? [`${day} 10:00:00`, `${trialEnd} 10:00:00`] : ['', '']
    const [interval, product] = i % 2 === 0 ? ['month', 'prod_pro'] : ['year', 'prod_team']
    lines.push(`sub_${String(i).padStart(7, '0')},cus_${i % 997},${status},${interval === 'month' ? '9.99' : '99.00'},usd,${interval},${product},${day} 10:00:00,${day} 10:00:00,${trial[0]},${trial[1]},${canceled},u_${i % 1499}`)
  }
  return lines.join('\n') + '\n'
}
