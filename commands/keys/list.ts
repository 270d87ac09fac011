import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {table} from '../../src/cli/render.js'
import {KEY_STATUSES, KeyList} from '../../src/schemas/server.js'
import {listKeys} from '../../src/server/keys.js'

export default class KeysList extends BaseCommand<typeof KeysList> {
  static override readsOnly = true
  static override summary = 'List the API keys of "pricectl serve"'
  static override description = 'List the API keys of "pricectl serve": id, name, prefix, status, when created, revoked and last used (never the keys themselves)'
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --status active --json']
  static override flags = {
    ...listFlags,
    status: Flags.string({description: 'Only keys with this status', options: [...KEY_STATUSES]}),
  }
  static override get outputSchema() {
    return KeyList
  }

  async run(): Promise<KeyList> {
    const keys = await listKeys(await this.store(), {status: this.flags.status})
    const message = `${keys.length} key${keys.length === 1 ? '' : 's'}`
    if (keys.length === 0) this.log(this.flags.status ? `no ${this.flags.status} keys` : 'no API keys yet: create one with "pricectl keys create --name NAME"')
    else {
      this.log(
        table(keys, [
          {header: 'id', value: (k) => k.id},
          {header: 'name', value: (k) => k.name},
          {header: 'prefix', value: (k) => k.prefix},
          {header: 'status', value: (k) => k.status},
          {header: 'created', value: (k) => k.created_at},
          {header: 'revoked', value: (k) => k.revoked_at},
          {header: 'last used', value: (k) => k.last_used_at},
        ]),
      )
    }
    return {keys, message, success: true}
  }
}
