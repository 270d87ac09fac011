import {Args, Flags} from '@oclif/core'
import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {table} from '../../src/cli/render.js'
import {OperationalError} from '../../src/errors.js'
import {copyStore, heldBy, openCopyDestination, openCopySource, shownStore} from '../../src/store/copy.js'

const CopiedTable = z.object({dest_rows: z.number(), source_rows: z.number(), table: z.string()})

/** What `--json` prints. */
const Output = z.object({
  dest: z.string(),
  message: z.string(),
  replaced: z.boolean(),
  rows: z.number(),
  source: z.string(),
  success: z.literal(true),
  tables: z.array(CopiedTable),
})

export default class DbCopy extends BaseCommand<typeof DbCopy> {
  static override args = {
    source: Args.string({description: 'The store to copy: a SQLite file or a postgres:// URL', name: 'SRC', required: true}),
    dest: Args.string({description: 'The store to write: a SQLite file (created when missing) or a postgres:// URL', name: 'DEST', required: true}),
  }
  // Both stores are arguments: the config file is not read for one.
  static override usesStore = false
  static override summary = 'Copy a whole store to another one (SQLite and PostgreSQL, either way)'
  static override description = `Copy a whole store to another one (SQLite and PostgreSQL, either way)

Everything is copied: catalog, change history, locks, revenue, API keys, settings, FX rates.
Ids and amounts are kept as stored. SRC is read on one snapshot (other processes may go on
using it); DEST is replaced in one transaction, so a failed copy leaves it as it was. Rows
are counted per table on both sides afterwards: exit 1 when a count differs.

DEST that holds data is replaced only after confirmation (--yes without a terminal).
The global --db and --profile flags are not used: both stores are named here. See docs/postgres.md.`
  static override examples = [
    '<%= config.bin %> db copy ./pricectl.db postgres://pricectl@db.internal/pricectl',
    '<%= config.bin %> db copy postgres://pricectl@db.internal/pricectl ./snapshot.db',
    '<%= config.bin %> db copy ./old.db ./new.db --yes --json',
  ]
  static override flags = {yes: Flags.boolean({char: 'y', description: 'Replace a DEST that holds data without asking (required without a terminal)'})}
  static override get outputSchema() {
    return Output
  }

  async run(): Promise<z.infer<typeof Output>> {
    const {dest: destSpec, source: sourceSpec} = this.args
    const names = {dest: shownStore(destSpec), source: shownStore(sourceSpec)}
    const source = openCopySource(sourceSpec)
    let dest: ReturnType<typeof openCopyDestination> | undefined
    let ok = false
    try {
      dest = openCopyDestination(destSpec, sourceSpec)
      const held = await heldBy(dest.store)
      if (held.length > 0) {
        await confirmDestructive(this.flags.yes, `replace the store ${names.dest} (${held.map((h) => `${h.table} ${h.rows}`).join(', ')}) with a copy of ${names.source}`)
      }
      this.note(`copying ${names.source} to ${names.dest}`)
      const result = await copyStore(source, dest.store, {names})
      this.log(
        table(result.tables, [
          {header: 'table', value: (t) => t.table},
          {header: 'source rows', value: (t) => t.source_rows},
          {header: 'copied rows', value: (t) => t.dest_rows},
          {header: 'check', value: (t) => (t.source_rows === t.dest_rows ? 'ok' : 'MISMATCH')},
        ]),
      )
      if (!result.ok) {
        const bad = result.tables.filter((t) => t.source_rows !== t.dest_rows).map((t) => `${t.table} ${t.source_rows} -> ${t.dest_rows}`)
        throw new OperationalError(`copied ${names.source} to ${names.dest}, but row counts differ: ${bad.join(', ')} (was SRC written during the copy by a process that does not use pricectl? copy again)`, {
          tables: result.tables,
        })
      }
      ok = true
      const message = `copied ${result.rows} rows in ${result.tables.length} tables from ${names.source} to ${names.dest}; row counts match`
      this.note(message)
      return {dest: names.dest, message, replaced: held.length > 0, rows: result.rows, source: names.source, success: true, tables: result.tables}
    } finally {
      await source.close()
      await dest?.finish(ok)
    }
  }
}
