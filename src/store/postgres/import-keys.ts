/**
 * The keys (user_id, origin, origin_id) an import wrote, as 52-bit hashes in an open-addressing
 * table kept at most half full: 16 to 32 bytes per key (16 MB for 1,000,000 keys, 64 MB at
 * the limit), not a string per key. `add` may
 * answer "not new" for a key never added (two keys with the same hash: about one in 10^9
 * passes of 2,000 rows at 1,000,000 keys), never "new" for one added before: the import writer only uses a true
 * to take its slower, exact path (src/store/postgres/imports.ts). Past `limit` keys it stops
 * growing and says so (`full`): the writer then checks every key with the server instead.
 */
export class ImportKeys {
  private slots = new Float64Array(1 << 16)
  private size = 0
  full = false

  constructor(private readonly limit = 4_000_000) {}

  /**
   * Add the key; whether it is new: false when it may have been added before (its hash was),
   * and always once full.
   */
  add(user: string, origin: string, id: string): boolean {
    return this.addHash(keyHash(user, origin, id))
  }

  /** add() of a key by its keyHash (computed where the row was read). */
  addHash(h: number): boolean {
    if (this.full) return false
    if (this.size >= this.limit) {
      this.full = true
      this.slots = new Float64Array(1)
      return false
    }
    if (2 * (this.size + 1) > this.slots.length) this.grow()
    if (!this.put(this.slots, h)) return false
    this.size++
    return true
  }

  private put(slots: Float64Array, h: number): boolean {
    const mask = slots.length - 1
    // The hash's low 32 bits pick the slot (integer operations: `h % length` is a float remainder).
    for (let i = (h >>> 0) & mask; ; i = (i + 1) & mask) {
      const s = slots[i]
      if (s === h) return false
      if (s === 0) {
        slots[i] = h
        return true
      }
    }
  }

  private grow(): void {
    const {slots} = this
    const next = new Float64Array(slots.length * 2)
    for (let i = 0; i < slots.length; i++) if (slots[i] !== 0) this.put(next, slots[i])
    this.slots = next
  }
}

// The two hashes being computed (module state: no allocation per key).
let ha = 0
let hb = 0

/** Mix a part of the key into ha and hb, then a separator, so ("ab", "c") and ("a", "bc") differ. */
function mix(s: string): void {
  let a = ha
  let b = hb
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15)
  }
  ha = Math.imul(a ^ 0xffff, 0x01000193)
  hb = Math.imul(b ^ 0xffff, 0x5bd1e995) ^ (b >>> 15)
}

/** MurmurHash3's finalizer: every bit of the result depends on every bit of h (FNV's low bits do not). */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return h ^ (h >>> 16)
}

/** A hash of the key in [1, 2^52): two 32-bit FNV-1a variants of its code units, finalized and combined exactly in a double. */
export function keyHash(user: string, origin: string, id: string): number {
  ha = 0x811c9dc5
  hb = 0x9747b28c
  mix(user)
  mix(origin)
  mix(id)
  const a = ha
  const b = hb
  const h = (fmix(a) >>> 0) * 0x100000 + ((fmix(b) >>> 0) & 0xfffff)
  return h === 0 ? 1 : h
}
