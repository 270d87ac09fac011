import {join} from 'node:path'
import {writeFileSync} from 'node:fs'

/**
 * A small synthetic book of subscriptions and charges, exported month after month in several
 * layouts (gateway_a subscriptions, gateway_c subscriptions, gateway_a payments in its new and
 * older headers), for the test that imports the files and their rows in random orders
 * (test/commands/revenue-shuffle.test.ts). Each monthly export holds every subscription
 * created before its date, as of that date: trials (converted or not), plan changes in place,
 * scheduled and done cancellations, unpaid subscriptions; the payments exports hold the
 * month's charges, and re-export earlier ones refunded or lost in a dispute with their dates
 * unchanged. Products and rates are seedCatalog's (test/helpers/revenue-fixtures.ts).
 */

const DAY = 86_400

/** A deterministic generator (xorshift32). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
}

export function shuffle<T>(items: readonly T[], next: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

const utc = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / 1000
const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z')
const stamp = (t: number) => new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 19)
/** The same moment of the month, `k` months later. */
const addMonths = (t: number, k: number) => {
  const d = new Date(t * 1000)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()) / 1000
}

type Sub = {
  amount: number
  /** Amount after a plan change at `changeAt` (an anniversary), if any. */
  changeAt?: number
  changed?: number
  /** Canceled at the end of the period ending then (the request 10 days before). */
  cancelAt?: number
  created: number
  currency: 'EUR' | 'USD'
  customer: string
  id: string
  layout: 'a' | 'c'
  /** A 14-day trial; converts unless `lapses`. */
  lapses?: boolean
  trial: boolean
  /** Unpaid from this anniversary on (gateway_a). */
  unpaidAt?: number
}

export type BookFile = {name: string; text: string}

/** The export dates: the first of each month, 2025-12 to 2026-07. */
export const EXPORTS = Array.from({length: 8}, (_, k) => Date.UTC(2025, 11 + k, 1) / 1000)

function subscriptions(count: number, next: () => number): Sub[] {
  const out: Sub[] = []
  for (let i = 0; i < count; i++) {
    const layout = i % 3 === 2 ? 'c' : 'a'
    const created = utc(2025, 11, 1) + Math.floor(next() * 150) * DAY + Math.floor(next() * 86_000)
    const trial = next() < 0.3
    const from = trial ? created + 14 * DAY : created
    const s: Sub = {
      amount: [9.99, 19, 49][Math.floor(next() * 3)]!,
      created,
      currency: next() < 0.3 ? 'EUR' : 'USD',
      customer: `cus_${(i % Math.ceil(count * 0.8)).toString().padStart(3, '0')}`,
      id: `${layout === 'a' ? 'sub' : 'cb'}_${i.toString().padStart(3, '0')}`,
      layout,
      trial,
    }
    if (trial && next() < 0.5) s.lapses = true
    else {
      const r = next()
      if (r < 0.3) s.cancelAt = addMonths(from, 1 + Math.floor(next() * 4))
      else if (r < 0.45 && layout === 'a') s.unpaidAt = addMonths(from, 1 + Math.floor(next() * 4))
      if (next() < 0.35) {
        s.changeAt = addMonths(from, 1 + Math.floor(next() * 3))
        s.changed = [9.99, 19, 49, 99][Math.floor(next() * 4)]!
        if ((s.cancelAt !== undefined && s.changeAt >= s.cancelAt) || (s.unpaidAt !== undefined && s.changeAt >= s.unpaidAt)) delete s.changeAt
      }
    }
    out.push(s)
  }
  return out
}

