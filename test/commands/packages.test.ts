import {beforeEach, describe, expect, it} from 'vitest'

import {run, seededStore, tempStore} from '../helpers/run.js'
import {count, must, segCatalog, steps, withBody} from '../helpers/segments-fixtures.js'

describe('packages', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
    await seededStore(db, 'packages:catalog', async (store) => {
      await segCatalog(store)
    })
  })

  it('create, get, list, update and delete', async () => {
    const r = await run(db, ['packages', 'create', '--api-id', 'de_pkg', '--name', 'Germany', '--product', 'basic,yearly', '--country', 'de', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.package).toMatchObject({api_id: 'de_pkg', audience: null, countries: ['DE'], name: 'Germany', products: ['basic', 'yearly']})
    expect((await run(db, ['packages', 'get', 'de_pkg', '--json'])).json.package).toEqual(r.json.package)
    const upd = await run(db, ['packages', 'update', 'de_pkg', '--product', 'lifetime', '--product', 'basic', '--json'])
    expect(upd.json.package.products).toEqual(['lifetime', 'basic'])
    expect(upd.json.package.countries).toEqual(['DE'])
    const list = await run(db, ['packages', 'list'])
    expect(list.stdout).toContain('lifetime, basic')
    expect(list.stdout).toContain('country DE')
    const del = await run(db, ['packages', 'delete', 'de_pkg', '--yes', '--json'])
    expect(del.json).toMatchObject({api_id: 'de_pkg', success: true})
    expect(count(db, 'packages') + count(db, 'package_products')).toBe(0)
  })

  it.each([
    // A product or audience that does not exist: exit 1 (not found); a bad value: exit 2.
    [{api_id: 'p', name: 'P', products: ['basic', 'nope']}, 'products[1]: unknown product "nope"', 1],
    [{api_id: 'p', name: 'P', products: []}, 'products: needs at least one product', 2],
    [{api_id: 'p', name: 'P', products: ['basic', 'basic']}, 'products[1]: product "basic" is listed twice', 2],
    [{api_id: 'p', countries: ['DEU'], name: 'P', products: ['basic']}, 'countries[0]: unknown country "DEU"', 2],
    [{api_id: 'p', audience: 'ghosts', name: 'P', products: ['basic']}, 'audience: unknown audience "ghosts"', 1],
    [{api_id: 'p', name: 'P', product: ['basic'], products: ['basic']}, 'unknown field "product"', 2],
  ])('bad package %j exits %s and writes nothing', async (body, message, code) => {
    const r = await withBody(db, ['packages', 'create'], body)
    expect(r.code).toBe(code)
    expect(r.json.message).toContain(message)
    expect(count(db, 'packages')).toBe(0)
  })

  it('refuses a second package for the same segment, naming the first', async () => {
    await must(db, ['packages', 'create'], {api_id: 'eu', countries: ['DE', 'FR'], name: 'EU', products: ['basic']})
    const r = await withBody(db, ['packages', 'create'], {api_id: 'de', countries: ['AT', 'DE'], name: 'DE', products: ['yearly']})
    expect(r.code).toBe(2)
    expect(r.json.message).toContain('package "eu" is already segmented for country DE')
    // Another audience, or no segment at all, is fine.
    await must(db, ['audiences', 'create'], {api_id: 'students', name: 'Students', rules: ['feature student eq yes']})
    expect((await withBody(db, ['packages', 'create'], {api_id: 'de_students', audience: 'students', countries: ['DE'], name: 'x', products: ['yearly']})).code).toBe(0)
    expect((await withBody(db, ['packages', 'create'], {api_id: 'loose', name: 'x', products: ['yearly']})).code).toBe(0)
    const upd = await run(db, ['packages', 'update', 'loose', '--country', 'FR', '--json'])
    expect(upd.code).toBe(2)
    expect(upd.json.message).toContain('package "eu" is already segmented for country FR')
  })
})

