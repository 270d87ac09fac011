import Database from 'better-sqlite3'
import {spawn, spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect} from 'vitest'

import {dump, type StoreDump} from '../helpers/dump.js'
import {ROOT, type Run} from '../helpers/run.js'

export {paymentsCsv, PAYMENTS_HEADER, rng, subscriptionsCsv, SUBSCRIPTIONS_HEADER} from './generate.js'

/** Shared pieces of the hardening tests (test/hardening/*). */

export const FIXTURE_STORES = join(ROOT, 'fixtures', 'stores')
export const BIN = join(ROOT, 'bin', 'run.js')

export function tempDir(prefix = 'pricectl-hard-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** A private copy of fixtures/stores/v1.db (rows in every table), owner-only like a real store. */
export function copyFixtureStore(dir = tempDir(), name = 'v1.db'): string {
  const path = join(dir, 'store.db')
  copyFileSync(join(FIXTURE_STORES, name), path)
  chmodSync(path, 0o600)
  return path
}

export type Expected = {made_with: Record<string, unknown>; now: string; reads: {args: string[]; json: any}[]}

export function fixtureExpected(name = 'v1'): Expected {
  return JSON.parse(readFileSync(join(FIXTURE_STORES, `${name}.expected.json`), 'utf8')) as Expected
}

export function write(dir: string, name: string, content: string | Uint8Array): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

/** Text as a UTF-16 file with its byte order mark (what some editors on Windows save). */
export const utf16 = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])

/** A stack trace line as V8 prints it (`    at fn (file:1:2)`). */
export const STACK_LINE = /^\s+at .*(\(|file:|node:|\/).*:\d+/m

/**
 * A rejected command, as a user sees it: exit 1 or 2, one line on stderr (`Error: ...`),
 * no stack trace; under --json the spec's error shape on stdout and nothing on stderr.
 */
export function expectCleanFailure(r: Run, json: boolean, context = ''): void {
  const where = `${context}\nexit ${r.code}\nstdout: ${r.stdout.slice(0, 400)}\nstderr: ${r.stderr.slice(0, 400)}`
  expect([1, 2], where).toContain(r.code)
  expect(r.stderr, where).not.toMatch(STACK_LINE)
  expect(r.stdout, where).not.toMatch(STACK_LINE)
  if (json) {
    expect(r.json, where).toMatchObject({success: false})
    expect(typeof r.json.message, where).toBe('string')
    expect(r.json.message.length, where).toBeGreaterThan(0)
    expect(r.json.message, where).not.toMatch(/[\r\n]/)
    expect(r.stderr, where).toBe('')
  } else {
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '')
    const errors = lines.filter((l) => l.startsWith('Error: '))
    expect(errors.length, where).toBe(1)
    // Imports may print progress lines before it; the error is the last line.
    expect(lines.at(-1), where).toMatch(/^Error: \S/)
  }
}

/** The store did not change (every table, the schema and its version). */
export function expectUnchanged(db: string, before: StoreDump, context = ''): void {
  expectSameStore(dump(db), before, context)
}

/** `after` is `before` (dumps of a store: every table, the schema and its version). */
export function expectSameStore(after: StoreDump, before: StoreDump, context = ''): void {
  if (after === before || JSON.stringify(after) === JSON.stringify(before)) return
  for (const t of Object.keys({...before.tables, ...after.tables})) {
    expect(after.tables[t], `${context}: table ${t} changed`).toEqual(before.tables[t])
  }
  expect(after, context).toEqual(before)
}

/**
 * A store whose dump is taken again only when another connection committed to it: `PRAGMA
 * data_version` of a connection held open here changes exactly then. Commands that are
 * refused (most of a fuzzing run) then cost no dump before and after each, and the
 * comparison is expectUnchanged's whenever something was committed. `known`: the store's
 * dump when the caller has it (a copy of a store dumped before).
 */
export class WatchedStore {
  private readonly connection: Database.Database
  private state: StoreDump
  private version: number

  constructor(
    readonly path: string,
    known?: StoreDump,
  ) {
    this.connection = new Database(path, {fileMustExist: true})
    this.version = this.dataVersion()
    this.state = known ?? dump(path)
  }

