import {readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'

import {ROOT} from './helpers/run.js'

/**
 * docs/environment.md lists every environment variable pricectl reads: whatever the sources
 * (src/, commands/, bin/) read as `process.env.X`, `process.env['X']`, an `env.X` of an
 * environment passed along, or a flag's `env: 'X'` (oclif reads those).
 */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), {encoding: 'utf8', recursive: true})
    .filter((name) => /\.(ts|js|mjs)$/.test(name) && !name.endsWith('.d.ts'))
    .map((name) => join(ROOT, dir, name))
}

const READS = [/\bprocess\.env\.([A-Z][A-Z0-9_]*)/g, /\bprocess\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]/g, /\benv\.([A-Z][A-Z0-9_]*)\b/g, /\benv:\s*['"]([A-Z][A-Z0-9_]*)['"]/g]

function variablesRead(): Map<string, string> {
  const found = new Map<string, string>()
  for (const file of ['src', 'commands', 'bin'].flatMap(sources)) {
    const text = readFileSync(file, 'utf8')
    for (const pattern of READS) for (const m of text.matchAll(pattern)) if (!found.has(m[1])) found.set(m[1], relative(ROOT, file))
  }
  return found
}

describe('docs/environment.md', () => {
  const page = readFileSync(join(ROOT, 'docs', 'environment.md'), 'utf8')

  it('finds what the sources read (a blind scan would pass the next test)', () => {
    const read = variablesRead()
    for (const name of ['PRICECTL_DB', 'PRICECTL_PROFILE', 'PRICECTL_NOW', 'PRICECTL_GEOIP_DB', 'PRICECTL_IMPORT_BATCH', 'COLUMNS', 'CI', 'GITHUB_ACTIONS', 'XDG_CONFIG_HOME']) {
      expect(read.has(name), name).toBe(true)
    }
  })

  it('lists every environment variable the sources read', () => {
    // The first cell of a row of the table: `NAME`, or several (`USER`, `LOGNAME`).
    const listed = new Set(page.split('\n').filter((l) => l.startsWith('| `')).flatMap((l) => [...l.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])))
    const missing = [...variablesRead()].filter(([name]) => !listed.has(name)).map(([name, file]) => `${name} (read in ${file})`)
    expect(missing, 'add a row to docs/environment.md for each').toEqual([])
  })
})
