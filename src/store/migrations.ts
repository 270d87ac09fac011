import type Database from 'better-sqlite3'

import {recordExponentsV2} from './exponents.js'
import {seedDefaults} from './seed.js'
import {CATALOG_SQL} from './schema/catalog.js'
import {EXPERIMENTS_SQL} from './schema/experiments.js'
import {HISTORY_SQL} from './schema/history.js'
import {KEYS_SQL} from './schema/keys.js'
import {PRICING_SQL, TAX_PRICING_SQL} from './schema/pricing.js'
import {REVENUE_ORDER_SQL, REVENUE_SQL, SUBSCRIPTION_EVENTS_BACKFILL_SQL, SUBSCRIPTION_EVENTS_SQL, TAX_SQL} from './schema/revenue.js'
import {SEGMENTS_SQL} from './schema/segments.js'

export type Migration = {
  name: string
  up: (db: Database.Database) => void
  version: number
}

/**
 * Versioned migrations, applied in order by `openStore` and `pricectl db migrate`.
 * Never edit a released migration: add the next version. Each released version keeps
 * a fixture store under fixtures/stores/ so upgrades are tested.
 */
export const MIGRATIONS: Migration[] = [
  {
    name: 'initial schema',
    up(db) {
      db.exec(CATALOG_SQL + PRICING_SQL + SEGMENTS_SQL + REVENUE_SQL + EXPERIMENTS_SQL + KEYS_SQL)
      seedDefaults(db)
    },
    version: 1,
  },
  {
    name: 'currency exponents recorded per store; gateway currency rule overrides',
    up: recordExponentsV2,
    version: 2,
  },
  {
    name: 'change history: changes and change_rows (docs/history.md)',
    up(db) {
      db.exec(HISTORY_SQL)
    },
    version: 3,
  },
  {
    name: 'revenue events in any order: field order per record, pending partial updates (docs/revenue.md)',
    up(db) {
      db.exec(REVENUE_ORDER_SQL)
    },
    version: 4,
  },
  {
    name: 'subscription history: one row per event a subscription took (docs/revenue.md)',
    up(db) {
      db.exec(SUBSCRIPTION_EVENTS_SQL + SUBSCRIPTION_EVENTS_BACKFILL_SQL)
    },
    version: 5,
  },
  {
    name: 'tax: charges keep gross, tax and net; subscriptions and their history keep their tax (docs/revenue.md)',
    up(db) {
      db.exec(TAX_SQL)
    },
    version: 6,
  },
  {
    name: 'tax in prices: operator tax rates, tax behaviour of the store, countries and products (docs/tax.md)',
    up(db) {
      db.exec(TAX_PRICING_SQL)
    },
    version: 7,
  },
  {
    // PostgreSQL drops the foreign keys of charges.product_id and subscriptions.product_id
    // (./postgres/schema.ts PG_V8_SQL). SQLite keeps them: its check is a cheap probe, and its
    // import turns the checks off and checks the products itself (sqlite/imports.ts).
    name: 'no foreign key from charges and subscriptions to products on PostgreSQL; nothing changes in a SQLite file',
    up() {},
    version: 8,
  },
]

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version
