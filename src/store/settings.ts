import {DEFAULT_COUNTRY_SETTING, FALLBACK_COUNTRY} from '../settings.js'
import type {DB} from './db.js'

/** Store-wide settings (one store = one organisation). */
export function getSetting(db: DB, key: string): string | undefined {
  return (db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as {value: string} | undefined)?.value
}

export function setSetting(db: DB, key: string, value: string): void {
  db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value)
}

export function orgId(db: DB): number {
  return Number(getSetting(db, 'org_id') ?? 1)
}


/** Country used when neither the request, the user nor the IP gives one. */
export function defaultCountry(db: DB): string {
  return getSetting(db, DEFAULT_COUNTRY_SETTING) ?? FALLBACK_COUNTRY
}
