import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {basename, dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

/** The modules worker threads run, by their path under src/ without the extension. */
export const WORKERS = ['import/reader-worker', 'store/sqlite/checkpointer-worker', 'store/sqlite/write-behind-worker'] as const

export type WorkerName = (typeof WORKERS)[number]

const sourceBundles = new Map<WorkerName, URL>()

/**
 * The file a worker thread runs for src/NAME.ts: built, dist/src/NAME.js (also from inside the
 * price bundle, scripts/build.mjs); from the TypeScript sources (tests, bin/dev.js), a bundle
 * esbuild makes once per process in node_modules/.cache/pricectl/, because loading the import
 * reader's thirty-odd modules through a TypeScript loader takes about half a second.
 */
export function workerUrl(name: WorkerName): URL {
  const here = import.meta.url
  const file = new URL(here).pathname
  if (file.endsWith('.ts')) return sourceBundle(name)
  const src = file.endsWith('/workers.js') ? new URL('./', here) : new URL('src/', here.slice(0, here.lastIndexOf('/dist/') + '/dist/'.length))
  const url = new URL(`${name}.js`, src)
  // A worker whose file is missing fails on its own thread, unseen by a caller that waits on Atomics for it.
  if (!existsSync(url)) throw new Error(`pricectl's worker module ${fileURLToPath(url)} is missing: reinstall pricectl`)
  return url
}

function sourceBundle(name: WorkerName): URL {
  const known = sourceBundles.get(name)
  if (known && existsSync(known)) return known
  const require = createRequire(import.meta.url)
  const esbuild = require('esbuild') as typeof import('esbuild')
  const result = esbuild.buildSync({
    bundle: true,
    // The bundle is written to the cache: a worker it starts (the import reader's PostgreSQL
    // client) must still be found from the sources, so import.meta.url stays this file's.
    define: {'import.meta.url': JSON.stringify(import.meta.url)},
    entryPoints: [fileURLToPath(new URL(`${name}.ts`, import.meta.url))],
    format: 'esm',
    packages: 'external',
    platform: 'node',
    write: false,
  })
  const code = result.outputFiles[0].text
  const cache = join(dirname(require.resolve('esbuild/package.json')), '..', '.cache', 'pricectl')
  mkdirSync(cache, {recursive: true})
  const file = join(cache, `${basename(name)}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`)
  if (!existsSync(file)) writeFileSync(file, code)
  const url = pathToFileURL(file)
  sourceBundles.set(name, url)
  return url
}
