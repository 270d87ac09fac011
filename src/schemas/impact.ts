import {z} from 'zod'

/** One side of a price change: the price as quoted, in its currency and display format. */
const QuotedPrice = z.object({currency: z.string(), display: z.string(), price: z.number()})

/** A price that changes for one product x country x audience (or experiment arm). */
export const PriceImpactChange = z.object({
  after: QuotedPrice.nullable(),
  audience: z.string(),
  before: QuotedPrice.nullable(),
  change: z.enum(['added', 'changed', 'currency', 'removed']),
  country: z.string(),
  note: z.string().nullable(),
  pct_change: z.number().nullable(),
  product: z.string(),
})

/**
 * The `impact` object of every command that can change a quote (docs/change-control.md):
 * each price that changes, the country prices a list-replacing write drops, the counts and
 * the one-line summary.
 */
export const PriceImpact = z.object({
  added: z.number().int(),
  changed: z.number().int(),
  changes: z.array(PriceImpactChange),
  compared: z.number().int(),
  countries: z.number().int(),
  dropped: z.array(z.object({count: z.number().int(), countries: z.array(z.string()), product: z.string()})),
  largest: z.object({country: z.string(), pct_change: z.number(), product: z.string()}).nullable(),
  products: z.number().int(),
  summary: z.string(),
})

/** Every command's `--dry-run` flag state next to its impact. */
export const WithImpact = {dry_run: z.boolean(), impact: PriceImpact}
