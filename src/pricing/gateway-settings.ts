import {InvalidInputError} from '../errors.js'
import {GatewaySettingsInput} from '../schemas/gateways.js'
import {validate} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import {type GatewaySettingsEntry, gatewaySettings, resetGatewaySettings, saveGatewaySettings} from './gateways.js'

/*
 * A module of its own: it validates with the gateways schema (zod), and ./gateways.ts is on
 * the path of a cold `price`, which loads no zod (docs/performance.md "Cold start").
 */

const SETTABLE = ['accepted_currencies', 'fallback_currency', 'amount_format'] as const

/**
 * `gateways set`: merge the given fields over the gateway's current settings, validate
 * the result and store it; or, with "default", drop the stored settings.
 */
export async function configureGateway(store: StorePort, gateway: string, changes: 'default' | Record<string, unknown>): Promise<{reset: boolean; settings: GatewaySettingsEntry}> {
  const current = await gatewaySettings(store, gateway)
  if (changes === 'default') {
    await resetGatewaySettings(store, current.gateway)
    return {reset: true, settings: await gatewaySettings(store, gateway)}
  }
  const unknown = Object.keys(changes).filter((k) => !(SETTABLE as readonly string[]).includes(k))
  if (unknown.length > 0) throw new InvalidInputError(`unknown field ${unknown.map((k) => JSON.stringify(k)).join(', ')} (expected ${SETTABLE.join(', ')})`)
  const {source: _source, ...base} = current
  const valid = validate(GatewaySettingsInput, {...base, ...changes, gateway: current.gateway}, `settings of ${current.gateway}`)
  await saveGatewaySettings(store, valid)
  return {reset: false, settings: {...valid, source: 'store'}}
}
