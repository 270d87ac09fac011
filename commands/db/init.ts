import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'

export default class DbInit extends BaseCommand<typeof DbInit> {
  static override summary = 'Create a new store'
  static override description = `Create a new store where --db (or --profile, $PRICECTL_DB, $PRICECTL_PROFILE, the config file's db, else the default location) says, folders included, at the latest schema version

The explicit way to start a store: commands that only read refuse a --db that names no store,
so a mistyped path never turns into an empty store. A store that exists is left as it is
(exit 0). With a postgres:// URL, the database must exist; its tables are made.`
  static override examples = [
    '<%= config.bin %> db init --db ./pricing.db',
    'PRICECTL_DB=./pricing.db <%= config.bin %> db init',
    '<%= config.bin %> config set db ~/pricing/staging.db --profile staging && <%= config.bin %> db init --profile staging',
  ]
  static override get outputSchema() {
    return z.object({created: z.boolean(), message: z.string(), path: z.string(), schema_version: z.number().int(), success: z.literal(true)})
  }

  async run() {
    let created = false
    const store = await this.openStore({init: true, onCreate: () => (created = true)})
    try {
      const version = (await store.health()).schemaVersion
      const message = created ? `created a new store at ${store.path} (schema version ${version})` : `${store.path} is already a pricectl store (schema version ${version}); nothing to do`
      this.log(message)
      return {created, message, path: store.path, schema_version: version, success: true as const}
    } finally {
      await store.close()
    }
  }
}
