import {maskApiKeys} from '../secrets.js'

/**
 * Access log: one line per response on stderr,
 *   2026-01-31T12:00:00.000Z 127.0.0.1 "POST /v1/prices" 200 812 1.4ms pk_AbC12xyz
 * (time, client address, method and path, status, body bytes, time in the server, key
 * prefix or "-"; an `api_key` query parameter or a full key in the path is masked,
 * src/secrets.ts). Lines are gathered and written once per event-loop turn, so a busy
 * server makes one write for many requests instead of one each.
 */
export class AccessLog {
  private lines: string[] = []
  private scheduled = false

  constructor(private readonly write: (text: string) => void = (t) => process.stderr.write(t)) {}

  line(fields: {bytes?: number | string; durationMs: number; ip: string; key?: string; method: string; status: number; url: string}): void {
    this.lines.push(`${isoNow()} ${clean(fields.ip) || '-'} "${fields.method} ${clean(maskApiKeys(fields.url))}" ${fields.status} ${fields.bytes ?? '-'} ${fields.durationMs.toFixed(1)}ms ${fields.key ?? '-'}\n`)
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flushSoon)
    }
  }

  private readonly flushSoon = () => this.flush()

  /** Also a plain message (start, stop), in order with the request lines. */
  note(message: string): void {
    this.flush()
    this.write(`${new Date().toISOString()} ${message}\n`)
  }

  flush(): void {
    this.scheduled = false
    if (this.lines.length === 0) return
    const text = this.lines.join('')
    this.lines = []
    this.write(text)
  }
}

let lastMs = -1
let lastIso = ''

/** The time of a line: the same text for every line of one millisecond (a busy server writes several). */
function isoNow(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}

/** Request-controlled text (path; the address under --trust-proxy) cannot add fields or lines. */
const UNSAFE = /[\u0000-\u0020"\\\u007f]/
const UNSAFE_ALL = /[\u0000-\u0020"\\\u007f]/g

function clean(text: string): string {
  // Most paths and addresses have nothing to escape: one test, no copy.
  return UNSAFE.test(text) ? text.replaceAll(UNSAFE_ALL, (c) => encodeURIComponent(c)) : text
}
