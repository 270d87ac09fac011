import {describe, expect, it} from 'vitest'

import {oneLine} from '../../src/error-format.js'

describe('oneLine: long quoted values are shortened, nothing else', () => {
  it('shortens a quoted value of 80 characters or more', () => {
    const long = 'x'.repeat(100)
    expect(oneLine(`bad value "${long}" in row 3`)).toBe(`bad value "${'x'.repeat(80)}..." (100 characters) in row 3`)
  })

  it('keeps short quoted values and the long text between them whole', () => {
    const between = ': ' + 'words between two short quoted values '.repeat(3)
    const message = `rule "a; b"${between}(see "pricectl rounding set --help")`
    expect(oneLine(message)).toBe(message)
  })

  it('keeps escaped quotes inside a value', () => {
    expect(oneLine('got "say \\"hi\\"" then "ok"')).toBe('got "say \\"hi\\"" then "ok"')
  })
})
