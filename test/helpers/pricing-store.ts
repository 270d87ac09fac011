import {copyFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Writable} from 'node:stream'

import {createExperiment} from '../../src/experiments/manage.js'
import {openStore} from '../../src/store/db.js'
import {dump} from './dump.js'
import {segCatalog} from './segments-fixtures.js'
import {tempStore} from './run.js'

/** A copy of a store file in a temp folder of its own. */
export function copyOf(db: string): string {
  const copy = tempStore()
  copyFileSync(db, copy)
  return copy
}

/** What pricing wrote: locks, users, exposures. */
export function written(path: string) {
  const {tables} = dump(path, ['exposures', 'locks', 'users'])
  return {exposures: tables.exposures, locks: tables.locks, users: tables.users}
}

/**
 * What a priceBatch run needs: a copy of the store, the requests as a JSONL file beside it,
 * and a stream that keeps what the batch prints (`lines()`).
 */
export function batchInput(db: string, requests: Record<string, unknown>[]): {file: string; lines: () => string[]; out: Writable; path: string} {
  const path = copyOf(db)
  const file = join(dirname(path), 'requests.jsonl')
  writeFileSync(file, requests.map((r) => JSON.stringify(r)).join('\n') + '\n')
  const chunks: Buffer[] = []
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk)
      done()
    },
  })
  return {file, lines: () => Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean), out, path}
}

/** A store with the segments catalog and one running experiment on `basic` (copy it per test with copyOf). */
export async function experimentStore(experiment: Parameters<typeof createExperiment>[1]): Promise<string> {
  const fixture = tempStore()
  await segCatalog(fixture)
  const store = openStore(fixture)
  try {
    await createExperiment(store, experiment, {start: true})
  } finally {
    await store.close()
  }
  return fixture
}
