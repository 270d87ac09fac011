import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {recordTable} from '../../src/cli/render.js'
import {type StoreInfo, storeInfo} from '../../src/store/maintenance.js'

/** What `--json` prints. */
const Output = z.object({
  counts: z.record(z.string(), z.number()),
  journal_mode: z.string(),
  latest_schema_version: z.number(),
  path: z.string(),
  read_only: z.string().nullable(),
  /** PostgreSQL only. */
  database: z.string().optional(),
  schema: z.string().optional(),
  server_version: z.string().optional(),
  schema_version: z.number(),
  size_bytes: z.number(),
  success: z.literal(true),
})

export default class DbInfo extends BaseCommand<typeof DbInfo> {
  static override readsOnly = true
  static override summary = 'Show where the store is, its schema version and row counts'
  static override description = 'Where the store is, its schema version and row counts'
  static override examples = ['<%= config.bin %> db info', '<%= config.bin %> db info --db ./shop.db --json']
  static override get outputSchema() {
    return Output
  }

  async run(): Promise<StoreInfo & {success: true}> {
    // Opened without migrating so an old store reports its own version.
    const store = await this.openStore({migrate: false})
    try {
      const info = await storeInfo(store)
      this.log(
        recordTable([
          ['path', info.path],
          ...(info.server_version ? [['server', `PostgreSQL ${info.server_version}`] as [string, unknown], ['database', `${info.database} (schema ${info.schema})`] as [string, unknown]] : []),
          ['schema version', `${info.schema_version} (latest ${info.latest_schema_version})`],
          ['size', `${info.size_bytes} bytes`],
          ...(info.read_only ? [['read-only', info.read_only] as [string, unknown]] : []),
          ...Object.entries(info.counts).map(([k, v]): [string, unknown] => [k, v]),
        ]),
      )
      return {...info, success: true}
    } finally {
      await store.close()
    }
  }
}
