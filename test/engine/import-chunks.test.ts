import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import {importFiles, type ImportResult} from '../../src/import/importer.js'
import {openSqliteStore as openStore} from '../../src/store/db.js'
import {awkwardPaymentsCsv, seededStores, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'

/**
 * Several threads read one large file, each its own chunks (src/import/pipeline.ts): the
 * import must end as with one reader (its rows, counts, rejects and progress), whatever the
 * chunks' size. Small chunks put
 * their ends everywhere: inside quoted fields with line breaks (the chunk's thread reads on
 * alone), between the two halves of a CRLF, on a file's unterminated last line.
 */

const freshStore = seededStores()

type Outcome = {records: unknown[]; rejects: string; result: Record<string, unknown>}

async function run(file: string, options: {chunkBytes?: number; kind?: 'charges' | 'subscriptions'; readers: number}, progress?: (rows: number, bytes: number) => void): Promise<Outcome> {
  const kind = options.kind ?? 'charges'
  const path = freshStore()
  const rejects = join(tempDir(), 'rejects.csv')
  const store = openStore(path)
  let r: ImportResult
  try {
    // inThreadMaxBytes 0: worker threads read even this small file.
    r = await importFiles(store, {...options, batchSize: 50, inThreadMaxBytes: 0, kind, paths: [file], rejects}, {progress})
  } finally {
    await store.close()
  }
  const {file: _f, files, rows_per_second: _r, seconds: _s, rejects_file: _j, ...result} = r
  return {
    // Ids follow the batches (each is sorted by key on SQLite), and every chunk ends one.
    records: await withStore(path, (db) => (db.prepare(`SELECT * FROM ${kind} ORDER BY user_id, origin, origin_id`).all() as Record<string, unknown>[]).map(({id: _id, ...c}) => c)),
    rejects: r.rejected > 0 ? readFileSync(rejects, 'utf8') : '',
    result: {...result, files: files.map(({file: _x, ...f}) => f)},
  }
}

describe('a file read by several threads, each its own chunks', () => {
  for (const [name, eol, unterminated] of [
    ['LF', '\n', false],
    ['CRLF, no line break after the last record', '\r\n', true],
  ] as const) {
    it(`ends as one reader's import, reject lines included, whatever the chunks' size (${name})`, async () => {
      const text = awkwardPaymentsCsv(eol, unterminated)
      const file = writeTemp('payments.csv', text)
      const one = await run(file, {readers: 1})
      expect(one.result).toMatchObject({inserted: 400, rejected: 4, updated: 1})
      expect(one.rejects.split('\n').filter((l) => l.includes('ch_bad_'))).toHaveLength(4)
      // Sizes from a line to a quarter of the file; with `inside`, the second chunk begins
      // inside a quoted field (its thread reads on alone), the third one record later.
      const inside = Buffer.from(text).indexOf('Pro plan\n') + 'Pro plan\n'.length
      const runs = [[137, 2], [1000, 3], [inside, 2], [inside, 3], [4096, 2], [Math.ceil(text.length / 4), 3]] as const
      for (const [chunkBytes, readers] of runs) {
        {
          const seen: [number, number][] = []
          const many = await run(file, {chunkBytes, readers}, (rows, bytes) => seen.push([rows, bytes]))
          expect({chunkBytes, readers, ...many}).toEqual({chunkBytes, readers, ...one})
          // Progress counts from the file's start, never backwards, to its whole size.
          for (let i = 1; i < seen.length; i++) expect(seen[i][0]).toBeGreaterThanOrEqual(seen[i - 1][0])
          expect(seen.at(-1)).toEqual([one.result.read, Buffer.byteLength(text)])
        }
      }
    }, 120_000)
  }

  it('a file whose header is quoted is read by one thread, as it is', async () => {
    const text = awkwardPaymentsCsv('\n', false).replace('Created date (UTC)', '"Created date (UTC)"')
    const file = writeTemp('payments.csv', text)
    expect(await run(file, {chunkBytes: 1000, readers: 2})).toEqual(await run(file, {readers: 1}))
  }, 60_000)

  it('a subscriptions export, its rows three times over, ends as one reader’s import', async () => {
    const fixture = readFileSync(fileURLToPath(new URL('../../fixtures/imports/subscriptions-gateway-a.csv', import.meta.url)), 'utf8').trimEnd().split('\n')
    const file = writeTemp('subscriptions.csv', [...fixture, ...fixture.slice(1), ...fixture.slice(1)].join('\n') + '\n')
    const one = await run(file, {kind: 'subscriptions', readers: 1})
    expect(one.result).toMatchObject({inserted: 5, read: 33, rejected: 18, unchanged: 10})
    expect(await run(file, {chunkBytes: 300, kind: 'subscriptions', readers: 2})).toEqual(one)
  }, 60_000)
})