describe('packages in price', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
    await seededStore(db, 'packages:segments', async (store) => {
      await segCatalog(store)
      await must(store, ['audiences', 'create'], {api_id: 'students', name: 'Students', priority: 5, rules: ['feature student eq yes']})
      await must(store, ['audiences', 'create'], {api_id: 'power', name: 'Power', priority: 10, rules: ['feature level gt 9']})
      await must(store, ['packages', 'create'], {api_id: 'de_pkg', countries: ['DE'], name: 'Germany', products: ['basic', 'yearly']})
      await must(store, ['packages', 'create'], {api_id: 'students_pkg', audience: 'students', name: 'Students', products: ['yearly']})
      await must(store, ['packages', 'create'], {api_id: 'de_students', audience: 'students', countries: ['DE'], name: 'German students', products: ['lifetime']})
      await must(store, ['packages', 'create'], {api_id: 'manual', name: 'Manual', products: ['lifetime', 'basic']})
    })
  })

  it('without --product prices the package segmented for the country', async () => {
    const r = await run(db, ['price', '-u', 'u1', '--country', 'DE', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.package_id).toBe('de_pkg')
    expect(Object.keys(r.json.products)).toEqual(['basic', 'yearly'])
  })

  it('prefers the package for the user audience, with countries before without', async () => {
    const de = await run(db, ['price', '-u', 's1', '--country', 'DE', '--feature', 'student=yes', '--json'])
    expect(de.json.package_id).toBe('de_students')
    const us = await run(db, ['price', '-u', 's2', '--country', 'US', '--feature', 'student=yes', '--json'])
    expect(us.json.package_id).toBe('students_pkg')
    expect(Object.keys(us.json.products)).toEqual(['yearly'])
    // In two audiences: power (priority 10) has no package, so the students package applies.
    const both = await run(db, ['price', '-u', 's3', '--country', 'US', '--feature', 'student=yes', '--feature', 'level=10', '--json'])
    expect(both.json.audience.api_id).toBe('power')
    expect(both.json.package_id).toBe('students_pkg')
  })

  it('--package-id picks any package, segmented or not', async () => {
    const r = await run(db, ['price', '-u', 'u2', '--country', 'US', '--package-id', 'manual', '--json'])
    expect(r.json.package_id).toBe('manual')
    expect(Object.keys(r.json.products)).toEqual(['lifetime', 'basic'])
    const unknown = await run(db, ['price', '-u', 'u3', '--country', 'US', '--package-id', 'nope', '--json'])
    expect(unknown.code).toBe(1)
    expect(unknown.json.message).toContain('unknown package "nope"')
  })

  it('no package for the segment: exit 2 naming country and audience, no lock', async () => {
    const r = await run(db, ['price', '-u', 'u4', '--country', 'BR', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe('no package for country BR and audience default: pass --product or --package-id')
    const power = await run(db, ['price', '-u', 'u5', '--country', 'BR', '--feature', 'level=12', '--json'])
    expect(power.json.message).toBe('no package for country BR and audience power: pass --product or --package-id')
    expect(count(db, 'locks')).toBe(0)
  })

  it('explain says which package was chosen and why the others were not', async () => {
    const r = await run(db, ['price', 'explain', '-u', 'u6', '--country', 'DE', '--json'])
    const s = steps(r)
    expect(s).toContain('package | chose | package de_pkg, segmented for country DE: basic, yearly')
    expect(s).toContain('package | skipped | students_pkg (audience students): user is not in audience students (default audience)')
    expect(s).toContain('package | skipped | manual: no segment, picked by --package-id only')
  })

  it('a lock keeps its package after the packages change', async () => {
    const first = await run(db, ['price', '-u', 'locked', '--country', 'DE', '--json'])
    expect(first.json.package_id).toBe('de_pkg')
    expect((await run(db, ['packages', 'update', 'de_pkg', '--product', 'lifetime', '--json'])).code).toBe(0)
    const again = await run(db, ['price', '-u', 'locked', '--json'])
    expect(again.json).toEqual(first.json)
    const fresh = await run(db, ['price', '-u', 'locked', '--country', 'DE', '--override', '--json'])
    expect(Object.keys(fresh.json.products)).toEqual(['lifetime'])
  })
})
