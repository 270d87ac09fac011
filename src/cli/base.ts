import {Command, Errors, Flags, Interfaces, toConfiguredId, ux} from '@oclif/core'
import {statSync} from 'node:fs'
import {dirname} from 'node:path'
import type {ZodType} from 'zod'

import {describeError as describeAnyError, oneLine} from '../error-format.js'
import {InvalidInputError, OperationalError, PricectlError} from '../errors.js'
import {commandContext} from '../history/context.js'
import {isMissingStore, isPostgresUrl, loadPostgresAdapter, type OpenOptions, openStore, resolveStorePath, type Store} from '../store/db.js'
import type {ImpactScope, PriceImpact} from '../pricing/impact.js'
import type {ImpactFlagValues} from './impact-flags.js'
import type {ImpactOptions} from './impact.js'
import {chooseStore, configFilePath, describeSource, type StoreChoice, type StoreSource} from './config-file.js'
import {setListOptions} from './list-options.js'
import {nearest} from './nearest.js'
import {isInteractive} from './tty.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/**
 * The store flags. Their variables (PRICECTL_DB, PRICECTL_PROFILE) are read by chooseStore
 * (src/cli/config-file.ts), not by oclif: --profile comes before PRICECTL_DB, which oclif's
 * `env` (a variable standing in for its own flag) cannot say.
 */
const dbFlag = Flags.string({
  description: 'Path of the SQLite store, or a postgres:// URL (default: --profile, $PRICECTL_DB, $PRICECTL_PROFILE, the config file\'s db, else $XDG_DATA_HOME/pricectl/pricectl.db)',
  helpGroup: 'GLOBAL',
})
const profileFlag = Flags.string({
  description: 'A named store of the config file (default: $PRICECTL_PROFILE; see "pricectl config set --help")',
  helpGroup: 'GLOBAL',
})

/** The base flags of a command that opens no store: accepted (as by every command) but not shown. */
export const noStoreFlags = {db: {...dbFlag, hidden: true}, profile: {...profileFlag, hidden: true}}