/** The subscription as of export date `d`. */
function stateAt(s: Sub, d: number) {
  const trialEnd = s.trial ? s.created + 14 * DAY : undefined
  if (trialEnd !== undefined && d < trialEnd) return {periodStart: s.created, status: 'trialing' as const, trialEnd}
  if (s.lapses) return {ended: trialEnd!, periodStart: s.created, requested: trialEnd! - 2 * DAY, status: 'canceled' as const, trialEnd}
  const from = trialEnd ?? s.created
  let periodStart = from
  while (addMonths(periodStart, 1) <= d) periodStart = addMonths(periodStart, 1)
  const amount = s.changeAt !== undefined && periodStart >= s.changeAt ? s.changed! : s.amount
  if (s.cancelAt !== undefined && d >= s.cancelAt) return {amount, ended: s.cancelAt, periodStart: addMonths(s.cancelAt, -1), requested: s.cancelAt - 10 * DAY, status: 'canceled' as const, trialEnd}
  if (s.unpaidAt !== undefined && d >= s.unpaidAt) return {amount, periodStart: s.unpaidAt, status: 'unpaid' as const, trialEnd}
  const scheduled = s.cancelAt !== undefined && d >= s.cancelAt - 10 * DAY
  return {amount, periodStart, requested: scheduled ? s.cancelAt! - 10 * DAY : undefined, scheduledEnd: scheduled ? s.cancelAt : undefined, status: 'active' as const, trialEnd}
}

const A_SUBS = ['id', 'Customer ID', 'Status', 'Amount', 'Currency', 'Interval', 'Product', 'Quantity', 'Created (UTC)', 'Current Period Start (UTC)', 'Current Period End (UTC)', 'Trial Start (UTC)', 'Trial End (UTC)', 'Canceled At (UTC)', 'Ended At (UTC)']
const C_SUBS = [
  'subscriptions.id',
  'subscriptions.plan_id',
  'subscriptions.plan_quantity',
  'subscriptions.plan_unit_price',
  'subscriptions.currency_code',
  'subscriptions.status',
  'subscriptions.current_term_start',
  'subscriptions.created_at',
  'subscriptions.cancelled_at',
  'subscriptions.trial_start',
  'subscriptions.trial_end',
  'customers.id',
  'country (metadata)',
]
const A_PAYMENTS_NEW = ['id', 'Created date (UTC)', 'Amount', 'Amount Refunded', 'Currency', 'Status', 'Refunded date (UTC)', 'Customer ID', 'product (metadata)']
const A_PAYMENTS_OLD = ['id', 'Created (UTC)', 'Amount', 'Amount Refunded', 'Currency', 'Status', 'Customer ID', 'product (metadata)']

const csv = (header: readonly string[], rows: readonly (readonly (number | string)[])[]) => [header.join(','), ...rows.map((r) => r.join(','))].join('\n') + '\n'
const opt = (t: number | undefined, f: (t: number) => string) => (t === undefined ? '' : f(t))

/**
 * The book's export files (names sort in export order), rows in the order `next` shuffles
 * them into. Same seed, same book; `next` only orders rows.
 */
