import type {Statement} from 'better-sqlite3'

import type {Rule} from '../../segments/rules.js'
import type {DB} from '../db.js'
import type {SaveResult} from '../port/catalog.js'
import type {AudienceDef, AudiencePrice, AudienceUses, CampaignDef, PackageDef, SegmentsRepository, StoredAudience, StoredCampaign, StoredPackage} from '../port/segments.js'
import {statementCache} from './statements.js'
import {unique} from './unique.js'

type AudienceRow = {api_id: string; created_at: string; id: number; name: string; priority: number; rules_json: string; updated_at: string}
type PackageRow = {api_id: string; audience: null | string; audience_id: null | number; countries_json: string; created_at: string; id: number; name: string; updated_at: string}
type CampaignRow = Omit<StoredCampaign, 'countries' | 'products'> & {countries_json: string; products_json: string}

const json = (list: readonly unknown[]) => JSON.stringify(list)
const IN = 'IN (SELECT value FROM json_each(?))'

/** Highest priority first; equal priorities by api_id, so the order never depends on insertion. */
const AUDIENCE_ORDER = 'ORDER BY priority DESC, api_id'
const PACKAGES = 'SELECT k.*, a.api_id AS audience FROM packages k LEFT JOIN audiences a ON a.id = k.audience_id'
const CAMPAIGNS = `SELECT m.*, c.api_id AS coupon, a.api_id AS audience FROM campaigns m
  JOIN coupons c ON c.id = m.coupon_id LEFT JOIN audiences a ON a.id = m.audience_id`

/** Rows found by api_id, in the order asked; unknown ones left out. */
function inOrder<T extends {api_id: string}>(apiIds: readonly string[], rows: T[]): T[] {
  const found = new Map(rows.map((r) => [r.api_id, r]))
  return apiIds.flatMap((id) => found.get(id) ?? [])
}

/** SQLite adapter of the segments repository: every statement prepared once per store, on first use. */
export class SqliteSegments implements SegmentsRepository {
  private readonly q: (sql: string) => Statement

  constructor(private readonly db: DB) {
    this.q = statementCache(db)
  }

  private idsOf(table: string, apiIds: readonly string[]): Map<string, number> {
    const rows = this.q(`SELECT api_id, id FROM ${table} WHERE api_id ${IN}`).all(json(apiIds)) as {api_id: string; id: number}[]
    return new Map(rows.map((r) => [r.api_id, r.id]))
  }

  // ------------------------------------------------------------ audiences

  async listAudiences(): Promise<StoredAudience[]> {
    return this.withPrices(this.q(`SELECT * FROM audiences ${AUDIENCE_ORDER}`).all() as AudienceRow[])
  }

