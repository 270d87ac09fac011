import {Args, Flags} from '@oclif/core'
import {isAbsolute, relative} from 'node:path'

import {recordTable, table} from '../render.js'
import {minorToDecimalString} from '../../currency.js'
import {OperationalError} from '../../errors.js'
import type {Store} from '../../store/db.js'
import {type ImportFileResult, importFiles, type ImportResult, MAX_DEFAULT_JOBS, MAX_JOBS, totalBytes} from '../../import/importer.js'
import {type ImportKind, PRESET_NAMES} from '../../import/presets.js'
import {interruptible} from '../interrupt.js'
import {startProgress} from './progress.js'

/** Arguments and flags of `subscriptions import` and `charges import`, and their run. */

export const importArgs = {
  file: Args.string({description: 'CSV exports to import, or folders of them (every *.csv in each, by name)', multiple: true, required: true}),
}

export const importFlags = {
  'batch-size': Flags.integer({description: 'Rows per transaction, each committed (default $PRICECTL_IMPORT_BATCH, else 250000 on SQLite and 100000 on PostgreSQL, where a first load may hold batches back)', min: 1}),
  'dry-run': Flags.boolean({description: 'Validate and count what would change; write nothing'}),
  jobs: Flags.integer({description: `Reading threads at once: files read and validated at once, a large file read by two threads on PostgreSQL counting as two (default: the cores, at most ${MAX_DEFAULT_JOBS})`, max: MAX_JOBS, min: 1}),
  force: Flags.boolean({description: 'Overwrite the --rejects path when it exists and is not a rejects CSV of an earlier import'}),
  mapping: Flags.string({description: 'JSON file describing another layout (see docs/revenue.md)'}),
  preset: Flags.string({description: 'Force a preset instead of detecting it from the header', options: PRESET_NAMES}),
  product: Flags.string({description: 'Product api_id for rows that name no product'}),
  rejects: Flags.string({description: 'Where to write rejected rows (default: FILE.rejects.csv; for a folder FOLDER/KIND.rejects.csv; for several files KIND.rejects.csv beside the first; never the store or an input)'}),
  tz: Flags.string({description: 'IANA time zone (such as Europe/Berlin) of dates in the file without an offset (default UTC, or the mapping\'s time_zone)'}),
  'user-id': Flags.string({description: 'User id for rows that carry none (such as the connected account\'s id, for an export without a customer column)'}),
  'user-id-column': Flags.string({description: 'Column holding the user id, instead of the layout\'s (such as "Customer ID" or a metadata column)'}),
}

export type ImportFlags = {
  'batch-size'?: number
  'dry-run'?: boolean
  force?: boolean
  jobs?: number
  mapping?: string
  preset?: string
  product?: string
  rejects?: string
  tz?: string
  'user-id'?: string
  'user-id-column'?: string
}

/**
 * Run an import with progress on stderr; rejected rows make it fail (exit 1) after the
 * summary. Ctrl-C or SIGTERM stops it between two batches (exit 130 or 143, "interrupted: N
 * rows committed; ..."), with the terminal restored and no temporary file left.
 */
export async function runImportCommand(
  store: Store,
  kind: ImportKind,
  files: string[],
  flags: ImportFlags,
  io: {json: boolean; log: (s: string) => void},
): Promise<ImportResult & {message: string; success: true}> {
  const bytes = totalBytes(files)
  const result = await interruptible(async (signal) => {
    const progress = await startProgress({label: `${kind} import`, quiet: io.json, totalBytes: bytes})
    try {
      return await importFiles(
        store,
        {
          batchSize: flags['batch-size'],
          dryRun: flags['dry-run'],
          force: flags.force,
          jobs: flags.jobs,
          kind,
          mapping: flags.mapping,
          paths: files,
          preset: flags.preset,
          product: flags.product,
          rejects: flags.rejects,
          tz: flags.tz,
          userId: flags['user-id'],
          userIdColumn: flags['user-id-column'],
        },
        {progress: (rows, read) => progress.update(rows, read), signal},
      )
    } finally {
      progress.stop()
    }
  })
  const r = result
  const several = r.files.length > 1
  const what = r.dry_run ? 'dry run (nothing written)' : 'imported'
  const message = `${kind} ${what}${several ? ` from ${r.files.length} files` : ''}: ${r.read} read, ${r.inserted} inserted, ${r.updated} updated, ${r.unchanged} unchanged, ${r.stale} stale, ${r.rejected} rejected (${r.preset}, ${r.rows_per_second} rows/s)`
  io.log(
    recordTable([
      [several ? 'files' : 'file', several ? r.files.length : r.file],
      ['preset', r.preset],
      ['read', r.read],
      ['inserted', r.inserted],
      ['updated', r.updated],
      ['unchanged', r.unchanged],
      ['stale', r.stale],
      ['rejected', r.rejected],
      ...Object.entries(r.rejected_by_reason).map(([reason, n]): [string, number] => [`  ${reason}`, n]),
      ...(r.settled_usd.rows > 0 ? [['settled in USD', settledText(r)] as [string, string]] : []),
      ['seconds', r.seconds],
      ['rows/s', r.rows_per_second],
    ]),
  )
  if (several) io.log(table(r.files, FILE_COLUMNS))
  if (r.rejected > 0) {
    throw new OperationalError(
      `${r.rejected} of ${r.read} rows rejected; see ${r.rejects_file} (${several ? 'source file, line' : 'line'} and reason per row), fix them and run the import again${r.dry_run ? '' : ' (rows already imported are unchanged by a re-run)'}`,
      {...r},
    )
  }
  io.log(message)
  return {...r, message, success: true}
}

/** "812 rows, -12.34 USD against the store's FX": what the gateway settled, in exact USD. */
function settledText(r: ImportResult): string {
  const d = r.settled_usd.difference_usd_minor
  const sign = d > 0 ? '+' : d < 0 ? '-' : ''
  return `${r.settled_usd.rows} row${r.settled_usd.rows === 1 ? '' : 's'}, ${sign}${minorToDecimalString(Math.abs(d), 2)} USD against the store's FX`
}

/** The per-file table of an import of several files. */
const FILE_COLUMNS = (['file', 'preset', 'read', 'inserted', 'updated', 'unchanged', 'stale', 'rejected'] as const).map((k) => ({header: k, value: (f: ImportFileResult) => (k === 'file' ? shortPath(f.file) : f[k])}))

/** A path under the working folder relative to it, any other in full. */
function shortPath(path: string): string {
  const r = relative(process.cwd(), path)
  return r === '' || r.startsWith('..') || isAbsolute(r) ? path : r
}
