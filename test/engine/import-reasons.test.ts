import {describe, expect, it} from 'vitest'

import {countReason, reasonKind, sortedReasons} from '../../src/import/reasons.js'

/**
 * Reject reasons are counted by kind in an import's summary (`rejected_by_reason`): the kind
 * names the problem rows share, never one row's value (issue 29, item 14).
 */
describe('reject reason kinds', () => {
  it('moments out of order are named by the problem, not by a field and a number', () => {
    expect(reasonKind('cancel before created: cancel_at: 2026-01-15T00:00:00Z is before created 2026-02-01T00:00:00Z')).toBe('cancel before created')
    expect(reasonKind('cancel before created: canceled_at: 2026-01-01T00:00:00Z is before created 2026-02-01T00:00:00Z; cancel before created: cancel_at: 2026-01-15T00:00:00Z is before created 2026-02-01T00:00:00Z')).toBe('cancel before created')
    expect(reasonKind('trial ends before it starts: trial_end: 2026-01-01T00:00:00Z is before trial_start 2026-01-05T00:00:00Z')).toBe('trial ends before it starts')
  })

  it('counts per kind, the most frequent first', () => {
    const counts: Record<string, number> = {}
    for (const r of ['cancel before created: cancel_at 1', 'bad date "x" in Created (UTC) (...)', 'cancel before created: canceled_at 2']) countReason(counts, r)
    expect(sortedReasons(counts)).toEqual({'cancel before created': 2, 'bad date': 1})
  })
})
