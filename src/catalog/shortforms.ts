import {countryCurrency, upperCode} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import {parseJsonValue} from '../input.js'

/**
 * Compact text forms of nested catalog values, used by repeatable flags and CSV cells:
 *   country price  DE=8.99:EUR   (DE=8.99 uses the country's own currency)
 *   integration    gateway_a:prod_1 | gateway_a_with_interval:prod_1:month:3 | gateway_c:plan | gateway_d:plan:EUR
 *   trial          day:14
 * Anything starting with `{` (or `[` for lists) is read as JSON instead.
 * Values are passed on unvalidated: the zod schemas name the field and value on error.
 */

/** A number when the text is one, else the text itself (so the schema reports "expected a number, got "abc""). */
export function numberish(text: string): number | string {
  const t = text.trim()
  return /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(t) ? Number(t) : text
}

/** Like numberish, with `none` / `null` / empty meaning "unset" (clears the field on update). */
export function nullableNumberish(text: string): null | number | string {
  const t = text.trim().toLowerCase()
  return t === '' || t === 'none' || t === 'null' ? null : numberish(text)
}

export function parseCountryPrice(text: string, what = '--country-price'): unknown {
  if (text.trim().startsWith('{')) return parseJsonValue(text, what)
  const m = /^\s*([^=\s]+)\s*=\s*([^:]+?)\s*(?::\s*(\S+?))?\s*$/.exec(text)
  if (!m) throw new InvalidInputError(`${what}: expected COUNTRY=AMOUNT[:CURRENCY] such as DE=8.99:EUR, got ${JSON.stringify(text)}`)
  const country = upperCode(m[1])
  const currency = m[3] ? upperCode(m[3]) : countryCurrency(country)
  return {amount: numberish(m[2]), country, ...(currency ? {currency} : {})}
}

export function parseIntegration(text: string, what = '--integration'): unknown {
  if (text.trim().startsWith('{')) return parseJsonValue(text, what)
  const parts = text.trim().split(':')
  const [type, id, ...rest] = parts
  const form = 'gateway_a:PRODUCT_ID, gateway_a_with_interval:PRODUCT_ID:INTERVAL:COUNT, gateway_c:PLAN_ID, gateway_d:PLAN_ID:CURRENCY or a JSON object'
  const expect = (n: number) => {
    if (rest.length !== n) throw new InvalidInputError(`${what}: ${JSON.stringify(text)} does not match ${type}'s form (expected ${form})`)
  }
  const withId = (field: string) => (id === undefined || id === '' ? {} : {[field]: id})
  switch (type) {
    case 'gateway_a': {
      expect(0)
      return {type, ...withId('gateway_a_product_id')}
    }

    case 'gateway_a_with_interval': {
      expect(2)
      return {type, ...withId('gateway_a_product_id'), interval: rest[0], interval_count: numberish(rest[1])}
    }

    case 'gateway_c': {
      expect(0)
      return {type, ...withId('gateway_c_plan_id')}
    }

    case 'gateway_d': {
      expect(1)
      return {currency: upperCode(rest[0]), type, ...withId('gateway_d_plan_id')}
    }

    default: {
      throw new InvalidInputError(`${what}: unknown integration type ${JSON.stringify(type)} in ${JSON.stringify(text)} (expected ${form})`)
    }
  }
}

export function parseTrial(text: string, what = '--trial'): unknown {
  if (text.trim().startsWith('{')) return parseJsonValue(text, what)
  const m = /^\s*([a-z_]+)\s*:\s*(\S+)\s*$/i.exec(text)
  if (!m) throw new InvalidInputError(`${what}: expected INTERVAL:COUNT such as day:14, or a JSON object, got ${JSON.stringify(text)}`)
  return {interval: m[1].toLowerCase(), interval_count: numberish(m[2])}
}

export function parseJsonObjectFlag(text: string, what: string): unknown {
  const v = parseJsonValue(text, what)
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InvalidInputError(`${what}: expected a JSON object, got ${JSON.stringify(text.slice(0, 80))}`)
  return v
}

/** A list cell: a JSON array, or items separated by `;` in their compact form. */
export function parseListCell(text: string, item: (t: string, what: string) => unknown, what: string): unknown {
  const t = text.trim()
  if (t === '') return []
  if (t.startsWith('[')) return parseJsonValue(t, what)
  return t
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => item(s, what))
}

/** `SOURCE=ID` of `coupons --external` (GATEWAY_A=promo_123); the source is case-insensitive. */
export function parseExternalCoupon(text: string, what = '--external'): unknown {
  if (text.trim().startsWith('{')) return parseJsonValue(text, what)
  const eq = text.indexOf('=')
  if (eq <= 0) throw new InvalidInputError(`${what}: expected SOURCE=ID such as GATEWAY_A=promo_123, got ${JSON.stringify(text)}`)
  return {external_coupon: {id: text.slice(eq + 1).trim(), source: text.slice(0, eq).trim().toUpperCase()}}
}
