import fc from 'fast-check'
import {Reader} from 'mmdb-lib'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../src/errors.js'
import {bundledGeoipPath, classifyIp, closeGeoipDbs, geoipDbPath, resolveCountry} from '../../src/geo/geoip.js'
import {geoip2Country, writeMmdb} from '../helpers/mmdb-writer.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-geoip-'))
let n = 0
function file(buf: Buffer | string): string {
  const p = join(dir, `db-${n++}.mmdb`)
  writeFileSync(p, buf)
  return p
}

afterEach(() => closeGeoipDbs())

/** An operator's GeoIP2 Country file: IPv6 tree, IPv4 under ::/96, 28-bit records. */
function operatorDb(): string {
  return file(
    writeMmdb(
      [
        {data: geoip2Country('DE'), network: '81.0.0.0/8'},
        {data: geoip2Country('FR'), network: '81.2.0.0/16'}, // more specific, inside DE's /8
        {data: {registered_country: {iso_code: 'JP', names: {en: 'Japan'}}}, network: '133.0.0.0/8'}, // anycast-like: no country
        {data: {country_code: 'BR'}, network: '177.0.0.0/8'},
        {data: {country: {iso_code: 'EU'}}, network: '185.0.0.0/8'}, // old GeoIP "EU" pseudo-country
        {data: {city: {names: {en: 'Nowhere'}}}, network: '186.0.0.0/8'},
        {data: geoip2Country('IN'), network: '2401:4900::/32'},
        {data: geoip2Country('US'), network: '2600::/12'},
      ],
      {databaseType: 'GeoIP2-Country', ipVersion: 6, recordSize: 28},
    ),
  )
}

describe('the test MMDB writer', () => {
  it.each([24, 28, 32] as const)('writes files mmdb-lib reads (record size %i, IPv4 and IPv6 trees)', (recordSize) => {
    const v4 = new Reader(writeMmdb([{data: {country_code: 'NZ', n: 70_000, x: 1.5}, network: '1.2.3.0/24'}], {ipVersion: 4, recordSize}))
    expect(v4.metadata.recordSize).toBe(recordSize)
    expect(v4.get('1.2.3.4')).toEqual({country_code: 'NZ', n: 70_000, x: 1.5})
    expect(v4.get('1.2.4.1')).toBeNull()
    const v6 = new Reader(writeMmdb([{data: {country_code: 'NZ'}, network: '1.2.3.0/24'}, {data: {country_code: 'AU'}, network: '2001:4860::/32'}], {ipVersion: 6, recordSize}))
    expect(v6.get('1.2.3.4')).toEqual({country_code: 'NZ'}) // IPv4 found under ::/96
    expect(v6.get('::102:304')).toEqual({country_code: 'NZ'})
    expect(v6.get('2001:4860::1')).toEqual({country_code: 'AU'})
  })
})

describe('resolveCountry with an operator database (--geoip-db)', () => {
  it('reads country.iso_code, then registered_country.iso_code, then country_code', () => {
    const db = operatorDb()
    expect(resolveCountry('81.10.20.30', {dbPath: db})).toMatchObject({country: 'DE', reason: '81.10.20.30: country.iso_code DE'})
    expect(resolveCountry('81.2.69.142', {dbPath: db}).country).toBe('FR')
    expect(resolveCountry('133.1.1.1', {dbPath: db})).toMatchObject({country: 'JP', reason: expect.stringContaining('registered_country.iso_code JP')})
    expect(resolveCountry('177.1.1.1', {dbPath: db})).toMatchObject({country: 'BR', reason: expect.stringContaining('country_code BR')})
    expect(resolveCountry('81.1.1.1', {dbPath: db}).source).toContain('GeoIP2-Country')
  })

  it('IPv6 addresses, and IPv4 written as IPv4-mapped IPv6', () => {
    const db = operatorDb()
    expect(resolveCountry('2401:4900:1c2a::1', {dbPath: db}).country).toBe('IN')
    expect(resolveCountry('2600:1f18::42', {dbPath: db}).country).toBe('US')
    expect(resolveCountry('::ffff:81.2.69.142', {dbPath: db})).toMatchObject({country: 'FR', reason: expect.stringContaining('81.2.69.142 (from ::ffff:81.2.69.142)')})
    expect(resolveCountry('2002:5102:4501::1', {dbPath: db}).country).toBe('FR') // 6to4 of 81.2.69.1
  })

  it('no country for unknown addresses, non-ISO codes and records without a country field', () => {
    const db = operatorDb()
    expect(resolveCountry('9.9.9.9', {dbPath: db})).toMatchObject({country: null, reason: expect.stringContaining('not in the database')})
    expect(resolveCountry('185.1.1.1', {dbPath: db})).toMatchObject({country: null, reason: expect.stringContaining('"EU" is not an ISO 3166 country')})
    expect(resolveCountry('186.1.1.1', {dbPath: db})).toMatchObject({country: null, reason: expect.stringContaining('has no country.iso_code')})
  })

  it('an IPv4-only database answers IPv4 and says so for IPv6', () => {
    const db = file(writeMmdb([{data: geoip2Country('SE'), network: '78.0.0.0/8'}], {ipVersion: 4, recordSize: 24}))
    expect(resolveCountry('78.1.2.3', {dbPath: db}).country).toBe('SE')
    expect(resolveCountry('::ffff:78.1.2.3', {dbPath: db}).country).toBe('SE')
    expect(resolveCountry('2a00::1', {dbPath: db})).toMatchObject({country: null, reason: expect.stringContaining('IPv4 only')})
  })

  it('every address of a network resolves to its country (property)', () => {
    const db = operatorDb()
    fc.assert(
      fc.property(fc.integer({max: 255, min: 0}), fc.integer({max: 255, min: 0}), fc.integer({max: 255, min: 0}), (b, c, d) => {
        const expected = b === 2 ? 'FR' : 'DE'
        expect(resolveCountry(`81.${b}.${c}.${d}`, {dbPath: db}).country).toBe(expected)
      }),
      {numRuns: 300},
    )
  })

  it('a missing or corrupt file is an input error naming the path', () => {
    const missing = join(dir, 'nope.mmdb')
    expect(() => resolveCountry('8.8.8.8', {dbPath: missing})).toThrow(InvalidInputError)
    expect(() => resolveCountry('8.8.8.8', {dbPath: missing})).toThrow(`--geoip-db: ${missing} does not exist`)
    const text = file('this is not a database\n')
    expect(() => resolveCountry('8.8.8.8', {dbPath: text})).toThrow(new RegExp(`--geoip-db: ${text} is not a.*MaxMind DB`))
    const good = writeMmdb([{data: geoip2Country('DE'), network: '81.0.0.0/8'}], {ipVersion: 6})
    const truncated = file(Buffer.concat([good.subarray(0, 40), good.subarray(good.length - 200 > 0 ? good.length - 200 : 0)]))
    expect(() => resolveCountry('81.1.1.1', {dbPath: truncated})).toThrow(InvalidInputError)
    expect(() => resolveCountry('81.1.1.1', {dbPath: dir})).toThrow(`${dir} is a directory`)
  })

  it('loads a database only when an address must be looked up, then keeps it', () => {
    const missing = join(dir, 'never-read.mmdb')
    // Private and malformed addresses never open the database, so a bad path is not noticed.
    expect(resolveCountry('192.168.1.10', {dbPath: missing}).country).toBeNull()
    expect(resolveCountry('not-an-ip', {dbPath: missing}).country).toBeNull()
    const path = file(writeMmdb([{data: geoip2Country('DE'), network: '81.0.0.0/8'}], {ipVersion: 4}))
    expect(resolveCountry('81.1.1.1', {dbPath: path}).country).toBe('DE')
    writeFileSync(path, writeMmdb([{data: geoip2Country('AT'), network: '81.0.0.0/8'}], {ipVersion: 4}))
    expect(resolveCountry('81.1.1.1', {dbPath: path}).country).toBe('DE') // the reader is cached per path
    closeGeoipDbs()
    expect(resolveCountry('81.1.1.1', {dbPath: path}).country).toBe('AT')
  })
})

