import type {Lock, LockedCoupon, LockedProduct, LockedTax, LockQuote, RelabelledFrom} from '../domain.js'
import type {Adoption, ExperimentsRepository, Exposure, ExposureChange} from '../store/port/experiments.js'
import type {PricingRepository, UserCountry} from '../store/port/pricing.js'

export type {Lock, LockedCoupon, LockedProduct, LockedTax, LockQuote, RelabelledFrom}

/**
 * The quote as stored: fields equal to their usual value are left out (a batch writes one
 * lock per request, so the row size is the write cost). unpackQuote restores them. Written
 * out by hand: it runs once per new lock, and building it as text skips a copy of the quote.
 */
export function packQuote(lock: Lock): string {
  const known = packedQuote(lock)
  return typeof known === 'string' ? known : known.text
}

/**
 * A packed quote remembered with everything its text is made of: a batch of new users packs
 * the same few quotes (one per country, currency and audience) into every lock, and
 * comparing these values costs less than building the text again and leaves no garbage
 * (docs/performance.md "Batch pricing"). `id` numbers the texts for this process's
 * life (the write-behind writer gets a number for a text it was sent before).
 */
export type PackedQuote = {readonly id: number; readonly text: string}

type PackedEntry = PackedQuote & {
  audience: LockQuote['audience']
  countrySource: string
  currencySource: string
  experimentType: LockQuote['experiment_type']
  matching: LockQuote['matching_audiences']
  /** Per product: id, interval, interval_count, layer, price_minor, baseline_minor, control_minor, currency, tax text. */
  products: unknown[]
  toSelect: string[]
}

/** Remembered packed quotes by lock currency (the latest PACKED_PER_CURRENCY each, PACKED_CURRENCIES currencies). */
const packed = new Map<string, PackedEntry[]>()
const PACKED_PER_CURRENCY = 32
const PACKED_CURRENCIES = 256
let nextPackedId = 0
const PRODUCT_VALUES = 9

/** packQuote's text, remembered when it holds no coupon (then with its number); a text of its own otherwise. */
export function packedQuote(lock: Lock): PackedQuote | string {
  const q = lock.quote
  let entries = packed.get(lock.currency)
  if (entries !== undefined) for (const e of entries) if (samePacked(e, q)) return e
  const text = packQuoteNow(lock)
  if (entries === undefined) {
    if (packed.size >= PACKED_CURRENCIES) return text
    entries = []
    packed.set(lock.currency, entries)
  }
  // The oldest gives way: a long-running process (serve, or quotes of earlier catalogs)
  // keeps numbering the quotes it prices now instead of keeping the first ones forever.
  if (entries.length >= PACKED_PER_CURRENCY) entries.shift()
  const products: unknown[] = []
  for (const id in q.products) {
    const p = q.products[id]
    if (p.coupon !== undefined || p.relabelled_from !== undefined) return text
    products.push(id, p.interval, p.interval_count, p.layer, p.price_minor, p.baseline_minor, p.control_minor, p.currency, taxText(p.tax))
  }
  const e: PackedEntry = {
    audience: q.audience,
    countrySource: q.country_source,
    currencySource: q.currency_source,
    experimentType: q.experiment_type,
    id: nextPackedId++,
    matching: [...q.matching_audiences],
    products,
    text,
    toSelect: [...q.products_to_select],
  }
  entries.push(e)
  return e
}

