import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../src/cli/base.js'
import {impactFlags} from '../src/cli/impact-flags.js'
import {describeRows, revertChange, revertScope} from '../src/history/history.js'
import {RevertOutput} from '../src/schemas/history.js'

export default class Revert extends BaseCommand<typeof Revert> {
  static override args = {change: Args.integer({description: 'The change to undo (an id from "pricectl history")', min: 1, required: true})}
  static override changesExisting = true
  static override summary = 'Undo a change: restore the rows it wrote as they were, as a new change'
  static override description = `Undo a change: restore the rows it wrote as they were before it, as a new change (which "pricectl history" lists and which can itself be reverted), with its price impact

Refused (exit 1) when a later change wrote the same rows, or a row is no longer what the change left: revert the later changes first, or pass --force to restore the before images anyway. Changes to API keys are never reverted.`
  static override examples = ['<%= config.bin %> revert 12 --dry-run', '<%= config.bin %> revert 12', '<%= config.bin %> revert 12 --force --json']
  static override flags = {
    ...impactFlags,
    force: Flags.boolean({description: 'Restore the before images even when later changes wrote the same rows'}),
  }
  static override get outputSchema() {
    return RevertOutput
  }

  async run(): Promise<RevertOutput> {
    const id = this.args.change
    const scope = await revertScope(await this.store(), id)
    const {dryRun, impact, result: r} = await this.priceImpact(async () => await revertChange(await this.store(), id, {force: this.flags.force}), scope)
    if (r.conflicts.length > 0) process.stderr.write(`warning: --force overwrites ${r.conflicts.length} row${r.conflicts.length === 1 ? '' : 's'} written after change ${id}\n`)
    let message: string
    if (dryRun) message = `would revert change ${id}: restore ${r.restored} row${r.restored === 1 ? '' : 's'} (${describeRows(r.reverted.rows)}); nothing written`
    else if (r.change) message = `reverted change ${id} as change ${r.change.id} (${describeRows(r.change.rows)})`
    else message = `change ${id}: every row is already as it was before it; nothing written`
    this.log(message)
    return {change: dryRun ? null : (r.change ?? null), conflicts: r.conflicts, dry_run: dryRun, impact, message, restored: r.restored, reverted: r.reverted, success: true}
  }
}
