import {Flags} from '@oclif/core'

/**
 * The flags every list command shares, for its table and its CSV (--json keeps the spec's
 * shape). Columns are named by their headers, as the table shows them.
 */
export const listFlags = {
  columns: Flags.string({description: 'Only these columns, in this order: headers separated by commas', helpGroup: 'LIST'}),
  header: Flags.boolean({allowNo: true, default: true, description: 'Print the header row (--no-header: rows only)', helpGroup: 'LIST'}),
  sort: Flags.string({description: 'Sort the rows by this column (its header); a leading - sorts descending', helpGroup: 'LIST'}),
}

export type ListOptions = {columns?: string[]; header: boolean; sort?: {column: string; descending: boolean}}

/**
 * The options of the running list command. Set by the base command after parsing (and
 * cleared after the command), read by the table and CSV printers: a list command then
 * needs nothing but `...listFlags` in its flags.
 */
let current: ListOptions | undefined

export function listOptions(): ListOptions | undefined {
  return current
}

export function setListOptions(flags: Record<string, unknown> | undefined): void {
  if (!flags || !('header' in flags)) {
    current = undefined
    return
  }
  const columns = typeof flags.columns === 'string' ? flags.columns.split(',').map((c) => c.trim()).filter(Boolean) : undefined
  const sort = typeof flags.sort === 'string' && flags.sort.trim() ? flags.sort.trim() : undefined
  current = {
    columns,
    header: flags.header !== false,
    sort: sort ? {column: sort.replace(/^-/, ''), descending: sort.startsWith('-')} : undefined,
  }
}
