import {copyFileSync} from 'node:fs'

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
  const {tables} = dump(path)
  return {exposures: tables.exposures, locks: tables.locks, users: tables.users}
}