export function book(seed: number, count = 36, next?: () => number): {charges: BookFile[]; subscriptions: BookFile[]} {
  const subs = subscriptions(count, rng(seed))
  const order = <T>(rows: T[]) => (next ? shuffle(rows, next) : rows)
  const subscriptionFiles: BookFile[] = []
  const chargeFiles: BookFile[] = []
  const money = (n: number) => n.toFixed(2)
  for (const [k, d] of EXPORTS.entries()) {
    const a: (number | string)[][] = []
    const c: (number | string)[][] = []
    for (const s of subs) {
      if (s.created >= d) continue
      const st = stateAt(s, d)
      const amount = 'amount' in st && st.amount !== undefined ? st.amount : s.amount
      if (s.layout === 'a') {
        const status = st.status
        a.push([
          s.id,
          s.customer,
          status,
          money(amount),
          s.currency.toLowerCase(),
          'month',
          'prod_pro',
          1,
          stamp(s.created),
          stamp(st.periodStart),
          stamp('scheduledEnd' in st && st.scheduledEnd !== undefined ? st.scheduledEnd : addMonths(st.periodStart, 1)),
          opt(st.trialEnd === undefined ? undefined : s.created, stamp),
          opt(st.trialEnd, stamp),
          opt('requested' in st ? st.requested : undefined, stamp),
          opt('ended' in st ? st.ended : undefined, stamp),
        ])
      } else {
        const status = st.status === 'trialing' ? 'in_trial' : st.status === 'canceled' ? 'cancelled' : 'scheduledEnd' in st && st.scheduledEnd !== undefined ? 'non_renewing' : 'active'
        // A plan change in place is a new quantity of the plan (gateway_c).
        const quantity = s.changed !== undefined && amount === s.changed ? 2 : 1
        const cancelled = 'ended' in st ? st.ended : 'scheduledEnd' in st ? st.scheduledEnd : undefined
        c.push([
          s.id,
          'pro-monthly-plan',
          quantity,
          money(s.amount),
          s.currency,
          status,
          iso(st.periodStart),
          iso(s.created),
          opt(cancelled, iso),
          opt(st.trialEnd === undefined ? undefined : s.created, iso),
          opt(st.trialEnd, iso),
          s.customer,
          s.currency === 'EUR' ? 'DE' : 'US',
        ])
      }
    }
    const tag = String(k).padStart(2, '0')
    subscriptionFiles.push({name: `${tag}-gateway-a-subscriptions.csv`, text: csv(A_SUBS, order(a))})
    subscriptionFiles.push({name: `${tag}-gateway-c-subscriptions.csv`, text: csv(C_SUBS, order(c))})
    // Charges of gateway_a subscriptions paid in the month before the export.
    const payments: (number | string)[][] = []
    const monthStart = k === 0 ? utc(2025, 11, 1) : EXPORTS[k - 1]!
    const old = k % 2 === 1
    for (const s of subs) {
      if (s.layout !== 'a') continue
      for (let n = 0; n < 12; n++) {
        const st = stateAt(s, d)
        if (st.status === 'trialing' || s.lapses) break
        const from = s.trial ? s.created + 14 * DAY : s.created
        const t = addMonths(from, n)
        if (t >= d) break
        if ((s.unpaidAt !== undefined && t >= s.unpaidAt) || (s.cancelAt !== undefined && t >= s.cancelAt)) break
        const amount = s.changeAt !== undefined && t >= s.changeAt ? s.changed! : s.amount
        const id = `ch_${s.id.slice(4)}_${n}`
        const refunded = (Number(s.id.slice(4)) + n) % 11 === 3
        const disputed = (Number(s.id.slice(4)) + n) % 13 === 4
        if (t >= monthStart) {
          const row = [id, stamp(t), money(amount), '0.00', s.currency.toLowerCase(), 'Paid']
          payments.push(old ? [...row, s.customer, 'pro_monthly'] : [...row, '', s.customer, 'pro_monthly'])
        } else if (t >= monthStart - 31 * DAY && (refunded || disputed)) {
          // Re-exported the month after: refunded (with its date) or lost in a dispute (dates unchanged).
          if (refunded && !old) payments.push([id, stamp(t), money(amount), money(amount), s.currency.toLowerCase(), 'Refunded', stamp(t + 5 * DAY), s.customer, 'pro_monthly'])
          else {
            const row = [id, stamp(t), money(amount), '0.00', s.currency.toLowerCase(), 'Dispute lost']
            payments.push(old ? [...row, s.customer, 'pro_monthly'] : [...row, '', s.customer, 'pro_monthly'])
          }
        }
      }
    }
    chargeFiles.push({name: `${tag}-gateway-a-payments.csv`, text: csv(old ? A_PAYMENTS_OLD : A_PAYMENTS_NEW, order(payments))})
  }
  return {charges: chargeFiles, subscriptions: subscriptionFiles}
}

/** Write files into `dir`; their paths, in the order given. */
export function writeBook(dir: string, files: readonly BookFile[]): string[] {
  return files.map((f) => {
    const path = join(dir, f.name)
    writeFileSync(path, f.text)
    return path
  })
}