/**
 * The one base command: global `--db` and `--profile`, `--json`, lazy store, and the mapping of every
 * error to an exit code (2 invalid input, 1 operational) and one JSON error shape.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = {db: dbFlag, profile: profileFlag}
  /**
   * Commands that open no store (help, version, config) set this false: they never read the
   * config file for a store, and take --db and --profile without showing them (noStoreFlags).
   */
  static usesStore = true
  static override enableJsonFlag = true
  /**
   * zod schema of what `--json` prints; kept as JSON Schema under schemas/ and compared in
   * tests. A getter: oclif copies a command's enumerable statics into its manifest, which
   * every start parses, and a zod schema there is a few kilobytes of noise per command.
   */
  static get outputSchema(): undefined | ZodType {
    return undefined
  }

  /**
   * The command only reads the store: a named store (--db, --profile, their variables, the
   * config file's db) that does not exist is refused (exit 1) instead of made, so a typo never
   * makes an empty store that reads as "nothing yet". Commands that write make a missing store,
   * with a note on stderr (checkMissingStore below).
   */
  static readsOnly = false

  /**
   * The command changes or removes what must already be there (an update, a delete, a
   * revert, an experiment's start or stop): a missing named store is refused as for
   * readsOnly, instead of made empty only to answer "not found".
   */
  static changesExisting = false

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>
  private choice?: StoreChoice
  private choiceError: unknown
  private _store?: Store
  /** Every store this run opened (kept after closing), so an error can say which one was read-only. */
  private opened: Store[] = []

  public override async init(): Promise<void> {
    await super.init()
    const {args, flags} = await this.parse({
      args: this.ctor.args,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      flags: this.ctor.flags,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
    // A list command's --columns / --sort / --no-header, for the table and CSV printers.
    setListOptions(this.ctor.flags && 'header' in this.ctor.flags ? (flags as Record<string, unknown>) : undefined)
    if (!(this.ctor as typeof BaseCommand).usesStore) return
    // Which store: chosen now (the config file is read unless --db or PRICECTL_DB names it); an
    // error (an unknown profile, a bad file) is reported when the store is needed, so a command
    // that never opens it is not stopped by it.
    try {
      this.choice = await chooseStore({db: this.flags.db, profile: this.flags.profile}, () => configFilePath(this.config))
    } catch (error) {
      this.choiceError = error
      return
    }
    // A SQLite store's command loads no PostgreSQL code (the price bundle; src/store/db.ts loadPostgresAdapter).
    if (isPostgresUrl(locationOf(this.choice.spec))) await loadPostgresAdapter()
  }

  /** The store this run names and where it was named (--db, --profile, a variable, the config file, the default). */
  protected get storeChoice(): StoreChoice {
    if (this.choiceError !== undefined) throw this.choiceError
    if (!this.choice) throw new Error(`${this.id}: the store was not chosen (usesStore is false)`)
    return this.choice
  }

  /** Where the store is: a SQLite file's absolute path or a postgres:// URL, without opening it. */
  protected get storeLocation(): string {
    return resolveStorePath(this.storeChoice.spec)
  }

  /** The store, opened (and migrated) on first use so commands that need none stay fast. */
  protected async store(): Promise<Store> {
    this._store ??= await this.openStore()
    return this._store
  }

  /**
   * The store this run names (storeChoice), checked against the command line's rule for a
   * store that does not exist yet (checkMissingStore); undefined for the default store.
   */
  protected storeSpec(options: {init?: boolean} = {}): string | undefined {
    const {source, spec} = this.storeChoice
    if (spec) checkMissingStore(resolveStorePath(spec), source, {init: options.init, refuse: (this.ctor as typeof BaseCommand).readsOnly || (this.ctor as typeof BaseCommand).changesExisting})
    return spec
  }

  /**
   * Open the store this run names with options (`db info` opens without migrating; `init`: `db init`
   * makes a missing store, folders included); the caller closes it.
   */
  protected async openStore(options: OpenOptions & {init?: boolean} = {}): Promise<Store> {
    const {init, ...open} = options
    const store = openStore(this.storeSpec({init}), {onCreate: (path) => this.note(`pricectl: created a new store at ${path}`), ...open})
    this.opened.push(store)
    // Every recorded write of this run is attributed to this user and command (docs/history.md).
    if (!store.readOnly) await store.history.begin(commandContext(this.config.bin, this.id, this.argv))
    return store
  }

  protected get interactive(): boolean {
    return isInteractive()
  }

  /**
   * Run a write that can change a quote with its price impact (docs/change-control.md):
   * --dry-run reports and writes nothing, --max-changes refuses, a terminal confirms a big
   * change. The command spreads `impactFlags` (src/cli/impact-flags.ts) into its flags and
   * returns `impact` in its JSON.
   */
  protected async priceImpact<R>(write: () => Promise<R> | R, scope?: ImpactScope, options?: ImpactOptions): Promise<{dryRun: boolean; impact: PriceImpact; result: R}> {
    // Loaded by the commands that write prices only: the impact measure (with the preview and
    // its CSV reader) is most of a cold command's module graph otherwise (docs/performance.md).
    const {withPriceImpact} = await import('./impact.js')
    return withPriceImpact({flags: this.flags as ImpactFlagValues, json: this.jsonEnabled(), log: (t) => this.log(t), note: (t) => this.note(t), store: (await this.store())}, write, scope, options)
  }

  /**
   * The --json output: 2-space JSON, as oclif prints it. Without a JSON theme (pricectl sets
   * none) oclif's colorizeJson tokenizes the text only to print it unchanged, slicing the
   * rest of the text at every token: quadratic in its length (a price impact or revenue
   * report of a few hundred KB took seconds).
   */
  public override logJson(json: unknown): void {
    if (this.config.theme?.json) super.logJson(json)
    else ux.stdout(JSON.stringify(json, undefined, 2))
  }

  /** Progress and notes: stderr, silent under --json. */
  protected note(message: string): void {
    if (!this.jsonEnabled()) process.stderr.write(message + '\n')
  }

  public override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<never> {
    // An ExitError means the command already reported what went wrong.
    if (err instanceof Errors.ExitError) throw err
    const readOnly = this.opened.find((s) => s.readOnly)
    const {body, code, message} = describeError(readOnly && isReadOnlyError(err) ? readOnlyStoreError(readOnly) : err)
    if (process.env.DEBUG && err.stack) process.stderr.write(err.stack + '\n')
    if (this.jsonEnabled()) {
      this.logJson({success: false, message, ...body})
    } else {
      // A usage error (exit 2) ends with the help to read, on the same line.
      const help = code === 2 && this.id ? `${/[.!?]$/.test(message) ? '' : '.'} See "${this.config.bin} ${toConfiguredId(this.id, this.config)} --help".` : ''
      process.stderr.write(`Error: ${message}${help}\n`)
    }
    throw new Errors.ExitError(code)
  }

  public override async finally(err: Error | undefined): Promise<void> {
    await this._store?.close()
    this._store = undefined
    setListOptions(undefined)
    await super.finally(err)
  }
}

/** SQLite refused a write because the file or its folder cannot be written. */
export function isReadOnlyError(err: unknown): boolean {
  return String((err as {code?: unknown})?.code).startsWith('SQLITE_READONLY')
}

/**
 * A named SQLite store (--db, --profile, PRICECTL_DB, PRICECTL_PROFILE, the config file's db)
 * that does not exist: a command that only reads, or changes what must exist, refuses it (a
 * typo must not make an empty store that then reads as "nothing yet"); one that writes makes it (with a note) but not its
 * missing folder (`--db /nonexistent/dir/x.db` must not make folders at the root); `db init`
 * makes both. The default store is always made, folder included. A PostgreSQL URL is left to
 * the connection: a database that does not exist fails there. Here and not in openStore: the
 * library's openStore(path) makes the store and its folders, as a library call asked for them.
 */
function checkMissingStore(path: string, source: StoreSource, options: {init?: boolean; refuse: boolean}): void {
  if (options.init || !isMissingStore(path)) return
  const {init, where} = describeSource(source, path)
  if (options.refuse) throw new OperationalError(`no store at ${path}${where}: check the path (a typo?), or make one: ${init}`)
  if (!isFolder(dirname(path))) throw new OperationalError(`cannot create the store at ${path}${where}: folder ${dirname(path)} does not exist (create it first, check the path, or run ${init})`)
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** Where the store is, or '' when that cannot be told yet (opening the store then says why). */
function locationOf(flag: string | undefined): string {
  try {
    return resolveStorePath(flag)
  } catch {
    return ''
  }
}

/** A command that writes, run against a store this process can only read. */
export function readOnlyStoreError(store: Store): OperationalError {
  return new OperationalError(
    `the store ${store.path} is read-only (${store.readOnly}) and this command changes it: commands that only read it (list, get, price explain, revenue report, db info, db check, db backup) still work; to change it, copy it somewhere writable ("cp ${store.path} COPY") and pass --db COPY`,
  )
}

/** 128 + SIGINT, what a shell reports for a command stopped with Ctrl-C. */
export const EXIT_INTERRUPTED = 130

/** describeError (src/error-format.ts) with what only the CLI meets: oclif's errors and an interrupted prompt. */
export function describeError(err: unknown): {body: Record<string, unknown>; code: number; message: string} {
  if (!(err instanceof PricectlError)) {
    if (err instanceof Errors.ExitError) return {body: {}, code: err.oclif.exit ?? 1, message: oneLine(err.message)}
    if (err instanceof Errors.CLIError) {
      // oclif's own parse errors (unknown flag, missing argument, bad option) are usage errors.
      const message = err.message.split('\n').filter((l) => l.trim() && !l.startsWith('See more help')).join(' ').trim()
      return {body: {}, code: err.oclif?.exit ?? 2, message: oneLine(message + flagSuggestion(err))}
    }
    // Ctrl-C in a prompt: the shell's code for SIGINT, as if the prompt had not caught it.
    if ((err as {name?: string})?.name === 'ExitPromptError') return {body: {}, code: EXIT_INTERRUPTED, message: 'interrupted'}
  }
  return describeAnyError(err)
}

/**
 * For oclif's "Nonexistent flag: --colums": the command's nearest flag, as ` (did you mean
 * --columns?)`; '' for other errors or when no flag is close.
 */
function flagSuggestion(err: Errors.CLIError): string {
  const e = err as Errors.CLIError & {flags?: unknown; parse?: {input?: {flags?: Record<string, {char?: string; hidden?: boolean}>}}}
  const defined = e.parse?.input?.flags
  if (!Array.isArray(e.flags) || e.flags.length !== 1 || !defined || !err.message.startsWith('Nonexistent flag')) return ''
  const typed = String(e.flags[0]).replace(/=.*$/, '').replace(/^-+/, '')
  const shown = Object.entries(defined).filter(([, f]) => !f.hidden)
  // A negation (--no-header) is no entry of its own: allowNo adds it.
  const names = [...shown.map(([name]) => name), ...shown.filter(([, f]) => (f as {allowNo?: boolean}).allowNo).map(([name]) => `no-${name}`)]
  // Flags are short: one edit in three letters is a typo (--colums, --countyr), more is another word (--bogus is not --json).
  const suggestion = nearest(typed, names, Math.max(1, Math.floor(typed.length / 3)))
  return suggestion ? ` (did you mean --${suggestion}?)` : ''
}

export {InvalidInputError}
