/**
 * Terminal charts for experiments (plain text, no colour, so they read the same piped
 * or in a CI log). Pure: strings in, strings out.
 */

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A bar of `fraction` (0..1) of `width` cells, with eighth-cell resolution. */
export function bar(fraction: number, width: number): string {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0
  const eighths = Math.round(f * width * 8)
  const full = Math.floor(eighths / 8)
  return '█'.repeat(full) + EIGHTHS[eighths % 8]
}

function padEnd(s: string, n: number): string {
  const len = [...s].length
  return len >= n ? s : s + ' '.repeat(n - len)
}

/** Horizontal bars: one row per label, scaled to the largest value (or `max`). */
export function barChart(rows: {label: string; text: string; value: number}[], options: {max?: number; maxLine?: number; title?: string; width?: number} = {}): string {
  const max = options.max ?? Math.max(0, ...rows.map((r) => r.value))
  const labelWidth = Math.max(0, ...rows.map((r) => [...r.label].length))
  const width = fitWidth(options.width ?? 30, options.maxLine, labelWidth, rows)
  const lines = rows.map((r) => `${padEnd(r.label, labelWidth)} │${padEnd(bar(max > 0 ? r.value / max : 0, width), width)}│ ${r.text}`)
  return [options.title, ...lines].filter((l) => l !== undefined).join('\n')
}

/**
 * Point estimates with intervals on one axis from 0: `├──●──┤` per row, so overlapping
 * intervals (no clear winner yet) are visible at a glance.
 */
export function intervalChart(rows: {hi: number; label: string; lo: number; point: number; text: string}[], options: {maxLine?: number; title?: string; width?: number} = {}): string {
  const max = Math.max(0, ...rows.map((r) => Math.max(r.hi, r.point)))
  const labelWidth = Math.max(0, ...rows.map((r) => [...r.label].length))
  const width = Math.max(fitWidth(options.width ?? 40, options.maxLine, labelWidth, rows), String(round3(max)).length + 2)
  const at = (x: number) => (max > 0 ? Math.min(width - 1, Math.max(0, Math.round((x / max) * (width - 1)))) : 0)
  const lines = rows.map((r) => {
    const cells = Array.from({length: width}, () => ' ')
    const lo = at(r.lo)
    const hi = at(r.hi)
    for (let i = lo; i <= hi; i++) cells[i] = '─'
    cells[lo] = '├'
    cells[hi] = '┤'
    cells[at(r.point)] = '●'
    return `${padEnd(r.label, labelWidth)} │${cells.join('')}│ ${r.text}`
  })
  const axis = `${' '.repeat(labelWidth)} 0${' '.repeat(Math.max(1, width - String(round3(max)).length))}${round3(max)}`
  return [options.title, ...lines, axis].filter((l) => l !== undefined).join('\n')
}

/**
 * The plot's width: `preferred`, narrowed so a whole line (label, " │", plot, "│ ", text)
 * fits `maxLine` columns, never below 8.
 */
function fitWidth(preferred: number, maxLine: number | undefined, labelWidth: number, rows: {text: string}[]): number {
  if (maxLine === undefined || !Number.isFinite(maxLine)) return preferred
  const text = Math.max(0, ...rows.map((r) => [...r.text].length))
  return Math.max(8, Math.min(preferred, maxLine - labelWidth - 4 - text))
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000
}

/**
 * Several series on one grid (x: visitors, y: value), each drawn with its own symbol;
 * where two meet, the later series in the list shows.
 */
export function lineChart(series: {name: string; points: {x: number; y: number}[]; symbol: string}[], options: {height?: number; title?: string; width?: number; xLabel?: string; yLabel?: string} = {}): string {
  const width = options.width ?? 60
  const height = options.height ?? 12
  const all = series.flatMap((s) => s.points)
  if (all.length === 0) return options.title ?? ''
  const xMax = Math.max(...all.map((p) => p.x))
  const xMin = Math.min(...all.map((p) => p.x))
  // The y range is the data's: differences between policies are what the chart is for.
  const yMax = Math.max(...all.map((p) => p.y))
  const yMin = Math.min(...all.map((p) => p.y))
  const grid = Array.from({length: height}, () => Array.from({length: width}, () => ' '))
  for (const s of series) {
    const points = [...s.points].sort((a, b) => a.x - b.x)
    if (points.length === 0) continue
    // Every column shows the series' latest point at or before its x: a continuous line.
    let k = 0
    for (let col = 0; col < width; col++) {
      const x = xMax === xMin ? xMax : xMin + (col / (width - 1)) * (xMax - xMin)
      while (k + 1 < points.length && points[k + 1].x <= x) k++
      const y = points[k].y
      const row = yMax === yMin ? height - 1 : height - 1 - Math.round(((y - yMin) / (yMax - yMin)) * (height - 1))
      grid[row][col] = s.symbol
    }
  }
  const top = String(round3(yMax))
  const bottom = String(round3(yMin))
  const gutter = Math.max(top.length, bottom.length)
  const lines = grid.map((cells, i) => `${(i === 0 ? top : i === height - 1 ? bottom : '').padStart(gutter)} │${cells.join('')}`)
  lines.push(`${' '.repeat(gutter)} └${'─'.repeat(width)}`)
  const xText = `${xMin}${' '.repeat(Math.max(1, width - String(xMin).length - String(xMax).length))}${xMax}`
  lines.push(`${' '.repeat(gutter)}  ${xText}${options.xLabel ? ` ${options.xLabel}` : ''}`)
  const legend = series.map((s) => `${s.symbol} ${s.name}`).join('   ')
  return [options.title, ...(options.yLabel ? [options.yLabel] : []), ...lines, legend].filter((l) => l !== undefined).join('\n')
}
