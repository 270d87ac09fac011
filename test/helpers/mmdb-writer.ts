import ipaddr from 'ipaddr.js'

/**
 * A tiny MaxMind DB (.mmdb) writer for tests, following the published format spec
 * (https://maxmind.github.io/MaxMind-DB/): a binary search tree of nodes with two records
 * each (24, 28 or 32 bits), 16 zero bytes, the data section, then "\xAB\xCD\xEFMaxMind.com"
 * and the metadata map. Enough to produce small GeoIP2-style country files.
 */

export type MmdbValue = boolean | MmdbValue[] | number | string | {[key: string]: MmdbValue}
export type MmdbEntry = {data: {[key: string]: MmdbValue}; network: string}
export type MmdbOptions = {
  databaseType?: string
  /** 4: an IPv4 tree. 6: an IPv6 tree with IPv4 networks at ::/96, as GeoIP2 files store them. */
  ipVersion: 4 | 6
  recordSize?: 24 | 28 | 32
}

type Rec = {i: number; t: 'data'} | {i: number; t: 'node'} | {t: 'empty'}

const TYPE = {array: 11, boolean: 14, double: 3, map: 7, uint16: 5, uint32: 6, uint64: 9, utf8: 2} as const

function control(type: number, size: number): number[] {
  let sizeBits: number
  let extra: number[] = []
  if (size < 29) sizeBits = size
  else if (size < 29 + 256) {
    sizeBits = 29
    extra = [size - 29]
  } else if (size < 285 + 65_536) {
    sizeBits = 30
    const s = size - 285
    extra = [s >> 8, s & 0xff]
  } else {
    sizeBits = 31
    const s = size - 65_821
    extra = [(s >> 16) & 0xff, (s >> 8) & 0xff, s & 0xff]
  }
  return type <= 7 ? [(type << 5) | sizeBits, ...extra] : [sizeBits, type - 7, ...extra]
}

function uintBytes(n: bigint | number): number[] {
  let v = BigInt(n)
  const out: number[] = []
  while (v > 0n) {
    out.unshift(Number(v & 0xffn))
    v >>= 8n
  }
  return out
}

/** Encode one value of the data section. Integers pick uint16/uint32/uint64 by size; other numbers are doubles. */
export function encodeValue(v: MmdbValue | {uint64: bigint | number}): number[] {
  if (typeof v === 'string') {
    const b = [...Buffer.from(v, 'utf8')]
    return [...control(TYPE.utf8, b.length), ...b]
  }
  if (typeof v === 'boolean') return control(TYPE.boolean, v ? 1 : 0)
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= 0 && v < 2 ** 32) {
      const b = uintBytes(v)
      return [...control(v < 65_536 ? TYPE.uint16 : TYPE.uint32, b.length), ...b]
    }
    const buf = Buffer.alloc(8)
    buf.writeDoubleBE(v)
    return [...control(TYPE.double, 8), ...buf]
  }
  if (Array.isArray(v)) return [...control(TYPE.array, v.length), ...v.flatMap((x) => encodeValue(x))]
  if ('uint64' in v && Object.keys(v).length === 1 && typeof v.uint64 !== 'object') {
    const b = uintBytes(v.uint64 as bigint | number)
    return [...control(TYPE.uint64, b.length), ...b]
  }
  const entries = Object.entries(v as {[key: string]: MmdbValue})
  return [...control(TYPE.map, entries.length), ...entries.flatMap(([k, x]) => [...encodeValue(k), ...encodeValue(x)])]
}

/** Network "a.b.c.d/n" or "2001:db8::/32" as tree bits (IPv4 under ::/96 in an IPv6 tree). */
function networkBits(network: string, ipVersion: 4 | 6): number[] {
  const [addr, prefix] = ipaddr.parseCIDR(network)
  const bytes = addr.toByteArray()
  const bits = bytes.flatMap((b) => [7, 6, 5, 4, 3, 2, 1, 0].map((i) => (b >> i) & 1)).slice(0, prefix)
  if (addr.kind() === 'ipv4') return ipVersion === 6 ? [...Array.from({length: 96}, () => 0), ...bits] : bits
  if (ipVersion === 4) throw new Error(`IPv6 network ${network} in an IPv4 database`)
  return bits
}

export function writeMmdb(entries: MmdbEntry[], options: MmdbOptions): Buffer {
  const recordSize = options.recordSize ?? 24
  // Data section: each distinct record once.
  const dataOffsets = new Map<string, number>()
  const data: number[] = []
  const dataIndex = (d: MmdbEntry['data']): number => {
    const key = JSON.stringify(d)
    let off = dataOffsets.get(key)
    if (off === undefined) {
      off = data.length
      dataOffsets.set(key, off)
      data.push(...encodeValue(d))
    }
    return off
  }
  // Tree: broader networks first, so a more specific one splits the leaf it falls in.
  const nodes: [Rec, Rec][] = [[{t: 'empty'}, {t: 'empty'}]]
  const sorted = entries.map((e) => ({bits: networkBits(e.network, options.ipVersion), off: dataIndex(e.data)})).sort((a, b) => a.bits.length - b.bits.length)
  for (const {bits, off} of sorted) {
    if (bits.length === 0) throw new Error('a /0 network is not supported')
    let node = 0
    for (let d = 0; d < bits.length; d++) {
      const bit = bits[d]
      if (d === bits.length - 1) {
        nodes[node][bit] = {i: off, t: 'data'}
        break
      }
      const rec = nodes[node][bit]
      if (rec.t === 'node') {
        node = rec.i
      } else {
        nodes.push([rec, rec])
        nodes[node][bit] = {i: nodes.length - 1, t: 'node'}
        node = nodes.length - 1
      }
    }
  }
  const nodeCount = nodes.length
  const value = (r: Rec): number => (r.t === 'node' ? r.i : r.t === 'empty' ? nodeCount : nodeCount + 16 + r.i)
  const nodeBytes = (recordSize * 2) / 8
  const tree = Buffer.alloc(nodeCount * nodeBytes)
  nodes.forEach(([l, r], n) => {
    const o = n * nodeBytes
    const left = value(l)
    const right = value(r)
    if (recordSize === 24) {
      tree.writeUIntBE(left, o, 3)
      tree.writeUIntBE(right, o + 3, 3)
    } else if (recordSize === 28) {
      tree.writeUIntBE(left & 0xff_ffff, o, 3)
      tree[o + 3] = (((left >>> 24) & 0x0f) << 4) | ((right >>> 24) & 0x0f)
      tree.writeUIntBE(right & 0xff_ffff, o + 4, 3)
    } else {
      tree.writeUInt32BE(left, o)
      tree.writeUInt32BE(right, o + 4)
    }
  })
  const metadata = encodeValue({
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: {uint64: 1_767_225_600} as unknown as MmdbValue,
    database_type: options.databaseType ?? 'Test-Country',
    description: {en: 'pricectl test database'},
    ip_version: options.ipVersion,
    languages: ['en'],
    node_count: nodeCount,
    record_size: recordSize,
  })
  return Buffer.concat([tree, Buffer.alloc(16), Buffer.from(data), Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com'), Buffer.from(metadata)])
}

/** A GeoIP2/GeoLite2 Country style record. */
export function geoip2Country(iso: string, registered = iso): {[key: string]: MmdbValue} {
  return {
    continent: {code: 'EU', geoname_id: 6_255_148, names: {en: 'Europe'}},
    country: {geoname_id: 1000, iso_code: iso, names: {en: `Country ${iso}`}},
    registered_country: {geoname_id: 1001, iso_code: registered, names: {en: `Country ${registered}`}},
  }
}
