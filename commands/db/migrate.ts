import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {migrateStore} from '../../src/store/db.js'

export default class DbMigrate extends BaseCommand<typeof DbMigrate> {
  static override summary = 'Bring the store to the latest schema version'
  static override description = 'Bring the store to the latest schema version (commands also do this on open)'
  static override examples = ['<%= config.bin %> db migrate']
  static override get outputSchema() {
    return z.object({from: z.number(), message: z.string(), success: z.literal(true), to: z.number()})
  }

  async run() {
    const store = await this.openStore({migrate: false})
    try {
      const {from, to} = await migrateStore(store)
      const message = from === to ? `store is at schema version ${to}; nothing to do` : `migrated store from schema version ${from} to ${to}`
      this.log(message)
      return {from, message, success: true as const, to}
    } finally {
      await store.close()
    }
  }
}