/** Whether `q` packs to the entry's text (the lock currency is the entry's: see `packed`). */
function samePacked(e: PackedEntry, q: LockQuote): boolean {
  if (e.countrySource !== q.country_source || e.currencySource !== q.currency_source || e.experimentType !== q.experiment_type) return false
  // The default audience is left out of the text; any other is written whole (compared by identity).
  if (e.audience !== q.audience && !(e.audience.api_id === 'default' && q.audience.api_id === 'default')) return false
  if (!sameItems(e.matching, q.matching_audiences) || !sameItems(e.toSelect, q.products_to_select)) return false
  const v = e.products
  let i = 0
  for (const id in q.products) {
    const p = q.products[id]
    if (
      i >= v.length ||
      v[i] !== id ||
      v[i + 4] !== p.price_minor ||
      v[i + 1] !== p.interval ||
      v[i + 2] !== p.interval_count ||
      v[i + 3] !== p.layer ||
      v[i + 5] !== p.baseline_minor ||
      v[i + 6] !== p.control_minor ||
      v[i + 7] !== p.currency ||
      v[i + 8] !== taxText(p.tax) ||
      p.coupon !== undefined ||
      p.relabelled_from !== undefined
    )
      return false
    i += PRODUCT_VALUES
  }
  return i === v.length
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** packQuote's text built now, without the remembered ones (exported for the tests that compare both). */
export function packQuoteNow(lock: Lock): string {
  const q = lock.quote
  let products = ''
  for (const id in q.products) {
    products += `${products ? ',' : ''}${json(id)}:${packProduct(q.products[id], lock.currency)}`
  }
  let out = `{"country_source":${json(q.country_source)},"currency_source":${json(q.currency_source)},"products":{${products}}`
  if (q.audience.api_id !== 'default') out += `,"audience":${JSON.stringify(q.audience)}`
  if (q.matching_audiences.length > 0) out += `,"matching_audiences":${JSON.stringify(q.matching_audiences)}`
  if (q.experiment_type !== null) out += `,"experiment_type":${json(q.experiment_type)}`
  if (q.products_to_select.length > 0) out += `,"products_to_select":${JSON.stringify(q.products_to_select)}`
  return out + '}'
}

function packProduct(p: LockedProduct, lockCurrency: string): string {
  let out = `{"interval":${json(p.interval)},"interval_count":${p.interval_count},"layer":${json(p.layer)},"price_minor":${p.price_minor}`
  if (p.baseline_minor !== null) out += `,"baseline_minor":${p.baseline_minor}`
  if (p.control_minor !== p.price_minor) out += `,"control_minor":${p.control_minor}`
  if (p.currency !== lockCurrency) out += `,"currency":${json(p.currency)}`
  if (p.coupon) out += `,"coupon":${JSON.stringify(p.coupon)}`
  if (p.relabelled_from) out += `,"relabelled_from":${JSON.stringify(p.relabelled_from)}`
  if (p.tax) out += `,"tax":${json(taxText(p.tax)!)}`
  return out + '}'
}

/**
 * A locked product's tax as stored: "inclusive 19" (its behaviour and rate in percent), one
 * short text a batch writes into every lock. Remembered per behaviour and rate.
 */
const inclusiveTexts = new Map<number, string>()
const exclusiveTexts = new Map<number, string>()
function taxText(t: LockedTax | undefined): string | undefined {
  if (t === undefined) return undefined
  // By behaviour, then rate: no key text built per product of every new lock.
  const texts = t.behavior === 'inclusive' ? inclusiveTexts : exclusiveTexts
  let text = texts.get(t.bp)
  if (text === undefined) {
    text = `${t.behavior} ${t.bp / 100}`
    if (texts.size < 1024) texts.set(t.bp, text)
  }
  return text
}

/** packProduct's tax text back as a LockedTax. */
function parseTax(text: string): LockedTax {
  const [behavior, percent] = text.split(' ')
  return {behavior: behavior === 'inclusive' ? 'inclusive' : 'exclusive', bp: Math.round(Number(percent) * 100)}
}

/**
 * JSON.stringify of a string, remembered: a batch packs the same few product ids, layers,
 * intervals and sources into every lock (docs/performance.md "Batch pricing").
 */
const jsonStrings = new Map<string, string>()
function json(s: string): string {
  let j = jsonStrings.get(s)
  if (j === undefined) {
    j = JSON.stringify(s)
    if (jsonStrings.size < 4096) jsonStrings.set(s, j)
  }
  return j
}

/** A stored quote (packQuote's text) as a quote: the fields left out get their usual values, products the lock currency. */
export function unpackQuote(json: string, currency: string): LockQuote {
  // Filled in place: the parsed objects are fresh (the calculation changes the objects it gets).
  const q = JSON.parse(json) as LockQuote
  for (const id in q.products) {
    const p = q.products[id] as Partial<LockedProduct> & {price_minor: number}
    if (p.baseline_minor === undefined) p.baseline_minor = null
    if (p.control_minor === undefined) p.control_minor = p.price_minor
    if (p.currency === undefined) p.currency = currency
    if (typeof p.tax === 'string') p.tax = parseTax(p.tax)
  }
  q.audience ??= {api_id: 'default', name: 'default'}
  q.country_source ??= ''
  q.currency_source ??= ''
  q.experiment_type ??= null
  q.matching_audiences ??= []
  q.products_to_select ??= []
  return q
}

/** The error a write to a read-only store fails with (what SQLite itself throws: the commands report it as "the store is read-only"). */
function readOnlyError(): Error {
  return Object.assign(new Error('attempt to write a readonly database'), {code: 'SQLITE_READONLY'})
}

type Prefetchable = null | {country?: unknown; get_ip_from_request?: unknown; override?: unknown; ip?: unknown; run_experiment?: unknown; user_id?: unknown}

/** How QuoteChunk.begin reads a chunk's requests ahead. */
export type ChunkOptions = {
  /** The HTTP request's address: the IP of a request with get_ip_from_request and no ip. */
  requestIp?: string
  /**
   * A chunk of one whose calculation never reads the lock (a dry run that recomputes for a
   * given country without an IP, price.ts): its lock is not read ahead.
   */
  lockless?: boolean
  /** The requests name each lock key and IP once (a batch's chunk: chunkOfDistinctKeys), so none is looked for twice. */
  distinct?: boolean
  /**
   * A chunk that only answers from stored locks as they are (the server's first attempt,
   * without a transaction: a request that would write is priced again in one): what only a
   * new quote reads (stored countries, experiment state) is not read.
   */
  reuseOnly?: boolean
  /**
   * Batch pricing of JSONL lines: of the requests whose locks were read as these
   * fingerprints (undefined: no lock), which will be printed from an earlier line (price.ts
   * priceLine); the locks of the others are read whole too, so the calculation finds them
   * loaded. Called once per chunk: the checks run in the caller's loop, not in this one.
   */
  printed?: (prints: readonly (string | undefined)[], requests: readonly unknown[]) => readonly boolean[]
}

/** Add the lock keys a raw request reads (its user id, its IP) to `into`; false when one was there already. */
function addKeys(input: unknown, into: Set<string>): boolean {
  const r = input as Prefetchable
  if (!r || typeof r !== 'object') return true
  let fresh = true
  if (typeof r.user_id === 'string') {
    if (into.has(r.user_id)) fresh = false
    else into.add(r.user_id)
  }
  if (typeof r.ip === 'string') {
    if (into.has(r.ip)) fresh = false
    else into.add(r.ip)
  }
  return fresh
}

const seen = new Set<string>()

/**
 * How many of `requests`, from the first, name no lock key (user id or IP) twice: a batch
 * begins a chunk with those only, so that every key is read once, when the chunk begins,
 * and a request never needs what an earlier request of its own chunk wrote (QuoteChunk).
 */
export function chunkOfDistinctKeys(requests: readonly unknown[]): number {
  let n = 0
  try {
    while (n < requests.length && addKeys(requests[n], seen)) n++
  } finally {
    seen.clear()
  }
  return Math.max(1, n)
}

/**
 * Keys a request may have for its lock to be read as a fingerprint (see QuoteChunk.begin):
 * those of a request a reused lock answers as stored (price.ts writeLockedLine).
 */
const FINGERPRINT_KEYS: ReadonlySet<string> = new Set(['country', 'currency', 'integrations', 'package_id', 'products', 'run_experiment', 'user_id'])

/** Whether a raw request looks like one writeLockedLine may answer: a user id, no IP, no override, no coupons or features. */
function fingerprintable(r: object): boolean {
  for (const k in r) if (!FINGERPRINT_KEYS.has(k)) return false
  return typeof (r as {user_id?: unknown}).user_id === 'string'
}

/** What an exposure changed, when nothing more is to say (no object per exposure). */
const NEW_EXPOSURE: ExposureChange = Object.freeze({change: 'new'})
const SAME_EXPOSURE: ExposureChange = Object.freeze({change: 'same'})

/** QuoteChunk `locks`: loaded, and the store has no lock for the key. */
const NO_LOCK: unique symbol = Symbol('no lock')
/** QuoteChunk `locks`: handed out (the calculation may have changed it). */
const TAKEN: unique symbol = Symbol('taken')
/** QuoteChunk `locks`: written by this chunk. */
const PENDING: unique symbol = Symbol('pending')

/** What a calculation asks of a chunk that its begin() did not read: a bug, never a store read. */
function notLoaded(what: string): Error {
  return new Error(`internal error: the price calculation needs ${what}, which its chunk did not read when it began`)
}

/**
 * The lock keys and IPs that more than one of `requests` names (a request that names one as
 * both its key and its IP counts once), undefined when none.
 */
function sharedNames(requests: readonly unknown[], requestIp: string | undefined): Set<string> | undefined {
  if (requests.length < 2) return undefined
  let shared: Set<string> | undefined
  const name = (n: string | undefined): void => {
    if (n === undefined) return
    if (seen.has(n)) (shared ??= new Set()).add(n)
    else seen.add(n)
  }
  try {
    for (const input of requests) {
      const r = input as Prefetchable
      if (!r || typeof r !== 'object') continue
      const ip = typeof r.ip === 'string' ? r.ip : r.get_ip_from_request === true ? requestIp : undefined
      const key = typeof r.user_id === 'string' ? r.user_id : ip
      name(key)
      if (ip !== key) name(ip)
    }
  } finally {
    seen.clear()
  }
  return shared
}

/**
 * The store state of one chunk of price requests (docs/pricing.md "Storage"): its locks,
 * user countries and the experiment state its new quotes need, read from the store in one
 * call per kind when the chunk begins; its lock, user country and exposure writes, gathered
 * while it is priced and written in one call per kind at its flush. The calculation reads
 * memory only in between, and never calls the store: what begin() did not read is an
 * internal error. A single price is a chunk of one.
 *
 * What was loaded ahead is handed out once, as it is (the calculation changes the objects
 * it gets). A batch begins a chunk whose requests name each lock key and IP once
 * (chunkOfDistinctKeys). When a caller's requests name one twice, begin() keeps what the
 * store holds for it in `view`, which the chunk's writes change as the store would (a save
 * keeps the stored created_at), and hands out copies of it. The writes of a request that
 * fails stay pending (a batch commits them, as it did one by one); `close()` drops what was
 * not written (a single price's rolled-back transaction).
 */
export class QuoteChunk {
  /** Whether a chunk is open (batch); priceRequest opens a chunk of one otherwise. */
  open = false
  /** Whether a request holds the chunk (claim()); those waiting for it, in order. */
  private claimed = false
  private readonly waiting: (() => void)[] = []

  /**
   * Hold the chunk for one request priced as a chunk of its own: requests served side by
   * side (the server) take turns, since begin() and flush() await the store. Undefined when
   * it was free (held now), else a promise of the turn. release() hands it on.
   */
  claim(): Promise<void> | undefined {
    if (!this.claimed) {
      this.claimed = true
      return undefined
    }
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.claimed = false
  }
  /**
   * Locks loaded ahead, by key: NO_LOCK when the store has none, TAKEN once handed out,
   * PENDING once written (set, not deleted: a Map shrinks its table on delete, and a second
   * Map of the pending writes grew again for every chunk; docs/performance.md "New users:
   * write-behind").
   */
  private locks = new Map<string, Lock | typeof NO_LOCK | typeof PENDING | typeof TAKEN>()
  private anonymous = new Map<string, Lock | undefined>()
  /** Stored countries by user id, as read at begin() and then written by this chunk. */
  private countries = new Map<string, string | undefined>()
  /** The lock of each key (and of each IP's anonymous lock) the chunk's requests name more than once, as this chunk changes it. */
  private view?: Map<string, Lock | undefined>
  /**
   * Writes of this chunk, in order: a lock to save, or null for a lock to delete, and its key.
   * The flush deletes before it saves, so a delete drops the earlier saves of its key.
   */
  private pending: (Lock | null)[] = []
  private pendingKeys: string[] = []
  private countryWrites: UserCountry[] = []
  /**
   * Batch pricing of JSONL lines (price.ts writeLockedLine): the locks of requests that look
   * like a reused lock's are read as fingerprints, not as locks. Turned off for the rest of
   * the batch when too many of them are read again whole (requests that change their lock).
   */
  fingerprints = false
  private printed = new Map<string, string>()
  private fingerprintHits = 0
  private fingerprintMisses = 0

  /** Exposures and adoptions of this chunk, written at the flush after its locks and users. */
  private exposures: Exposure[] = []
  private adoptions: Adoption[] = []
  /** Per adoption, how many exposures were recorded before it. */
  private adoptedAfter: number[] = []
  /** Arms read ahead by loadArms, by experiment and visitor (undefined: no exposure stored). */
  private arms = new Map<number, Map<string, string | undefined>>()

  constructor(
    private readonly repo: PricingRepository,
    private readonly experiments: ExperimentsRepository,
    private readonly readOnly = false,
  ) {}

  /**
   * Open a chunk and load what its requests will read: their locks, and for requests that
   * will not use a lock, their IP's anonymous lock and stored user country, and what the
   * experiments layer reads for new quotes (`prepare`). Requests are the raw inputs
   * (validated later, one by one): what is not a string is not loaded.
   */
  async begin(requests: readonly unknown[], options: ChunkOptions = {}): Promise<void> {
    this.open = true
    const requestIp = options.requestIp
    // Names read more than once are answered from `view` (see the class); a batch has none.
    const shared = options.distinct ? undefined : sharedNames(requests, requestIp)
    const keys: string[] = []
    const reqs: Prefetchable[] = []
    const printKeys: string[] = []
    const printReqs: Prefetchable[] = []
    const fingerprints = this.fingerprints && (this.fingerprintMisses < 64 || this.fingerprintMisses * 8 < this.fingerprintHits)
    for (const input of requests) {
      const r = input as Prefetchable
      if (!r || typeof r !== 'object') continue
      const ip = typeof r.ip === 'string' ? r.ip : r.get_ip_from_request === true ? requestIp : undefined
      const key = typeof r.user_id === 'string' ? r.user_id : ip
      if (key === undefined) continue
      if (fingerprints && fingerprintable(r) && !shared?.has(key)) {
        printKeys.push(key)
        printReqs.push(r)
      } else {
        keys.push(key)
        reqs.push(r)
      }
    }
    // A first attempt that finds no lock prices again in a transaction, which reads it again:
    // it need not ask the database for a lock the store does not remember.
    const found: unknown[] = keys.length > 0 && !options.lockless ? await this.repo.loadLocks(keys, {memoryOnly: options.reuseOnly}) : []
    if (!options.lockless) for (let i = 0; i < keys.length; i++) this.locks.set(keys[i], (found[i] as Lock | undefined) ?? NO_LOCK)
    const named = keys.length
    if (printKeys.length > 0) {
      const prints = await this.repo.loadLockFingerprints(printKeys)
      const fromLines = options.printed?.(prints, printReqs)
      // Locks whose line will not be printed from an earlier one are read whole now as well.
      const whole: string[] = []
      for (let i = 0; i < printKeys.length; i++) {
        const key = printKeys[i]
        // No lock: the calculation makes one without reading the store again.
        if (prints[i] === undefined) this.locks.set(key, NO_LOCK)
        else {
          this.printed.set(key, prints[i]!)
          if (fromLines?.[i] === true) this.locks.delete(key)
          else whole.push(key)
        }
        keys.push(key)
        reqs.push(printReqs[i])
        found.push(prints[i])
      }
      if (whole.length > 0) {
        const locks = await this.repo.loadLocks(whole)
        for (let i = 0; i < whole.length; i++) this.locks.set(whole[i], locks[i] ?? NO_LOCK)
      }
    }
    if (keys.length === 0) return
    const ips: string[] = []
    const users: string[] = []
    const freshKeys: string[] = []
    for (let i = 0; i < keys.length; i++) {
      const r = reqs[i]!
      // A key named twice may lose its lock to an earlier request of the chunk: read as for a new quote too.
      const again = shared !== undefined && shared.has(keys[i])
      // A request that runs no experiment needs no experiment state (previews, impact snapshots).
      const fresh = !options.reuseOnly && (!found[i] || r.override === true || again)
      if (fresh && r.run_experiment !== false) freshKeys.push(keys[i])
      if (typeof r.user_id !== 'string') continue
      const ip = typeof r.ip === 'string' ? r.ip : r.get_ip_from_request === true ? requestIp : undefined
      // Only for a new quote: adopting an anonymous lock is a write, which a chunk that answers
      // from stored locks only (reuseOnly) leaves to the transaction that prices it again.
      if ((!found[i] || again) && ip !== undefined && !options.reuseOnly) ips.push(ip)
      if (fresh && !r.country) users.push(r.user_id)
    }
    const anon = ips.length > 0 ? await this.repo.loadAnonymousLocks(ips) : []
    for (let i = 0; i < ips.length; i++) this.anonymous.set(ips[i], anon[i])
    if (users.length > 0) {
      const c = await this.repo.userCountries(users)
      for (let i = 0; i < users.length; i++) this.countries.set(users[i], c[i])
    }
    if (shared !== undefined && !options.lockless) {
      // A key's own lock first; an IP named only for its anonymous lock: that lock (an anonymous lock's key is its IP).
      const view = new Map<string, Lock | undefined>()
      for (let i = 0; i < named; i++) if (shared.has(keys[i]) && !view.has(keys[i])) view.set(keys[i], found[i] as Lock | undefined)
      for (let i = 0; i < ips.length; i++) if (shared.has(ips[i]) && !view.has(ips[i])) view.set(ips[i], anon[i])
      this.view = view
    }
    if (freshKeys.length > 0) await this.prepare?.(freshKeys)
  }

  /**
   * Called by begin() with the keys of the requests that may make a new quote (no lock
   * stored, or an override): the experiments layer reads what their assignment needs then
   * (PricingContext sets it).
   */
  prepare?: (keys: readonly string[]) => Promise<void>

  /**
   * Read ahead the arms these visitors are exposed to in an experiment (ExperimentsRepository
   * exposuresOf): recordExposure then knows what an exposure changes.
   */
  async loadArms(experimentId: number, visitors: readonly string[]): Promise<void> {
    const stored = await this.experiments.exposuresOf(experimentId, visitors)
    let arms = this.arms.get(experimentId)
    if (arms === undefined) this.arms.set(experimentId, (arms = new Map()))
    for (let i = 0; i < visitors.length; i++) arms.set(visitors[i], stored[i])
  }

  /**
   * An exposure, written at the flush with the chunk's locks. What it changes for the
   * visitor counts, when the visitor's arm was read ahead (loadArms); undefined otherwise.
   */
  recordExposure(x: Exposure): ExposureChange | undefined {
    if (this.readOnly) throw readOnlyError()
    this.exposures.push(x)
    const arms = this.arms.get(x.experimentId)
    if (arms === undefined || !arms.has(x.visitor)) return undefined
    const previous = arms.get(x.visitor)
    arms.set(x.visitor, x.armId)
    if (previous === undefined) return NEW_EXPOSURE
    return previous === x.armId ? SAME_EXPOSURE : {change: 'moved', previous}
  }

  /** A user adopted an anonymous lock that had an arm: the exposure moves at the flush. */
  adoptExposure(a: Adoption): void {
    if (this.readOnly) throw readOnlyError()
    this.adoptions.push(a)
    this.adoptedAfter.push(this.exposures.length)
  }

  /**
   * The fingerprint (PricingRepository.loadLockFingerprints) of the lock stored for `key`,
   * when the chunk read it so and has not written that key since; undefined otherwise.
   */
  fingerprint(key: string): string | undefined {
    return this.printed.get(key)
  }

  /** Whether the line of a fingerprinted lock was printed again (hit) or the lock read whole (miss). */
  fingerprintUsed(hit: boolean): void {
    if (hit) this.fingerprintHits++
    else this.fingerprintMisses++
  }

  lock(key: string): Lock | undefined {
    if (this.view !== undefined && this.view.has(key)) return copyOf(this.view.get(key))
    const l = this.locks.get(key)
    if (l === undefined || l === TAKEN || l === PENDING) throw notLoaded(`the lock of ${JSON.stringify(key)}`)
    this.locks.set(key, TAKEN)
    return l === NO_LOCK ? undefined : l
  }

  /** The anonymous lock an IP got before the user was known. */
  anonymousLock(ip: string): Lock | undefined {
    if (this.view !== undefined && this.view.has(ip)) {
      const l = this.view.get(ip)
      return l?.anonymous ? copyOf(l) : undefined
    }
    if (!this.anonymous.has(ip)) throw notLoaded(`the anonymous lock of IP ${JSON.stringify(ip)}`)
    const l = this.anonymous.get(ip)
    this.anonymous.delete(ip)
    return l
  }

  saveLock(lock: Lock): void {
    this.write(lock.lock_key, lock)
  }

  deleteLock(key: string): void {
    this.write(key, null)
  }

  userCountry(userId: string): string | undefined {
    if (!this.countries.has(userId)) throw notLoaded(`the stored country of user ${JSON.stringify(userId)}`)
    return this.countries.get(userId)
  }

  saveUserCountry(userId: string, country: string, at: string): void {
    if (this.readOnly) throw readOnlyError()
    this.countries.set(userId, country)
    this.countryWrites.push({at, country, userId})
  }

  /** Write what the chunk changed: deleted locks, saved locks, user countries (in that order). */
  /** Whether the chunk has writes for flush(): a locked user's answer has none (no promise to wait for). */
  get dirty(): boolean {
    return this.pendingKeys.length > 0 || this.countryWrites.length > 0 || this.exposures.length > 0 || this.adoptions.length > 0
  }

  async flush(): Promise<void> {
    if (this.pendingKeys.length > 0) {
      const keys = this.pendingKeys
      const writes = this.pending
      const deleted: string[] = []
      // Mostly saves only: then the pending array itself.
      let saved = writes as Lock[]
      if (writes.includes(null)) {
        saved = []
        for (let i = 0; i < writes.length; i++) {
          const lock = writes[i]
          if (lock === null) deleted.push(keys[i])
          else saved.push(lock)
        }
      }
      if (deleted.length > 0) await this.repo.deleteLocks(deleted)
      if (saved.length > 0) await this.repo.saveQuotes(saved)
      // Written: no longer pending (writes that failed stay pending, as before).
      this.pendingKeys = []
      this.pending = []
    }
    if (this.countryWrites.length > 0) {
      await this.repo.saveUserCountries(this.countryWrites)
      this.countryWrites = []
    }
    if (this.exposures.length > 0 || this.adoptions.length > 0) await this.writeExposures()
  }

  /**
   * The exposures, then the adoptions, one call each. A visitor is in both only when a
   * request names a key another one named (a visitor adopted, then exposed anew): with such
   * names (`view`) they are written in the order they came.
   */
  private async writeExposures(): Promise<void> {
    const {adoptedAfter, adoptions, exposures} = this
    // The changes were worked out when recorded (recordExposure); the store makes the same.
    let from = 0
    for (let j = 0; j < adoptions.length; ) {
      const upto = this.view === undefined ? exposures.length : adoptedAfter[j]
      let k = j + 1
      while (k < adoptions.length && (this.view === undefined || adoptedAfter[k] === upto)) k++
      if (upto > from) await this.experiments.recordExposures(exposures.slice(from, upto))
      await this.experiments.adoptExposures(k - j === adoptions.length ? adoptions : adoptions.slice(j, k))
      from = upto
      j = k
    }
    if (from < exposures.length) await this.experiments.recordExposures(from === 0 ? exposures : exposures.slice(from))
    this.exposures = []
    this.adoptions = []
    this.adoptedAfter = []
  }

  /** End the chunk, dropping what was loaded and what was not written. */
  close(): void {
    this.open = false
    // Only what holds something: clear() gives a map a new table even when it is empty, and
    // a served locked user (a chunk of one that read one lock) leaves them all empty.
    if (this.locks.size > 0) this.locks.clear()
    if (this.anonymous.size > 0) this.anonymous.clear()
    if (this.countries.size > 0) this.countries.clear()
    this.view = undefined
    if (this.pendingKeys.length > 0) {
      this.pendingKeys = []
      this.pending = []
    }
    if (this.countryWrites.length > 0) this.countryWrites = []
    if (this.printed.size > 0) this.printed.clear()
    if (this.exposures.length > 0) this.exposures = []
    if (this.adoptions.length > 0) {
      this.adoptions = []
      this.adoptedAfter = []
    }
    if (this.arms.size > 0) this.arms.clear()
  }

  private write(key: string, lock: Lock | null): void {
    if (this.readOnly) throw readOnlyError()
    if (lock === null && this.locks.get(key) === PENDING) {
      // The store takes writes in order and the flush deletes first: a delete drops the key's earlier saves.
      for (let i = this.pendingKeys.length - 1; i >= 0; i--) {
        if (this.pendingKeys[i] === key && this.pending[i] !== null) {
          this.pendingKeys.splice(i, 1)
          this.pending.splice(i, 1)
        }
      }
    }
    this.pendingKeys.push(key)
    this.pending.push(lock)
    this.locks.set(key, PENDING)
    this.printed.delete(key)
    const view = this.view
    if (view !== undefined && view.has(key)) {
      // What the store will hold: an existing key keeps its created_at (PricingRepository.saveQuotes).
      const was = view.get(key)
      view.set(key, lock === null ? undefined : {...copyOf(lock)!, created_at: was?.created_at ?? lock.created_at})
    }
  }
}

/** A lock the caller may change without changing the chunk's. */
function copyOf(lock: Lock | undefined): Lock | undefined {
  return lock === undefined ? undefined : structuredClone(lock)
}
