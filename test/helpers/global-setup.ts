import {execFileSync} from 'node:child_process'
import {existsSync, statSync} from 'node:fs'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'

const root = join(import.meta.dirname, '..', '..')

function newest(dir: string): number {
  let t = 0
  for (const e of readdirSync(dir, {withFileTypes: true})) {
    const p = join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return t
}

/** End-to-end tests run bin/run.js, which runs dist/: build it when the sources are newer. */
export default function setup(): void {
  const manifest = join(root, 'oclif.manifest.json')
  const built = existsSync(manifest) ? statSync(manifest).mtimeMs : 0
  const source = Math.max(newest(join(root, 'src')), newest(join(root, 'commands')))
  if (built >= source) return
  // Emit even with type errors (tsc still writes JS): `npm run typecheck` is the gate for
  // those, and tests of one part should not wait for another part to type-check.
  try {
    execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {cwd: root, stdio: 'pipe'})
  } catch {}
  execFileSync(join(root, 'node_modules', '.bin', 'oclif'), ['manifest'], {cwd: root, stdio: 'pipe'})
}
