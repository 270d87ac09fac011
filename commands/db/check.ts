import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {OperationalError} from '../../src/errors.js'
import {checkAnyStore} from '../../src/store/maintenance.js'

/** What `--json` prints. */
const Output = z.object({
  foreign_key_violations: z.number(),
  integrity: z.string(),
  ok: z.boolean(),
  schema_version: z.number(),
  success: z.literal(true),
})

export default class DbCheck extends BaseCommand<typeof DbCheck> {
  static override readsOnly = true
  static override summary = 'Verify the store'
  static override description = 'Verify the store: SQLite integrity (PostgreSQL: unvalidated constraints, invalid indexes, id sequences), foreign keys, schema version (exit 1 when not ok)'
  static override examples = ['<%= config.bin %> db check']
  static override get outputSchema() {
    return Output
  }

  async run() {
    const result = await checkAnyStore(await this.store())
    if (!result.ok) {
      throw new OperationalError(
        `store check failed: integrity ${result.integrity}, ${result.foreign_key_violations} foreign key violations, schema version ${result.schema_version} (restore a backup with "pricectl db restore BACKUP --db ${(await this.store()).path}")`,
      )
    }
    this.log(`ok: integrity ok, no foreign key violations, schema version ${result.schema_version}`)
    return {...result, success: true as const}
  }
}
