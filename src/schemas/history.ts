import {z} from 'zod'

import {Envelope} from './common.js'
import {WithImpact} from './impact.js'

/** `pricectl history`, `history show` and `revert` (docs/history.md). */

export const ROW_ACTIONS = ['inserted', 'updated', 'deleted'] as const

export const Change = z.object({
  actor: z.string(),
  at: z.string(),
  command: z.string(),
  id: z.number().int(),
  reverted_by: z.number().int().nullable(),
  reverts: z.number().int().nullable(),
  rows: z.array(z.object({action: z.enum(ROW_ACTIONS), count: z.number().int(), table: z.string()})),
  summary: z.string().nullable(),
})

export const ChangeRowImage = z.object({
  action: z.enum(ROW_ACTIONS),
  after: z.record(z.string(), z.unknown()).nullable(),
  before: z.record(z.string(), z.unknown()).nullable(),
  id: z.number().int(),
  key: z.array(z.unknown()),
  product_id: z.number().int().nullable(),
  table: z.string(),
})

export const HistoryList = Envelope.extend({changes: z.array(Change), success: z.literal(true)})
export type HistoryList = z.output<typeof HistoryList>

export const HistoryShow = Envelope.extend({change: Change, rows: z.array(ChangeRowImage), success: z.literal(true)})
export type HistoryShow = z.output<typeof HistoryShow>

export const RevertOutput = Envelope.extend({
  change: Change.nullable(),
  conflicts: z.array(z.string()),
  dry_run: z.boolean(),
  /** The prices the revert changes (docs/change-control.md). */
  impact: WithImpact.impact,
  restored: z.number().int(),
  reverted: Change,
  success: z.literal(true),
})
export type RevertOutput = z.output<typeof RevertOutput>
