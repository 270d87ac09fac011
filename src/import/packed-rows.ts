/**
 * The import worker's rows as they cross to the writing thread: packed by cell kind into a
 * few flat arrays and strings, not one array per row (docs/performance.md, "Posted
 * rows"). Structured cloning walks every object and string it is given: 2,000 rows of
 * 15 cells were 2,000 arrays and ~30,000 values to write in the reading thread and to
 * allocate again in the writing one. Packed, the numbers are one Float64Array, the strings
 * of a few values (origin, status, currency, country, interval) codes into a dictionary that
 * grows with the import (each string crosses once), and every other string is part of one
 * of a few joined texts that the writing thread slices back. Values are unchanged: the
 * writer binds what the mapper made.
 */

/** One cell's kind, in row order. */
const NULL = 0
const NUMBER = 1
const TEXT = 2
const CODE = 3
const UNDEFINED = 4
const OTHER = 5

/**
 * Characters of one joined text at most (before the string that crosses it): a string of
 * more than 128 KB (64K two-byte characters) is allocated in V8's large-object space, which
 * only a full collection frees (docs/performance.md, "Import"). A longer cell is a text of its own.
 */
const TEXT_CHARS = 48 * 1024

/** Codes of the dictionary fit in 16 bits; later new strings go as text. */
const MAX_CODES = 0xffff

/** Columns whose values repeat: coded through the dictionary. */
const CODED_COLUMNS: ReadonlySet<string> = new Set(['country', 'currency', 'interval', 'origin', 'status'])

/** Rows as they cross the thread boundary (RowPacker.take, unpackRows). */
export type PackedRows = {
  /** Strings the dictionary gained with this message, in code order. */
  added: string[]
  codes: Uint16Array
  count: number
  /** Lengths of the TEXT cells, in order: each is the next slice of the texts. */
  lengths: Uint32Array
  /** Cells of no other kind (never made by the mappers; cloned as they are). */
  others: unknown[]
  nums: Float64Array
  tags: Uint8Array
  texts: string[]
  width: number
}

/** Packs rows of `columns` (a *_COLUMNS list) in the reading thread; one per worker (its dictionary spans the import). */
export class RowPacker {
  private readonly coded: boolean[]
  private readonly dictionary = new Map<string, number>()
  private added: string[] = []
  private tags: Uint8Array
  private nums: Float64Array
  private codes: Uint16Array
  private lengths: Uint32Array
  private nTags = 0
  private nNums = 0
  private nCodes = 0
  private nLengths = 0
  private parts: string[] = []
  private partChars = 0
  private texts: string[] = []
  private others: unknown[] = []
  private count = 0
  readonly width: number

  constructor(columns: readonly string[], rowsHint: number) {
    this.width = columns.length
    this.coded = columns.map((c) => CODED_COLUMNS.has(c))
    const cells = Math.max(1, rowsHint) * this.width
    this.tags = new Uint8Array(cells)
    this.nums = new Float64Array(cells)
    this.codes = new Uint16Array(cells)
    this.lengths = new Uint32Array(cells)
  }

  /** Rows packed since the last take(). */
  get rows(): number {
    return this.count
  }

  add(row: readonly unknown[]): void {
    const {width, coded} = this
    if (this.nTags + width > this.tags.length) this.grow()
    for (let c = 0; c < width; c++) {
      const v = row[c]
      let tag: number
      if (typeof v === 'number') {
        this.nums[this.nNums++] = v
        tag = NUMBER
      } else if (typeof v === 'string') {
        tag = coded[c] ? this.code(v) : TEXT
        if (tag === TEXT) this.text(v)
      } else if (v === null) tag = NULL
      else if (v === undefined) tag = UNDEFINED
      else {
        this.others.push(v)
        tag = OTHER
      }
      this.tags[this.nTags++] = tag
    }
    this.count++
  }

  /** CODE with the string's code written, or TEXT when the dictionary is full. */
  private code(s: string): number {
    let code = this.dictionary.get(s)
    if (code === undefined) {
      if (this.dictionary.size >= MAX_CODES) return TEXT
      code = this.dictionary.size
      this.dictionary.set(s, code)
      this.added.push(s)
    }
    this.codes[this.nCodes++] = code
    return CODE
  }

  private text(s: string): void {
    this.lengths[this.nLengths++] = s.length
    if (this.partChars > 0 && this.partChars + s.length > TEXT_CHARS) this.closeText()
    this.parts.push(s)
    this.partChars += s.length
  }

  private closeText(): void {
    this.texts.push(this.parts.length === 1 ? this.parts[0] : this.parts.join(''))
    this.parts = []
    this.partChars = 0
  }

  private grow(): void {
    const size = this.tags.length * 2
    const grown = <T extends Float64Array | Uint8Array | Uint16Array | Uint32Array>(a: T, make: (n: number) => T): T => {
      const b = make(size)
      b.set(a)
      return b
    }
    this.tags = grown(this.tags, (n) => new Uint8Array(n))
    this.nums = grown(this.nums, (n) => new Float64Array(n))
    this.codes = grown(this.codes, (n) => new Uint16Array(n))
    this.lengths = grown(this.lengths, (n) => new Uint32Array(n))
  }

  /** The rows packed since the last take(), in exact-size copies (the buffers are reused). */
  take(): PackedRows {
    if (this.parts.length > 0) this.closeText()
    const packed: PackedRows = {
      added: this.added,
      codes: this.codes.slice(0, this.nCodes),
      count: this.count,
      lengths: this.lengths.slice(0, this.nLengths),
      nums: this.nums.slice(0, this.nNums),
      others: this.others,
      tags: this.tags.slice(0, this.nTags),
      texts: this.texts,
      width: this.width,
    }
    this.added = []
    this.others = []
    this.texts = []
    this.count = 0
    this.nTags = 0
    this.nNums = 0
    this.nCodes = 0
    this.nLengths = 0
    return packed
  }
}

/**
 * The rows of packed messages again, in the writing thread: one per pipeline, given its
 * messages in the order they were sent (the dictionary grows with them).
 */
export class RowUnpacker {
  private readonly dictionary: string[] = []

  unpack(p: PackedRows): unknown[][] {
    const {dictionary} = this
    for (let i = 0; i < p.added.length; i++) dictionary.push(p.added[i])
    const {codes, count, lengths, nums, others, tags, texts, width} = p
    const rows = new Array<unknown[]>(count)
    let k = 0
    let iNum = 0
    let iCode = 0
    let iLength = 0
    let iOther = 0
    let iText = 0
    let text = texts.length > 0 ? texts[0] : ''
    let at = 0
    for (let r = 0; r < count; r++) {
      const row = new Array<unknown>(width)
      for (let c = 0; c < width; c++) {
        const tag = tags[k++]
        if (tag === NUMBER) row[c] = nums[iNum++]
        else if (tag === TEXT) {
          const n = lengths[iLength++]
          // A string never spans two texts: one that does not fit here begins the next.
          while (at + n > text.length) {
            text = texts[++iText]
            at = 0
          }
          row[c] = n === text.length ? text : text.slice(at, at + n)
          at += n
        } else if (tag === CODE) row[c] = dictionary[codes[iCode++]]
        else if (tag === NULL) row[c] = null
        else if (tag === UNDEFINED) row[c] = undefined
        else row[c] = others[iOther++]
      }
      rows[r] = row
    }
    return rows
  }
}