describe('addresses that get no country (never looked up)', () => {
  const missing = join(tmpdir(), 'pricectl-no-such-geoip.mmdb')
  it.each([
    ['10.1.2.3', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd12:3456::1', 'unique local'],
    ['100.64.1.1', 'carrier-grade NAT'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['240.0.0.1', 'reserved'],
    ['224.0.0.251', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['::ffff:192.168.1.1', 'private'],
  ])('%s (%s)', (ip, what) => {
    const r = resolveCountry(ip, {dbPath: missing})
    expect(r).toEqual({country: null, reason: expect.stringContaining(what), source: 'none'})
  })

  it.each(['', 'abc', '1.2.3', '1.2.3.4.5', '256.1.1.1', '127.1', '0x7f.0.0.1', '010.1.1.1', '1.2.3.4/24', '2001:::1', 'gggg::1', '1.2.3.4 5'])(
    'malformed %j',
    (ip) => {
      const r = resolveCountry(ip, {dbPath: missing})
      expect(r.country).toBeNull()
      expect(r.reason).toMatch(/^malformed IP address/)
      expect(classifyIp(ip).kind).toBe('malformed')
    },
  )

  it('private IPv4 addresses never get a country (property)', () => {
    fc.assert(
      fc.property(fc.integer({max: 255, min: 0}), fc.integer({max: 255, min: 0}), fc.integer({max: 255, min: 0}), (a, b, c) => {
        expect(resolveCountry(`10.${a}.${b}.${c}`, {dbPath: missing}).country).toBeNull()
        expect(resolveCountry(`192.168.${a}.${b}`, {dbPath: missing}).country).toBeNull()
      }),
      {numRuns: 200},
    )
  })
})

describe('the bundled database (offline)', () => {
  it('ships with the install and reads country_code records', () => {
    expect(bundledGeoipPath()).toMatch(/geo-whois-asn-country\.mmdb$/)
  })

  it.each([
    ['8.8.8.8', 'US'],
    ['2001:4860:4860::8888', 'US'],
    ['193.0.6.139', 'NL'],
    ['::ffff:8.8.4.4', 'US'],
  ])('%s -> %s', (ip, country) => {
    const r = resolveCountry(ip)
    expect(r.country).toBe(country)
    expect(r.reason).toContain(`country_code ${country}`)
    expect(r.source).toMatch(/^bundled @ip-location-db\/geo-whois-asn-country-mmdb/)
  })
})

describe('geoipDbPath', () => {
  it('flag, else PRICECTL_GEOIP_DB, else the bundled database (undefined)', () => {
    const saved = process.env.PRICECTL_GEOIP_DB
    try {
      delete process.env.PRICECTL_GEOIP_DB
      expect(geoipDbPath()).toBeUndefined()
      process.env.PRICECTL_GEOIP_DB = '/srv/GeoLite2-Country.mmdb'
      expect(geoipDbPath()).toBe('/srv/GeoLite2-Country.mmdb')
      expect(geoipDbPath('./own.mmdb')).toBe('./own.mmdb')
      process.env.PRICECTL_GEOIP_DB = ''
      expect(geoipDbPath()).toBeUndefined()
    } finally {
      if (saved === undefined) delete process.env.PRICECTL_GEOIP_DB
      else process.env.PRICECTL_GEOIP_DB = saved
    }
  })
})
