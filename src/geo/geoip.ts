import ipaddr from 'ipaddr.js'
import {Reader, type Response} from 'mmdb-lib'
import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join, resolve} from 'node:path'

import {isCountry, upperCode} from '../currency.js'
import {InvalidInputError, OperationalError} from '../errors.js'

/**
 * Country of an IP address from a MaxMind DB (.mmdb) country database: the bundled,
 * freely licensed one from npm, or the operator's own GeoIP2/GeoLite2 Country file.
 * Addresses that cannot belong to a country (private, loopback, reserved, documentation,
 * ...) and malformed ones get `country: null` with a reason and are never looked up.
 * A database is read only when an address must be looked up, then cached per path.
 */

export type GeoResult = {
  /** ISO 3166 alpha-2, or null when the address has no country (see reason). */
  country: null | string
  /** Why: which record field gave the country, or why there is none. */
  reason: string
  /** Which database answered ("none" when no lookup was made). */
  source: string
}

export type ResolveOptions = {
  /** The operator's own .mmdb (from --geoip-db / PRICECTL_GEOIP_DB); the bundled one when absent. */
  dbPath?: string
}

const require = createRequire(import.meta.url)
const BUNDLED_PACKAGE = '@ip-location-db/geo-whois-asn-country-mmdb'

let bundledPath: string | undefined

/** Path of the bundled database (IPv4 + IPv6, CC0 package of NRO whois/ASN data). */
export function bundledGeoipPath(): string {
  bundledPath ??= join(dirname(require.resolve(`${BUNDLED_PACKAGE}/package.json`)), 'geo-whois-asn-country.mmdb')
  return bundledPath
}

/** `--geoip-db` flag, else PRICECTL_GEOIP_DB, else undefined (the bundled database). */
export function geoipDbPath(flag?: string): string | undefined {
  const p = flag ?? process.env.PRICECTL_GEOIP_DB
  return p && p.trim() !== '' ? p : undefined
}

type Record_ = {
  country?: {iso_code?: unknown}
  country_code?: unknown
  registered_country?: {iso_code?: unknown}
}

type OpenDb = {label: string; path: string; reader: Reader<Response>}

const readers = new Map<string, OpenDb>()
// Keyed by what the caller passed (undefined = bundled), so a batch skips path resolution.
const byOption = new Map<string | undefined, OpenDb>()

/**
 * Decoded records by data-section offset. A country database has a few hundred distinct
 * records, so decoding each once halves lookup time; the bound keeps a City file in check.
 */
class RecordCache {
  private map = new Map<number | string, unknown>()
  get(key: number | string): unknown {
    return this.map.get(key)
  }

  set(key: number | string, value: unknown): void {
    if (this.map.size >= 50_000) this.map.clear()
    this.map.set(key, value)
  }
}

/**
 * Open (once per path per process) a country database. An operator's file that is missing
 * or not an .mmdb is an input error naming the path; a broken bundled file is operational.
 */
export function openGeoipDb(dbPath?: string): OpenDb {
  const known = byOption.get(dbPath)
  if (known) return known
  const path = dbPath === undefined ? bundledGeoipPath() : resolve(dbPath)
  const cached = readers.get(path)
  if (cached) {
    byOption.set(dbPath, cached)
    return cached
  }
  const fail = (why: string) =>
    dbPath === undefined
      ? new OperationalError(`the bundled GeoIP database ${path} ${why}; reinstall pricectl or pass --geoip-db PATH`)
      : new InvalidInputError(`--geoip-db: ${dbPath} ${why} (expected a GeoIP2/GeoLite2 Country .mmdb file; or unset it to use the bundled database)`)
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    throw fail(e.code === 'ENOENT' ? 'does not exist' : e.code === 'EISDIR' ? 'is a directory' : `cannot be read (${e.message})`)
  }
  let reader: Reader<Response>
  try {
    reader = new Reader<Response>(bytes, {cache: new RecordCache()})
  } catch (error) {
    throw fail(`is not a MaxMind DB file (${(error as Error).message})`)
  }
  const m = reader.metadata
  // mmdb-lib trusts the metadata; a truncated or foreign file must not send lookups off the end.
  if (!(m.ipVersion === 4 || m.ipVersion === 6) || !(m.nodeCount > 0) || m.searchTreeSize + 16 > bytes.length) {
    throw fail(`is not a valid MaxMind DB file (metadata: ip_version ${m.ipVersion}, node_count ${m.nodeCount}, ${bytes.length} bytes)`)
  }
  const label = dbPath === undefined ? `bundled ${BUNDLED_PACKAGE} ${bundledVersion()}` : `${m.databaseType || 'mmdb'} ${path}`
  const db = {label, path, reader}
  readers.set(path, db)
  byOption.set(dbPath, db)
  return db
}

function bundledVersion(): string {
  try {
    return (require(`${BUNDLED_PACKAGE}/package.json`) as {version: string}).version
  } catch {
    return ''
  }
}

/** What an address is, before any lookup. `address` is what gets looked up (an embedded IPv4 when there is one). */
export type IpClass =
  | {address: string; kind: 'public'; version: 4 | 6}
  | {kind: 'malformed'; reason: string}
  | {kind: 'special'; range: string; reason: string}

