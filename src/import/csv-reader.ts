import {parse as parseStream} from 'csv-parse'
import {parse as parseSync} from 'csv-parse/sync'
import {StringDecoder} from 'node:string_decoder'

/**
 * CSV records of an export, streamed, exactly as csv-parse reads them, each with the
 * line (as an editor counts lines) on which it ends.
 *
 * csv-parse alone reads about 170,000 export rows (24 columns) a second here, more than
 * the import's whole time budget, so a line without any quote or stray CR takes a shorter
 * road: it cannot hold a quoted field or a line break inside a field, and splitting it on
 * commas yields exactly the record csv-parse yields (the options below trim nothing and
 * cast nothing).
 * Everything else goes through csv-parse: a line with quotes is parsed by csv-parse,
 * joined with the next lines while csv-parse finds a quoted field still open; and once
 * such lines are over 5% of the file so far (an exporter that quotes every field), a
 * quoted field runs over 1,000 lines, or no line break shows up within 1 MB, the rest of
 * the file is streamed through csv-parse. The record delimiter is the file's first line
 * break, as csv-parse detects it. A property test checks the result equals csv-parse's.
 */

export const CSV_OPTIONS = {
  bom: true,
  relax_column_count: true,
  relax_quotes: true,
  skip_empty_lines: true,
} as const

export type RecordSink = {
  /** A record and the line (1-based) on which it ends. */
  record(cells: string[], endLine: number): void
  /** A record csv-parse could not read. */
  unreadable(line: number, reason: string): void
}

type StreamApi = {
  info: {bytes: number; lines: number}
  parse(buf: Buffer | undefined, end: boolean, push: (r: string[]) => void, close: () => void): Error | undefined
}

const MAX_LINE = 1 << 20

export class CsvReader {
  private readonly decoder = new StringDecoder('utf8')
  private rest = ''
  private started = false
  /** The file's record delimiter, from its first line break. */
  private crlf: boolean | undefined
  /** Lines consumed so far. */
  private line = 0
  private quotedLines = 0
  /** Raw lines (CR kept) of a record csv-parse is reading, while a quoted field is open. */
  private chunk: string[] = []
  /** The chunk's last line ended with a line feed (not the end of the file). */
  private chunkTerminated = true
  private stream: StreamApi | undefined
  private streamOffset = 0
  /** Stream mode: byte offsets of the line feeds fed and not yet passed by a record. */
  private feeds: number[] = []
  private feedAt = 0
  private fedBytes = 0
  private passedFeeds = 0

  /**
   * `crlf`: the file's record delimiter, for a reader that starts at a record in the middle of
   * the file (a chunk, pipeline.ts): it is the file's, from its first line break, not the
   * chunk's, and no byte order mark is looked for.
   */
  constructor(
    private readonly sink: RecordSink,
    options: {crlf?: boolean} = {},
  ) {
    if (options.crlf !== undefined) {
      this.crlf = options.crlf
      this.started = true
    }
  }

  /** Lines consumed so far (line feeds fed, and a last line without one once ended). */
  get lines(): number {
    return this.line
  }

  /**
   * Whether what was fed, ending with a line feed, ends exactly at the end of a record, as
   * read on the short road: no line left unfinished and no quoted field open. A reader in
   * csv-parse's stream cannot tell, and says no.
   */
  atRecordBoundary(): boolean {
    return this.stream === undefined && this.crlf !== undefined && this.rest === '' && this.chunk.length === 0
  }

  /**
   * Whether text decoded since the last call held U+FFFD (what bytes that are not UTF-8
   * decode to): records of clean text need no per-cell check.
   */
  takeReplacementSeen(): boolean {
    const seen = this.replacementSeen
    this.replacementSeen = false
    return seen
  }

  private replacementSeen = false

  /** Whether text decoded since the last takeReplacementSeen() held U+FFFD, without resetting it. */
  get replacementPending(): boolean {
    return this.replacementSeen
  }

  /** Feed the next bytes of the file. */
  write(bytes: Buffer): void {
    let text = this.decoder.write(bytes)
    if (text.includes('\uFFFD')) this.replacementSeen = true
    if (!this.started) {
      if (text.length === 0) return
      this.started = true
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    if (this.stream) {
      this.feedStream(text, false)
      return
    }
    text = this.rest + text
    if (this.crlf === undefined && !this.detect(text)) {
      if (this.stream) this.feedStream(text, false)
      else this.rest = text
      return
    }
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      this.onLine(text.slice(start, nl))
      start = nl + 1
      if (this.stream) {
        this.feedStream(text.slice(start), false)
        this.rest = ''
        return
      }
    }
    this.rest = text.slice(start)
    // No line break for a long while (one huge line): csv-parse decides.
    if (this.rest.length > MAX_LINE) {
      this.startStream()
      this.feedStream(this.rest, false)
      this.rest = ''
    }
  }

