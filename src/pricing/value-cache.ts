/**
 * A cache of a few values per first key (a country), found by comparing the other parts of
 * the key one by one instead of building a key string: a batch asks it twice per product
 * per request, and the string, its flattening and hashing cost more than the lookup
 * (docs/performance.md "Batch pricing"). When a first key holds `perKey` entries, `set`
 * says no and the caller keeps using its string-keyed cache.
 */
export class ValueCache<V> {
  private byFirst = new Map<string, Entry<V>[]>()

  constructor(
    private readonly perKey = 64,
    private readonly firstKeys = 1024,
  ) {}

  /** The value stored under `first` with these parts and this list (element by element). */
  get(first: string, parts: readonly unknown[], list: readonly string[] | undefined): undefined | V {
    const entries = this.byFirst.get(first)
    if (entries === undefined) return undefined
    next: for (let e = 0; e < entries.length; e++) {
      const entry = entries[e]
      const stored = entry.parts
      if (stored.length !== parts.length) continue
      for (let i = 0; i < parts.length; i++) if (stored[i] !== parts[i]) continue next
      if (!sameList(entry.list, list)) continue
      return entry.value
    }
    return undefined
  }

  /** Remember a value; false when there is no room (the caller caches it by key string). */
  set(first: string, parts: readonly unknown[], list: readonly string[] | undefined, value: V): boolean {
    let entries = this.byFirst.get(first)
    if (entries === undefined) {
      if (this.byFirst.size >= this.firstKeys) return false
      entries = []
      this.byFirst.set(first, entries)
    }
    if (entries.length >= this.perKey) return false
    entries.push({list: list === undefined ? undefined : [...list], parts: [...parts], value})
    return true
  }
}

type Entry<V> = {list: readonly string[] | undefined; parts: readonly unknown[]; value: V}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
