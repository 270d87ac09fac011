import {InvalidInputError} from '../../errors.js'
import {overlay, parseKeyValues, readBody} from '../input.js'

/** The price flags shared by `price` and `price explain`. */
export type PriceFlags = {
  body?: string
  country?: string
  coupon?: string[]
  currency?: string
  feature?: string[]
  'get-ip-from-request'?: boolean
  integration?: string[]
  ip?: string
  override?: boolean
  'override-currency'?: boolean
  'package-id'?: string
  product?: string[]
  'run-experiment'?: boolean
  'user-id'?: string
}

/** Feature values typed on the command line: numbers stay strings; audiences compare numerically. */
export function requestFromFlags(flags: PriceFlags): Record<string, unknown> {
  const body = readBody(flags.body)
  const features = parseKeyValues(flags.feature, '--feature')
  const coupons = parseKeyValues(flags.coupon, '--coupon')
  return overlay(body, {
    country: flags.country,
    coupons: coupons ? {...(body.coupons as object), ...coupons} : undefined,
    currency: flags.currency,
    features: features ? {...(body.features as object), ...features} : undefined,
    get_ip_from_request: flags['get-ip-from-request'],
    integrations: flags.integration?.length ? flags.integration : undefined,
    ip: flags.ip,
    override: flags.override,
    override_currency: flags['override-currency'],
    package_id: flags['package-id'],
    products: productList(flags.product),
    run_experiment: flags['run-experiment'],
    user_id: flags['user-id'],
  })
}

/**
 * `-p a -p b,c` as a list. An empty value is an error: `-p "$UNSET"` must not silently
 * price the segment's package instead of the product that was meant.
 */
function productList(values: string[] | undefined): string[] | undefined {
  if (!values?.length) return undefined
  const out = values.flatMap((p) => p.split(',')).map((p) => p.trim()).filter(Boolean)
  if (out.length === 0) throw new InvalidInputError(`--product: empty value ${JSON.stringify(values.join(','))}; give a product api_id (or leave --product out to price a package)`)
  return out
}

export function assertNoInputConflict(flags: PriceFlags & {input?: string}): void {
  if (flags.input && (flags.body || flags['user-id'] || flags.product?.length)) {
    throw new InvalidInputError('--input prices a file of requests; give the request fields in the file, not as flags')
  }
}
