import {Flags} from '@oclif/core'

/** Flags of one price request (spec body fields in kebab-case), shared by price and price explain. */
export const priceFlags = {
  body: Flags.string({description: 'The spec\'s JSON body (FILE, or - for stdin); flags override its fields'}),
  country: Flags.string({description: 'Two-letter country code (else stored user country, IP, store default)'}),
  coupon: Flags.string({description: 'Coupons for a product: PRODUCT=coupon1,coupon2 (repeatable)', multiple: true}),
  currency: Flags.string({description: 'Currency to price in (ISO 4217)'}),
  feature: Flags.string({description: 'User feature KEY=VALUE for audience rules (repeatable)', multiple: true}),
  'geoip-db': Flags.string({description: 'Your own GeoIP2/GeoLite2 Country .mmdb (default: the bundled one)', env: 'PRICECTL_GEOIP_DB'}),
  'get-ip-from-request': Flags.boolean({description: 'Take the IP from the HTTP request (pricectl serve only)'}),
  integration: Flags.string({description: 'Gateway to return a price object for (repeatable): gateway_a..gateway_d', multiple: true}),
  ip: Flags.string({description: 'IPv4 or IPv6 address of the user (country from geolocation; lock key when no user id)'}),
  override: Flags.boolean({description: 'Recompute country, currency, experiment and arm; replaces the lock'}),
  'override-currency': Flags.boolean({description: 'Keep the locked amounts, replace their currency with --currency'}),
  'package-id': Flags.string({description: 'Price the products of this package (when no --product)'}),
  product: Flags.string({char: 'p', description: 'Product api_id to price (repeatable, or comma-separated)', multiple: true}),
  'run-experiment': Flags.boolean({allowNo: true, description: 'Run a matching experiment (default yes)'}),
  'user-id': Flags.string({char: 'u', description: 'User id (the lock key; the IP is used when absent)'}),
}
