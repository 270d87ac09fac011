import {Flags} from '@oclif/core'

import {InvalidInputError} from '../errors.js'

/**
 * Without --yes, a change that moves a price by more than this many percent is asked about on
 * a terminal and refused without one (docs/change-control.md): a repricing by mistake (a
 * replaced country price list, an experiment arm through a min_px clamp) moves prices by far
 * more than a routine FX or rounding update, which stays well under it.
 */
export const DEFAULT_MAX_CHANGE_PCT = 25

/**
 * The change-control flags of every command that can change a quote (docs/change-control.md).
 * A command spreads them into its flags; `this.priceImpact(write, scope)` reads them.
 */
export const impactFlags = {
  'dry-run': Flags.boolean({description: 'Report the price impact (each price that would change), write nothing'}),
  'max-change-pct': Flags.custom<number>({
    description: `Without --yes, a change that moves a country's price (a user without features) by more than PCT percent, changes its currency or stops quoting it is asked about on a terminal and refused without one (exit 2, nothing written) [default: ${DEFAULT_MAX_CHANGE_PCT}]`,
    helpValue: 'PCT',
    async parse(input: string) {
      const n = Number(input.trim())
      if (input.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidInputError(`--max-change-pct: expected a percent >= 0 such as 25, got ${JSON.stringify(input)}`)
      return n
    },
  })(),
  'max-changes': Flags.integer({description: 'Refuse the change (exit 1, nothing written) when more than N prices would change, even with --yes', min: 0}),
  yes: Flags.boolean({description: 'Do not ask to confirm a change of many prices, a large price move or a delete (and, without a terminal, allow them)'}),
}

/** On a terminal, a change of more prices than this shows its summary and asks to confirm. */
export const CONFIRM_ABOVE = 10

export type ImpactFlagValues = {'dry-run'?: boolean; 'max-change-pct'?: number; 'max-changes'?: number; yes?: boolean}
