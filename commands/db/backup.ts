import {Args, Flags} from '@oclif/core'
import {z} from 'zod'

import {BaseCommand} from '../../src/cli/base.js'
import {backupStore} from '../../src/store/maintenance.js'

export default class DbBackup extends BaseCommand<typeof DbBackup> {
  static override args = {file: Args.string({description: 'Where to write the copy', required: true})}
  static override summary = 'Write a consistent copy of the store'
  static override description = 'Write a consistent copy of the store (safe while other commands write)'
  static override examples = ['<%= config.bin %> db backup ./pricectl-2026-11-21.db']
  static override flags = {force: Flags.boolean({description: 'Overwrite FILE if it exists (never the store or its -wal/-shm files)'})}
  static override get outputSchema() {
    return z.object({bytes: z.number(), path: z.string(), success: z.literal(true)})
  }

  async run() {
    const result = await backupStore(this.store, this.args.file, this.flags.force)
    this.log(`backed up ${this.store.path} to ${result.path} (${result.bytes} bytes)`)
    return {...result, success: true as const}
  }
}