  /** The store's dump as it is now. */
  current(): StoreDump {
    const version = this.dataVersion()
    if (version !== this.version) {
      this.version = version
      this.state = dump(this.path)
    }
    return this.state
  }

  /** The store is `before` (a current() taken earlier). */
  expectUnchanged(before: StoreDump, context = ''): void {
    expectSameStore(this.current(), before, context)
  }

  close(): void {
    this.connection.close()
  }

  private dataVersion(): number {
    return this.connection.pragma('data_version', {simple: true}) as number
  }
}

export type ChildResult = {code: null | number; signal: NodeJS.Signals | null; stderr: string; stdout: string}

/** Start bin/run.js in a child process; `done` resolves when it exits. */
export function startBin(args: string[], options: {cwd?: string; env?: Record<string, string | undefined>; input?: string} = {}): {child: ReturnType<typeof spawn>; done: Promise<ChildResult>} {
  const env: Record<string, string | undefined> = {...process.env, CI: '1', DEBUG: undefined, NODE_ENV: undefined, ...options.env}
  const child = spawn(process.execPath, [BIN, ...args], {cwd: options.cwd ?? ROOT, env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  child.stdin!.end(options.input ?? '')
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({code, signal, stderr, stdout}))
  })
  return {child, done}
}

/** A pricectl command for runMany: its arguments, and variables set for it alone. */
export type Invocation = {args: string[]; env?: Record<string, string>}

/** test/hardening/run-many.mjs: several commands in one node process, each as bin/run.js runs it. */
export const RUN_MANY = join(ROOT, 'test', 'hardening', 'run-many.mjs')

/** How runMany starts RUN_MANY (with these arguments and stdio): node from ROOT by default. */
export type RunManySpawn = (args: string[], stdio: 'pipe'[]) => ReturnType<typeof spawnSync>

const nodeFromRoot: RunManySpawn = (args, stdio) =>
  spawnSync(process.execPath, args, {cwd: ROOT, encoding: 'utf8', env: {...process.env, CI: '1', DEBUG: '', NODE_ENV: ''}, maxBuffer: 256 * 1024 * 1024, stdio})

/**
 * Run `commands` one after another in one process (RUN_MANY, started by `spawn`): node and
 * oclif start once instead of once per command (and a namespace or another user is set up
 * once). Each command's exit code, stdout and stderr come back as bin/run.js's would.
 */
export function runMany(commands: Invocation[], spawn: RunManySpawn = nodeFromRoot): Run[] {
  const r = spawn([RUN_MANY, ROOT, JSON.stringify(commands)], ['pipe', 'pipe', 'pipe', 'pipe'])
  const said = `exit ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
  expect(r.status, `mount failed: ${said}`).not.toBe(99)
  // Nothing gets past the runner's capture: every byte a command wrote is in its own result.
  expect([r.status, String(r.stdout), String(r.stderr)], said).toEqual([0, '', ''])
  const results = JSON.parse(String(r.output[3])) as {code: number; stderr: string; stdout: string}[]
  expect(results, said).toHaveLength(commands.length)
  return results.map(({code, stderr, stdout}) => ({code, json: parseJson(stdout), stderr, stdout}))
}

/** runMany without blocking this thread (the test reads other children meanwhile): node from ROOT, `env` added to this process's. */
export function startMany(commands: Invocation[], env: Record<string, string> = {}): Promise<Run[]> {
  const child = spawn(process.execPath, [RUN_MANY, ROOT, JSON.stringify(commands)], {
    cwd: ROOT,
    env: {...process.env, CI: '1', DEBUG: '', NODE_ENV: '', ...env},
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  const out = ['', '', '']
  for (const [i, stream] of [child.stdout!, child.stderr!, child.stdio[3] as NodeJS.ReadableStream].entries()) stream.setEncoding('utf8').on('data', (d: string) => (out[i] += d))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      try {
        const said = `exit ${code}\nstdout: ${out[0]}\nstderr: ${out[1]}`
        expect([code, out[0], out[1]], said).toEqual([0, '', ''])
        const results = JSON.parse(out[2]) as {code: number; stderr: string; stdout: string}[]
        expect(results, said).toHaveLength(commands.length)
        resolve(results.map(({code, stderr, stdout}) => ({code, json: parseJson(stdout), stderr, stdout})))
      } catch (error) {
        reject(error)
      }
    })
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
