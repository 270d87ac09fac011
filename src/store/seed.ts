import type Database from 'better-sqlite3'

import {defaultFxSnapshot} from '../fx/snapshot.js'

/** Settings and data a new store starts with. */
export function seedDefaults(db: Database.Database): void {
  const setting = db.prepare('INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)')
  setting.run('org_id', '1')
  setting.run('default_country', 'US')
  const fx = defaultFxSnapshot()
  const insert = db.prepare('INSERT OR IGNORE INTO fx_rates (currency, date, rate, source) VALUES (?, ?, ?, ?)')
  for (const [currency, rate] of Object.entries(fx.rates)) insert.run(currency, fx.date, rate, fx.source)
}
