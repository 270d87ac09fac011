import {run as oclifRun} from '@oclif/core'
import {captureOutput} from '@oclif/test'
import {spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..')

/** A fresh store path in its own temp folder (the file is created by the first command). */
export function tempStore(): string {
  return join(mkdtempSync(join(tmpdir(), 'pricectl-test-')), 'store.db')
}

export type Run = {code: number; json: any; stderr: string; stdout: string}

function parseJson(stdout: string): unknown {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

/**
 * Run a command in-process (@oclif/test captureOutput) against `db`. Arguments are passed
 * as given (runCommand would re-split them on spaces).
 */
export async function run(db: string, args: string[]): Promise<Run> {
  const {error, stderr, stdout} = await captureOutput(async () => oclifRun([...args, '--db', db], {root: ROOT}))
  const code = error ? ((error as {oclif?: {exit?: number}}).oclif?.exit ?? 1) : 0
  return {code, json: parseJson(stdout), stderr, stdout}
}

/** Run bin/run.js (the build) in a child process, as a user would. */
export function runBin(db: string | undefined, args: string[], options: {env?: Record<string, string>; input?: string; bin?: string} = {}): Run {
  const env: Record<string, string | undefined> = {...process.env, NODE_ENV: undefined, ...options.env}
  if (db) env.PRICECTL_DB = db
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', options.bin ?? 'run.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: env as NodeJS.ProcessEnv,
    input: options.input ?? '',
    maxBuffer: 256 * 1024 * 1024,
  })
  return {code: r.status ?? 1, json: parseJson(r.stdout), stderr: r.stderr, stdout: r.stdout}
}
