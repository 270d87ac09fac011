import {execFileSync} from 'node:child_process'
import {expect, it} from 'vitest'

import {ROOT} from './helpers/run.js'

it('the repository holds no scratch files (names with tmp, temp or scratch)', () => {
  const tracked = execFileSync('git', ['ls-files'], {cwd: ROOT, encoding: 'utf8'}).split('\n').filter(Boolean)
  expect(tracked.length).toBeGreaterThan(100)
  expect(tracked.filter((f) => /(^|[-_./])(tmp|temp|scratch)([-_.]|\d*\.[a-z]+$)/i.test(f))).toEqual([])
})
