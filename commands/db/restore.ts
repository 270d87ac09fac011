import {Args, Flags} from '@oclif/core'
import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {planRestoreFromFile, restoreFromFile} from '../../src/store/copy.js'
import {isPostgresUrl, openStore} from '../../src/store/db.js'
import {planRestore, restoreStore} from '../../src/store/restore.js'

/** What `--json` prints. */
const Output = z.object({
  backup: z.string(),
  backup_schema_version: z.number(),
  foreign_key_violations: z.number(),
  integrity: z.string(),
  message: z.string(),
  path: z.string(),
  replaced: z.boolean(),
  schema_version: z.number(),
  success: z.literal(true),
})

export default class DbRestore extends BaseCommand<typeof DbRestore> {
  static override args = {file: Args.string({description: 'A backup made by "db backup"', required: true})}
  static override summary = 'Replace the store with a backup'
  static override description = `Replace the store with a backup (checked, and migrated when older)

Refuses a file that is not a pricectl store, or of a newer schema. A store that holds data
is replaced only after confirmation (--yes without a terminal). Run it while no other
pricectl process (serve, an import) uses the store.

Into a PostgreSQL store: FILE (a backup of either adapter) replaces everything in the
database in one transaction, through "db copy"; row counts are checked. See docs/postgres.md.`
  static override examples = ['<%= config.bin %> db restore ./pricectl-2026-11-21.db --yes', '<%= config.bin %> db restore backup.db --db ./copy.db']
  static override flags = {yes: Flags.boolean({char: 'y', description: 'Replace a store that holds data without asking (required without a terminal)'})}
  static override get outputSchema() {
    return Output
  }

  async run() {
    const location = this.storeLocation
    if (isPostgresUrl(location)) return this.restorePostgres(location)
    // The store is not opened the usual way: that would create and migrate a missing one.
    const plan = await planRestore(this.args.file, location)
    if (plan.held.length > 0) {
      const held = plan.held.map((h) => `${h.table} ${h.rows}`).join(', ')
      await confirmDestructive(this.flags.yes, `replace the store ${plan.target} (${held}) with ${plan.backup}`)
    }
    const r = await restoreStore(plan)
    const migrated = r.backup_schema_version < r.schema_version ? `, migrated from schema version ${r.backup_schema_version} to ${r.schema_version}` : `, schema version ${r.schema_version}`
    const message = `restored ${r.backup} into ${r.path}${migrated}; check ok (integrity ok, no foreign key violations)`
    this.log(message)
    return {...r, message, success: true as const}
  }

  /** Into a database: the backup is copied in (db copy), replacing what the database held. */
  private async restorePostgres(location: string) {
    const store = openStore(location)
    try {
      const plan = await planRestoreFromFile(this.args.file, store)
      if (plan.held.length > 0) {
        const held = plan.held.map((h) => `${h.table} ${h.rows}`).join(', ')
        await confirmDestructive(this.flags.yes, `replace the store ${store.path} (${held}) with ${plan.backup}`)
      }
      const copied = await restoreFromFile(plan, store)
      const schemaVersion = (await store.health()).schemaVersion
      const migrated = plan.backupVersion < schemaVersion ? `, migrated from schema version ${plan.backupVersion} to ${schemaVersion}` : `, schema version ${schemaVersion}`
      const message = `restored ${plan.backup} into ${store.path}${migrated}; ${copied.rows} rows in ${copied.tables.length} tables, row counts match, foreign keys checked`
      this.log(message)
      return {
        backup: plan.backup,
        backup_schema_version: plan.backupVersion,
        foreign_key_violations: 0,
        integrity: 'ok',
        message,
        path: store.path,
        replaced: plan.held.length > 0,
        schema_version: schemaVersion,
        success: true as const,
      }
    } finally {
      await store.close()
    }
  }
}