  /**
   * The record delimiter, found as csv-parse finds it: the first line break outside
   * quotes. False while the start of the file holds no line break yet; a file whose first
   * line has quotes, or whose lines end in a lone CR, is left to csv-parse entirely.
   */
  private detect(text: string): boolean {
    const cr = text.indexOf('\r')
    const lf = text.indexOf('\n')
    const at = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf)
    if (at === -1 || (at === cr && at === text.length - 1)) {
      if (text.length > MAX_LINE) this.startStream()
      return false
    }
    // A quote before it: only a parser can tell whether the break is inside a field.
    if (text.lastIndexOf('"', at) !== -1 || (at === cr && text.charCodeAt(at + 1) !== 10)) {
      this.startStream()
      return false
    }
    this.crlf = at === cr
    return true
  }

  /** The file ended. */
  end(): void {
    let tail = this.decoder.end()
    if (tail.includes('\uFFFD')) this.replacementSeen = true
    if (!this.stream && this.crlf === undefined) {
      // A file without a line break (or whose start is left to csv-parse).
      const text = this.rest + tail
      this.rest = ''
      tail = ''
      if (/[\r"]/.test(text)) {
        this.startStream()
        this.feedStream(text, true)
        return
      }
      if (text !== '') this.onLine(text, false)
      return
    }
    if (!this.stream) {
      const last = this.rest + tail
      this.rest = ''
      if (last !== '') this.onLine(last, false)
      if (!this.stream) {
        if (this.chunk.length > 0) this.parseChunk(true)
        return
      }
    } else if (tail !== '') this.feedStream(tail, false)
    this.feedStream('', true)
  }

  private onLine(raw: string, terminated = true): void {
    this.line++
    this.chunkTerminated = terminated
    if (this.chunk.length > 0) {
      this.chunk.push(raw)
      if (this.chunk.length > 1000) this.startStream()
      else this.parseChunk(false)
      return
    }
    // A CR ending the file's last line (no line feed after it) is data, not a line end.
    const cr = terminated && raw.length > 0 && raw.charCodeAt(raw.length - 1) === 13
    // A line is a whole record when it ends with the file's delimiter.
    if (cr === Boolean(this.crlf)) {
      const line = cr ? raw.slice(0, -1) : raw
      if (line === '') return
      if (line.indexOf('"') === -1 && line.indexOf('\r') === -1) {
        this.sink.record(line.split(','), this.line)
        return
      }
    }
    this.chunk = [raw]
    this.parseChunk(false)
  }

  /** Parse the collected lines with csv-parse; an open quoted field waits for more lines. */
  private parseChunk(atEnd: boolean): void {
    const lastRaw = this.chunk.at(-1)!
    // With CRLF records, a line ending in a bare LF goes on in the next line.
    if (!atEnd && this.crlf && !lastRaw.endsWith('\r')) return
    const first = this.line - this.chunk.length + 1
    const text = this.chunk.join('\n') + (this.chunkTerminated ? '\n' : '')
    let open = false
    const skipped: [number, string][] = []
    const records = parseSync(text, {
      ...CSV_OPTIONS,
      bom: false,
      info: true,
      on_skip: (err: (Error & {code?: string; lines?: number}) | undefined) => {
        if (err?.code === 'CSV_QUOTE_NOT_CLOSED') open = true
        skipped.push([first - 1 + (err?.lines ?? 1), err?.message ?? 'unreadable record'])
        return undefined
      },
      record_delimiter: this.crlf ? '\r\n' : '\n',
      skip_records_with_error: true,
    }) as unknown as {info: {bytes: number}; record: string[]}[]
    if (open && !atEnd) return // a quoted field goes on in the next line
    const bytes = Buffer.from(text)
    this.quotedLines += this.chunk.length
    this.chunk = []
    let s = 0
    for (const r of records) {
      // Lines as an editor counts them (line feeds); csv-parse also counts a CR in a field.
      const endLine = first + feedsBefore(bytes, r.info.bytes)
      while (s < skipped.length && skipped[s][0] < endLine) this.sink.unreadable(...skipped[s++])
      this.sink.record(r.record, endLine)
    }
    while (s < skipped.length) this.sink.unreadable(...skipped[s++])
    if (this.quotedLines > 100 && this.quotedLines * 20 > this.line) this.startStream()
  }

  /** From here on (a record being collected included) everything goes through csv-parse's stream parser. */
  private startStream(): void {
    const pending = this.chunk
    this.chunk = []
    this.streamOffset = this.line - pending.length
    const parser = parseStream({
      ...CSV_OPTIONS,
      bom: false,
      on_skip: (err: (Error & {lines?: number}) | undefined) => {
        this.sink.unreadable(this.streamOffset + (err?.lines ?? this.stream!.info.lines), err?.message ?? 'unreadable record')
        return undefined
      },
      ...(this.crlf === undefined ? {} : {record_delimiter: this.crlf ? '\r\n' : '\n'}),
      skip_records_with_error: true,
    })
    this.stream = (parser as unknown as {api: StreamApi}).api
    if (pending.length > 0) this.feedStream(pending.join('\n') + '\n', false)
  }

  private feedStream(text: string, end: boolean): void {
    const api = this.stream!
    const push = (r: string[]) => {
      // The record ends at byte info.bytes (its own line feed excluded): count the feeds before.
      const limit = api.info.bytes - 1
      while (this.feedAt < this.feeds.length && this.feeds[this.feedAt] < limit) {
        this.feedAt++
        this.passedFeeds++
      }
      if (this.feedAt > 10_000) {
        this.feeds = this.feeds.slice(this.feedAt)
        this.feedAt = 0
      }
      this.sink.record(r, this.streamOffset + 1 + this.passedFeeds)
    }
    if (text.length > 0) {
      const buf = Buffer.from(text)
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) this.feeds.push(this.fedBytes + i)
      this.fedBytes += buf.length
      const err = api.parse(buf, false, push, () => {})
      if (err) throw err
    }
    if (end) {
      const err = api.parse(undefined, true, push, () => {})
      if (err) throw err
    }
  }
}

/** Line feeds in bytes[0, end), not counting a last byte that ends the record. */
function feedsBefore(bytes: Buffer, end: number): number {
  const limit = end > 0 && bytes[end - 1] === 10 ? end - 1 : end
  let n = 0
  for (let i = bytes.indexOf(10); i !== -1 && i < limit; i = bytes.indexOf(10, i + 1)) n++
  return n
}
