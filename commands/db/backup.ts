import {Args, Flags} from '@oclif/core'
import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {backupAnyStore} from '../../src/store/copy.js'

export default class DbBackup extends BaseCommand<typeof DbBackup> {
  static override args = {file: Args.string({description: 'Where to write the copy', required: true})}
  static override readsOnly = true
  static override summary = 'Write a consistent copy of the store'
  static override description = `Write a consistent copy of the store (safe while other commands write)

Of a PostgreSQL store: a portable pricectl SQLite store file with everything in the database
(written through "db copy", read on one snapshot); "db restore FILE" loads it back. See docs/postgres.md.`
  static override examples = ['<%= config.bin %> db backup ./pricectl-2026-11-21.db', '<%= config.bin %> db backup ./snapshot.db --db postgres://pricectl@db.internal/pricectl']
  static override flags = {force: Flags.boolean({description: 'Overwrite FILE if it exists (never the store or its -wal/-shm files)'})}
  static override get outputSchema() {
    return z.object({bytes: z.number(), path: z.string(), success: z.literal(true)})
  }

  async run() {
    // A PostgreSQL store has no file to copy: its contents go into a new SQLite store file.
    const result = await backupAnyStore(await this.store(), this.args.file, this.flags.force)
    this.log(`backed up ${(await this.store()).path} to ${result.path} (${result.bytes} bytes)`)
    return {bytes: result.bytes, path: result.path, success: true as const}
  }
}
