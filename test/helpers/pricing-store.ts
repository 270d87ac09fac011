import {copyFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Writable} from 'node:stream'

import {dump} from './dump.js'
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