  async getAudiences(apiIds: readonly string[]): Promise<StoredAudience[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, this.withPrices(this.q(`SELECT * FROM audiences WHERE api_id ${IN}`).all(json(apiIds)) as AudienceRow[]))
  }

  async audienceIds(apiIds: readonly string[]): Promise<Map<string, number>> {
    return apiIds.length === 0 ? new Map() : this.idsOf('audiences', apiIds)
  }

  private withPrices(rows: AudienceRow[]): StoredAudience[] {
    if (rows.length === 0) return []
    const prices = new Map<number, AudiencePrice[]>()
    const list = this.q(
      `SELECT ap.audience_id, ap.product_id, p.api_id AS product, ap.multiplier, ap.amount_minor, ap.currency
       FROM audience_prices ap JOIN products p ON p.id = ap.product_id
       WHERE ap.audience_id ${IN} ORDER BY ap.audience_id, ap.position`,
    ).all(json(rows.map((r) => r.id))) as (AudiencePrice & {audience_id: number})[]
    for (const {audience_id: id, ...price} of list) {
      const l = prices.get(id) ?? []
      l.push(price)
      prices.set(id, l)
    }
    return rows.map(({rules_json: rules, ...r}) => ({...r, prices: prices.get(r.id) ?? [], rules: JSON.parse(rules) as Rule[]}))
  }

  async saveAudiences(defs: readonly AudienceDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    this.db
      .transaction(() => {
        const old = this.idsOf('audiences', defs.map((d) => d.api_id))
        const price = this.q('INSERT INTO audience_prices (audience_id, product_id, position, multiplier, amount_minor, currency) VALUES (?, ?, ?, ?, ?, ?)')
        for (const d of defs) {
          let id = old.get(d.api_id)
          if (id === undefined) {
            id = Number(
              unique('audience', () => d.api_id, () =>
                this.q('INSERT INTO audiences (api_id, name, priority, rules_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(d.api_id, d.name, d.priority, JSON.stringify(d.rules), at, at),
              ).lastInsertRowid,
            )
            old.set(d.api_id, id)
            result.inserted.push(d.api_id)
          } else {
            this.q('UPDATE audiences SET name = ?, priority = ?, rules_json = ?, updated_at = ? WHERE id = ?').run(d.name, d.priority, JSON.stringify(d.rules), at, id)
            this.q('DELETE FROM audience_prices WHERE audience_id = ?').run(id)
            result.updated.push(d.api_id)
          }
          const audienceId = id
          d.prices.forEach((p, i) => unique('audience price', () => String(p.product_id), () => price.run(audienceId, p.product_id, i, p.multiplier, p.amount_minor, p.currency)))
        }
      })
      .immediate()
    return result
  }

  async audienceUses(id: number): Promise<AudienceUses> {
    const names = (sql: string) => (this.q(sql).all(id) as {api_id: string}[]).map((r) => r.api_id)
    return {
      campaigns: names('SELECT api_id FROM campaigns WHERE audience_id = ? ORDER BY api_id'),
      experiments: (this.q('SELECT id FROM experiments WHERE audience_id = ? ORDER BY id').all(id) as {id: number}[]).map((r) => r.id),
      packages: names('SELECT api_id FROM packages WHERE audience_id = ? ORDER BY api_id'),
    }
  }

  async deleteAudience(id: number): Promise<void> {
    this.db
      .transaction(() => {
        this.q('DELETE FROM campaigns WHERE audience_id = ?').run(id)
        this.q('DELETE FROM packages WHERE audience_id = ?').run(id)
        this.q('DELETE FROM audiences WHERE id = ?').run(id)
      })
      .immediate()
  }

  // ------------------------------------------------------------ packages

  async listPackages(): Promise<StoredPackage[]> {
    return this.withProducts(this.q(`${PACKAGES} ORDER BY k.api_id`).all() as PackageRow[])
  }

  async getPackages(apiIds: readonly string[]): Promise<StoredPackage[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, this.withProducts(this.q(`${PACKAGES} WHERE k.api_id ${IN}`).all(json(apiIds)) as PackageRow[]))
  }

  private withProducts(rows: PackageRow[]): StoredPackage[] {
    if (rows.length === 0) return []
    const products = this.q(
      `SELECT pp.package_id, pp.product_id, p.api_id FROM package_products pp JOIN products p ON p.id = pp.product_id
       WHERE pp.package_id ${IN} ORDER BY pp.package_id, pp.position`,
    ).all(json(rows.map((r) => r.id))) as {api_id: string; package_id: number; product_id: number}[]
    const byPackage = new Map<number, {api_id: string; product_id: number}[]>()
    for (const p of products) {
      const l = byPackage.get(p.package_id) ?? []
      l.push(p)
      byPackage.set(p.package_id, l)
    }
    return rows.map(({countries_json: countries, ...r}) => {
      const mine = byPackage.get(r.id) ?? []
      return {...r, countries: JSON.parse(countries) as string[], product_ids: mine.map((p) => p.product_id), products: mine.map((p) => p.api_id)}
    })
  }

  async savePackages(defs: readonly PackageDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    this.db
      .transaction(() => {
        const old = this.idsOf('packages', defs.map((d) => d.api_id))
        const product = this.q('INSERT INTO package_products (package_id, product_id, position) VALUES (?, ?, ?)')
        for (const d of defs) {
          let id = old.get(d.api_id)
          if (id === undefined) {
            id = Number(
              unique('package', () => d.api_id, () =>
                this.q('INSERT INTO packages (api_id, name, countries_json, audience_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(d.api_id, d.name, JSON.stringify(d.countries), d.audience_id, at, at),
              ).lastInsertRowid,
            )
            old.set(d.api_id, id)
            result.inserted.push(d.api_id)
          } else {
            this.q('UPDATE packages SET name = ?, countries_json = ?, audience_id = ?, updated_at = ? WHERE id = ?').run(d.name, JSON.stringify(d.countries), d.audience_id, at, id)
            this.q('DELETE FROM package_products WHERE package_id = ?').run(id)
            result.updated.push(d.api_id)
          }
          const packageId = id
          d.product_ids.forEach((pid, i) => unique('package product', () => String(pid), () => product.run(packageId, pid, i)))
        }
      })
      .immediate()
    return result
  }

  async deletePackage(id: number): Promise<void> {
    this.q('DELETE FROM packages WHERE id = ?').run(id)
  }

  // ------------------------------------------------------------ campaigns

  async listCampaigns(): Promise<StoredCampaign[]> {
    return (this.q(`${CAMPAIGNS} ORDER BY m.api_id`).all() as CampaignRow[]).map((r) => fromCampaignRow(r))
  }

  async getCampaigns(apiIds: readonly string[]): Promise<StoredCampaign[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, (this.q(`${CAMPAIGNS} WHERE m.api_id ${IN}`).all(json(apiIds)) as CampaignRow[]).map((r) => fromCampaignRow(r)))
  }

  async addCampaigns(defs: readonly CampaignDef[], at: string): Promise<void> {
    if (defs.length === 0) return
    this.db
      .transaction(() => {
        const insert = this.q(
          'INSERT INTO campaigns (api_id, name, coupon_id, countries_json, audience_id, products_json, active_from, active_till, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        for (const c of defs) {
          unique('campaign', () => c.api_id, () =>
            insert.run(c.api_id, c.name, c.coupon_id, JSON.stringify(c.countries), c.audience_id, JSON.stringify(c.products), c.active_from, c.active_till, at, at),
          )
        }
      })
      .immediate()
  }

  async deleteCampaign(id: number): Promise<void> {
    this.q('DELETE FROM campaigns WHERE id = ?').run(id)
  }
}

function fromCampaignRow({countries_json: countries, products_json: products, ...r}: CampaignRow): StoredCampaign {
  return {...r, countries: JSON.parse(countries) as string[], products: JSON.parse(products) as string[]}
}
