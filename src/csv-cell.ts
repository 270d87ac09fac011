/** A value as the text of a table or CSV cell: nothing for null, JSON for objects. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/**
 * Neutralise spreadsheet formulas: a cell starting with = + - @ tab or CR gets a leading
 * quote, unless it is a plain number (negative amounts stay numbers).
 */
export function safeCell(v: unknown): string {
  const s = cellText(v)
  if (/^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s)) return `'${s}`
  return s
}
