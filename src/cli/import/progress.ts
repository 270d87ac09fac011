import {holdTerminal} from '../interrupt.js'

/**
 * Import progress on stderr: a bar (rows, rows/s) on a terminal, a plain line every few
 * seconds otherwise (CI logs), nothing under --json.
 */
export type Progress = {stop(): void; update(rows: number, bytes: number): void}

export type ProgressOptions = {
  label: string
  /** Silent (under --json). */
  quiet: boolean
  totalBytes: number
}

const NONE: Progress = {stop() {}, update() {}}

function rate(rows: number, started: number): number {
  const s = (Date.now() - started) / 1000
  return s > 0 ? Math.round(rows / s) : 0
}

export async function startProgress(o: ProgressOptions): Promise<Progress> {
  if (o.quiet) return NONE
  const started = Date.now()
  if (process.stderr.isTTY && !process.env.CI) {
    const {default: cliProgress} = await import('cli-progress')
    const bar = new cliProgress.SingleBar(
      {
        clearOnComplete: false,
        format: `${o.label} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | {eta_formatted}`,
        hideCursor: true,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    )
    // The bar hides the cursor and turns line wrap off: held until stop(), restored however the process ends.
    const release = holdTerminal(process.stderr)
    bar.start(Math.max(1, o.totalBytes), 0, {rate: 0, rows: 0})
    return {
      stop() {
        try {
          bar.stop()
        } finally {
          release()
        }
      },
      update: (rows, bytes) => bar.update(Math.min(bytes, o.totalBytes), {rate: rate(rows, started), rows}),
    }
  }
  const every = Number(process.env.PRICECTL_PROGRESS_INTERVAL_MS ?? 5000)
  let last = started
  return {
    stop() {},
    update(rows, bytes) {
      const now = Date.now()
      if (now - last < every) return
      last = now
      const pct = o.totalBytes > 0 ? Math.floor((bytes / o.totalBytes) * 100) : 100
      process.stderr.write(`${o.label}: ${rows} rows read (${pct}%, ${rate(rows, started)} rows/s)\n`)
    },
  }
}