const SPECIAL_RANGES: Record<string, string> = {
  amt: 'an AMT relay anycast address',
  as112: 'an AS112 DNS sink address',
  as112v6: 'an AS112 DNS sink address',
  benchmarking: 'a benchmarking address (RFC 5180)',
  broadcast: 'the broadcast address',
  carrierGradeNat: 'a carrier-grade NAT shared address (RFC 6598)',
  deprecatedOrchid: 'an ORCHID address',
  deprecatedSiteLocal: 'a site-local address (deprecated)',
  discard: 'a discard-only address (RFC 6666)',
  droneRemoteIdProtocolEntityTags: 'a DRIP entity tag',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  multicast: 'a multicast address',
  orchid2: 'an ORCHIDv2 address',
  private: 'a private address (RFC 1918)',
  reserved: 'a reserved or documentation address',
  segmentRouting: 'a segment routing address',
  uniqueLocal: 'a unique local address (fc00::/7)',
  unspecified: 'the unspecified address',
}

/**
 * Classify an address with ipaddr.js: IPv4 must be four decimal parts (no "127.1" or hex
 * forms), IPv6 any valid form (a zone such as %eth0 is dropped). IPv6 addresses that carry
 * an IPv4 one (::ffff:a.b.c.d, 64:ff9b::/96 NAT64, 2002::/16 6to4) are judged and looked
 * up by it, as GeoIP2 databases alias those ranges to the IPv4 tree.
 */
export function classifyIp(input: string): IpClass {
  const ip = input.trim()
  const malformed = {kind: 'malformed', reason: `malformed IP address ${JSON.stringify(input.slice(0, 100))} (expected IPv4 a.b.c.d or IPv6): no country`} as const
  if (ip === '' || ip.length > 100) return malformed
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  if (ip.includes(':')) {
    if (!ipaddr.IPv6.isValid(ip)) return malformed
    addr = new ipaddr.IPv6(ipaddr.IPv6.parse(ip).parts) // without the zone
  } else {
    if (!ipaddr.IPv4.isValidFourPartDecimal(ip)) return malformed
    addr = ipaddr.IPv4.parse(ip)
  }
  const shown = addr.kind() === 'ipv6' ? (addr as ipaddr.IPv6).toRFC5952String() : addr.toString()
  const embedded = addr.kind() === 'ipv6' ? embeddedIPv4(addr as ipaddr.IPv6) : undefined
  const target = embedded ?? addr
  const range = target.range()
  const what = SPECIAL_RANGES[range]
  if (what) {
    const subject = embedded ? `${ip} carries ${embedded.toString()}, which is` : `${shown} is`
    return {kind: 'special', range, reason: `${subject} ${what}: no country`}
  }
  // Everything else (unicast, teredo, ...) is looked up as it is.
  if (embedded) return {address: embedded.toString(), kind: 'public', version: 4}
  return {address: shown, kind: 'public', version: addr.kind() === 'ipv4' ? 4 : 6}
}

/** The IPv4 address an IPv6 one carries, for the ranges where that is its meaning. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts
  const range = v6.range()
  const last = () => new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff])
  if (range === 'ipv4Mapped' || range === 'rfc6145') return last()
  if (range === 'rfc6052' && p[2] === 0) return last() // 64:ff9b::/96 (the /48 local-use prefix embeds differently)
  if (range === '6to4') return new ipaddr.IPv4([p[1] >> 8, p[1] & 0xff, p[2] >> 8, p[2] & 0xff])
  return undefined
}

/**
 * The country of an IP address. Never throws for a bad address (country null, reason
 * says why); throws InvalidInputError when the operator's database file is missing or
 * not an .mmdb.
 */
export function resolveCountry(ip: string, options: ResolveOptions = {}): GeoResult {
  const c = classifyIp(ip)
  if (c.kind !== 'public') return {country: null, reason: c.reason, source: 'none'}
  const shown = ip.trim() === c.address ? c.address : `${c.address} (from ${ip.trim()})`
  const db = openGeoipDb(options.dbPath)
  if (c.version === 6 && db.reader.metadata.ipVersion === 4) {
    return {country: null, reason: `${shown} is IPv6, but the database holds IPv4 only: no country`, source: db.label}
  }
  let record: null | Record_
  try {
    record = db.reader.get(c.address) as null | Record_
  } catch (error) {
    const why = `is corrupt (lookup of ${c.address} failed: ${(error as Error).message})`
    throw options.dbPath === undefined ? new OperationalError(`the bundled GeoIP database ${db.path} ${why}`) : new InvalidInputError(`--geoip-db: ${options.dbPath} ${why}`)
  }
  if (!record) return {country: null, reason: `${shown} is not in the database: no country`, source: db.label}
  for (const [field, value] of [
    ['country.iso_code', record.country?.iso_code],
    ['registered_country.iso_code', record.registered_country?.iso_code],
    ['country_code', record.country_code],
  ] as const) {
    if (typeof value !== 'string' || value === '') continue
    const code = upperCode(value)
    if (isCountry(code)) return {country: code, reason: `${shown}: ${field} ${code}`, source: db.label}
    return {country: null, reason: `${shown}: ${field} ${JSON.stringify(value)} is not an ISO 3166 country: no country`, source: db.label}
  }
  return {country: null, reason: `${shown}: the record has no country.iso_code, registered_country.iso_code or country_code: no country`, source: db.label}
}

/** Forget opened databases (tests that rewrite a file at the same path). */
export function closeGeoipDbs(): void {
  readers.clear()
  byOption.clear()
}
