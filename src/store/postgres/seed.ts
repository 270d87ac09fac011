import {knownCurrencies, packageExponents, useRecordedExponents} from '../../currency.js'
import {defaultFxSnapshot} from '../../fx/snapshot.js'
import type {PgConn} from './client.js'

/** Settings and data a new store starts with: the same as SQLite's (../seed.ts). */
export async function seedDefaultsPg(pg: PgConn): Promise<void> {
  await pg.run(`INSERT INTO settings (key, value) VALUES ('org_id', '1'), ('default_country', 'US') ON CONFLICT (key) DO NOTHING`)
  const fx = defaultFxSnapshot()
  const codes = Object.keys(fx.rates)
  await pg.run(
    `INSERT INTO fx_rates (currency, date, rate, source)
     SELECT c, $2, r, $3 FROM unnest($1::text[], $4::float8[]) AS t(c, r)
     ON CONFLICT (currency, date) DO NOTHING`,
    [codes, fx.date, fx.source, codes.map((c) => fx.rates[c])],
  )
}

/**
 * Migration 2 on PostgreSQL: record every known currency's ISO 4217 exponent. A PostgreSQL
 * store never held schema-1 amounts (written with the runtime ICU's digits), so unlike
 * SQLite's migration 2 (../exponents.ts) there is nothing to rescale.
 */
export async function recordExponentsPg(pg: PgConn): Promise<void> {
  const iso = [...packageExponents()]
  await pg.run(
    'INSERT INTO currency_exponents (currency, exponent) SELECT * FROM unnest($1::text[], $2::int[]) ON CONFLICT (currency) DO NOTHING',
    [iso.map(([c]) => c), iso.map(([, e]) => e)],
  )
}

/**
 * Load the store's exponents for this process, recording currencies the runtime knows and
 * the store does not yet (a newer data package); `readonly` stores only load. As ../exponents.ts.
 */
export async function loadExponentsPg(pg: PgConn, options: {readonly?: boolean} = {}): Promise<void> {
  const map = new Map(await pg.queryArrays<[string, number]>('SELECT currency, exponent FROM currency_exponents'))
  if (!options.readonly && [...knownCurrencies()].some((c) => !map.has(c))) {
    const missing = [...packageExponents()].filter(([c]) => !map.has(c))
    await pg.run(
      'INSERT INTO currency_exponents (currency, exponent) SELECT * FROM unnest($1::text[], $2::int[]) ON CONFLICT (currency) DO NOTHING',
      [missing.map(([c]) => c), missing.map(([, e]) => e)],
    )
    for (const [c, e] of missing) map.set(c, e)
  }
  useRecordedExponents(map)
}
