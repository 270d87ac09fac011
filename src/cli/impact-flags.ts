import {Flags} from '@oclif/core'

/**
 * The change-control flags of every command that can change a quote (docs/change-control.md).
 * A command spreads them into its flags; `this.priceImpact(write, scope)` reads them.
 */
export const impactFlags = {
  'dry-run': Flags.boolean({description: 'Report the price impact (each price that would change), write nothing'}),
  'max-changes': Flags.integer({description: 'Refuse the change (exit 1, nothing written) when more than N prices would change', min: 0}),
  yes: Flags.boolean({description: 'Do not ask to confirm a change of many prices (or a delete)'}),
}

/** On a terminal, a change of more prices than this shows its summary and asks to confirm. */
export const CONFIRM_ABOVE = 10

export type ImpactFlagValues = {'dry-run'?: boolean; 'max-changes'?: number; yes?: boolean}
