import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Writable} from 'node:stream'
import Database from 'better-sqlite3'
import {beforeAll, describe, expect, it} from 'vitest'

import {priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {tempStore} from '../helpers/run.js'
import {at, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * `price --input` writes a group's lines only once the group's transaction is committed: a
 * line on stdout is a quote stored (a crash or a failed commit never leaves quotes shown
 * that were not kept). A group of 5,000 new users makes several full output buffers
 * (256 KB), which used to be written while the transaction was still open.
 */
describe('batch pricing output', () => {
  let db: string
  beforeAll(async () => {
    db = tempStore()
    await segCatalog(db)
  }, 60_000)

  it('reaches the stream only for quotes another connection can already read', async () => {
    const n = 6000
    const file = join(dirname(db), 'requests.jsonl')
    writeFileSync(file, Array.from({length: n}, (_, i) => JSON.stringify({country: 'DE', products: ['basic', 'yearly'], user_id: `out-${i}`})).join('\n') + '\n')
    const reader = new Database(db, {readonly: true})
    const lockOf = reader.prepare('SELECT 1 FROM locks WHERE lock_key = ?').pluck()
    const shown: string[] = []
    const missing: string[] = []
    let partial = ''
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const text = partial + chunk.toString('utf8')
        const lines = text.split('\n')
        partial = lines.pop()!
        for (const line of lines) {
          const userId = (JSON.parse(line) as {user_id: string}).user_id
          shown.push(userId)
          if (lockOf.get(userId) === undefined) missing.push(userId)
        }
        done()
      },
    })
    const store = openStore(db)
    try {
      const summary = await at('2026-03-01T00:00:00Z', async () => priceBatch(await PricingContext.open(store), file, out, {batchSize: 5000, output: 'jsonl'}))
      expect(summary.priced).toBe(n)
    } finally {
      await store.close()
      reader.close()
    }
    expect(partial).toBe('')
    expect(shown).toHaveLength(n)
    expect(missing.slice(0, 3)).toEqual([])
  }, 120_000)
  it('a group its store runs again (PostgreSQL: a lost claim, or the write lock needed) is written, counted and reported once', async () => {
    // Each group's locksOnly transaction runs the group once, rolls that back, and runs it again.
    const n = 3000
    const file = join(dirname(db), 'again.jsonl')
    const lines = Array.from({length: n}, (_, i) => (i === 1234 ? '{"user_id": ' : JSON.stringify({country: 'DE', products: ['basic', 'yearly'], user_id: `again-${i}`})))
    writeFileSync(file, lines.join('\n') + '\n')
    const inner = openStore(db)
    const ABORT = new Error('run again')
    let reruns = 0
    const store = new Proxy(inner, {
      get(target, prop) {
        if (prop !== 'transaction') return Reflect.get(target, prop)
        return async <T>(fn: (tx: StorePort) => Promise<T> | T, options?: {locksOnly?: boolean; write?: boolean}): Promise<T> => {
          if (!options?.locksOnly) return await target.transaction(fn, options)
          return await target.transaction(async (tx) => {
            try {
              await target.transaction(async (inner) => {
                await fn(inner)
                throw ABORT
              })
            } catch (error) {
              if (error !== ABORT) throw error
            }
            reruns++
            return fn(tx)
          }, options)
        }
      },
    }) as StorePort
    let text = ''
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8')
        done()
      },
    })
    const errors: number[] = []
    try {
      const summary = await at('2026-03-01T00:00:00Z', async () =>
        priceBatch(await PricingContext.open(store), file, out, {batchSize: 2000, onError: (line) => errors.push(line), output: 'jsonl'}),
      )
      expect(summary).toEqual({failed: 1, priced: n - 1, read: n})
    } finally {
      await inner.close()
    }
    expect(reruns).toBe(2)
    expect(errors).toEqual([1235])
    const shown = text.trim().split('\n').map((l) => JSON.parse(l) as {line?: number; user_id?: string})
    expect(shown).toHaveLength(n)
    expect(shown.map((l) => l.user_id ?? `line ${l.line}`)).toEqual(lines.map((_, i) => (i === 1234 ? 'line 1235' : `again-${i}`)))
  }, 120_000)
})
