import type {Statement} from 'better-sqlite3'

import type {FeatureOutput, IntegrationInput, Trial} from '../../schemas/catalog.js'
import type {DB} from '../db.js'
import type {
  CatalogRepository,
  CountryPrice,
  CouponDef,
  CouponSource,
  FeatureGroupDef,
  Product,
  ProductDef,
  ProductUses,
  SaveResult,
  StoredCoupon,
} from '../port/catalog.js'
import {type IntegrationRow, integrationRow} from '../port/catalog.js'
import {productFromRecord, type ProductRecord} from '../rows.js'
import {storeContents} from './contents.js'
import {statementCache} from './statements.js'
import {unique} from './unique.js'

type ProductRow = ProductRecord
type CouponRow = Omit<StoredCoupon, 'external'>

/** Ids as one JSON parameter: `IN (SELECT value FROM json_each(?))` takes a chunk of any size in one prepared statement. */
const json = (list: readonly unknown[]) => JSON.stringify(list)
const IN = 'IN (SELECT value FROM json_each(?))'

/** SQLite adapter of the catalog repository: every statement prepared once per store, on first use. */
export class SqliteCatalog implements CatalogRepository {
  private readonly q: (sql: string) => Statement

  constructor(private readonly db: DB) {
    this.q = statementCache(db)
  }

  // ------------------------------------------------------------ products

  async listProducts(): Promise<Product[]> {
    return await this.withLists(this.q('SELECT * FROM products ORDER BY api_id').all() as ProductRow[], true)
  }

  async getProducts(apiIds: readonly string[]): Promise<Product[]> {
    if (apiIds.length === 0) return []
    const found = new Map((await this.withLists(this.q(`SELECT * FROM products WHERE api_id ${IN}`).all(json(apiIds)) as ProductRow[])).map((p) => [p.api_id, p]))
    return apiIds.flatMap((id) => found.get(id) ?? [])
  }

  async productIds(apiIds: readonly string[]): Promise<Map<string, number>> {
    if (apiIds.length === 0) return new Map()
    const rows = this.q(`SELECT api_id, id FROM products WHERE api_id ${IN}`).all(json(apiIds)) as {api_id: string; id: number}[]
    return new Map(rows.map((r) => [r.api_id, r.id]))
  }

  async productApiIds(ids: readonly number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map()
    const rows = this.q(`SELECT id, api_id FROM products WHERE id ${IN}`).all(json(ids)) as {api_id: string; id: number}[]
    return new Map(rows.map((r) => [r.id, r.api_id]))
  }

  async featureGroups(ids: readonly number[]): Promise<Map<number, FeatureGroupDef>> {
    if (ids.length === 0) return new Map()
    const rows = this.q(`SELECT id, api_id, name, description FROM feature_groups WHERE id ${IN}`).all(json(ids)) as (FeatureGroupDef & {id: number})[]
    return new Map(rows.map(({id, ...g}) => [id, g]))
  }

  /** Rows with their lists: one query per list for the whole chunk (`all`: every product, no filter). */
  private async withLists(rows: ProductRow[], all = false): Promise<Product[]> {
    if (rows.length === 0) return []
    const ids = all ? [] : [json(rows.map((r) => r.id))]
    const where = (column: string) => (all ? '' : `WHERE ${column} ${IN}`)
    const group = <T extends {product_id: number}>(list: T[]) => {
      const m = new Map<number, T[]>()
      for (const r of list) {
        const l = m.get(r.product_id)
        if (l) l.push(r)
        else m.set(r.product_id, [r])
      }
      return m
    }
    const prices = group(this.q(`SELECT product_id, country, currency, amount_minor FROM country_prices ${where('product_id')} ORDER BY product_id, position`).all(...ids) as (CountryPrice & {product_id: number})[])
    const integrations = group(
      this.q(`SELECT product_id, type, gateway_ref, interval, interval_count, currency FROM product_integrations ${where('product_id')} ORDER BY product_id, position`).all(...ids) as (IntegrationRow & {product_id: number})[],
    )
    const features = group(
      this.q(
        `SELECT f.product_id, f.api_id, f.name, f.description, f.status, f.type, f.unit, f.group_id, f.value,
                g.api_id AS g_api_id, g.name AS g_name, g.description AS g_description
         FROM product_features f LEFT JOIN feature_groups g ON g.id = f.group_id ${where('f.product_id')} ORDER BY f.product_id, f.position`,
      ).all(...ids) as (Omit<FeatureOutput, 'feature_group'> & {g_api_id: null | string; g_description: null | string; g_name: null | string; product_id: number})[],
    )
    const trials = group(this.q(`SELECT product_id, interval, interval_count FROM product_trials ${where('product_id')} ORDER BY product_id, position`).all(...ids) as (Trial & {product_id: number})[])
    const baselines = await this.productApiIds([...new Set(rows.flatMap((r) => (r.baseline_id === null ? [] : [r.baseline_id])))])

    return rows.map((r) => productFromRecord(r, {baselines, features, integrations, prices, trials}))
  }

  async saveProducts(defs: readonly ProductDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    this.db
      .transaction(() => {
        const old = new Map(
          (this.q(`SELECT id, api_id, name FROM products WHERE api_id ${IN}`).all(json(defs.map((d) => d.api_id))) as {api_id: string; id: number; name: string}[]).map((r) => [r.api_id, r]),
        )
        // Renamed products step aside first, so names can be swapped within one chunk.
        for (const d of defs) {
          const o = old.get(d.api_id)
          if (o && o.name !== d.name) this.q('UPDATE products SET name = char(0) || api_id WHERE id = ?').run(o.id)
        }
        for (const d of defs) {
          const o = old.get(d.api_id)
          let id: number
          if (o) {
            id = o.id
            unique('product', () => d.name, () =>
              this.q('UPDATE products SET name = ?, base_px_minor = ?, interval = ?, interval_count = ?, min_px_minor = ?, max_px_minor = ?, updated_at = ? WHERE id = ?').run(
                d.name, d.base_px_minor, d.interval, d.interval_count, d.min_px_minor, d.max_px_minor, at, id,
              ),
            )
            for (const table of ['country_prices', 'product_integrations', 'product_features', 'product_trials']) this.q(`DELETE FROM ${table} WHERE product_id = ?`).run(id)
            result.updated.push(d.api_id)
          } else {
            id = Number(
              unique('product', (c) => (c === 'name' ? d.name : d.api_id), () =>
                this.q(
                  `INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
                ).run(d.api_id, d.name, d.base_px_minor, d.interval, d.interval_count, d.min_px_minor, d.max_px_minor, at, at),
              ).lastInsertRowid,
            )
            result.inserted.push(d.api_id)
          }
          const price = this.q('INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (?, ?, ?, ?, ?)')
          d.country_prices.forEach((c, i) => unique('country price', () => c.country, () => price.run(id, c.country, c.currency, c.amount_minor, i)))
          const integration = this.q('INSERT INTO product_integrations (product_id, position, type, gateway_ref, interval, interval_count, currency) VALUES (?, ?, ?, ?, ?, ?, ?)')
          d.integrations.forEach((it, i) => {
            const r = integrationRow(it)
            unique('integration', () => r.gateway_ref, () => integration.run(id, i, r.type, r.gateway_ref, r.interval, r.interval_count, r.currency))
          })
          const feature = this.q('INSERT INTO product_features (product_id, position, api_id, name, description, status, type, unit, group_id, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
          d.features.forEach((f, i) => {
            let groupId: null | number = null
            if (f.feature_group) {
              this.q(
                `INSERT INTO feature_groups (api_id, name, description) VALUES (?, ?, ?)
                 ON CONFLICT (api_id) DO UPDATE SET name = excluded.name, description = excluded.description
                 WHERE feature_groups.name IS NOT excluded.name OR feature_groups.description IS NOT excluded.description`,
              ).run(f.feature_group.api_id, f.feature_group.name, f.feature_group.description)
              groupId = (this.q('SELECT id FROM feature_groups WHERE api_id = ?').get(f.feature_group.api_id) as {id: number}).id
            }
            unique('feature', () => f.api_id, () => feature.run(id, i, f.api_id, f.name, f.description, f.status, f.type, f.unit, groupId, f.value))
          })
          const trial = this.q('INSERT INTO product_trials (product_id, position, interval, interval_count) VALUES (?, ?, ?, ?)')
          d.product_trials.forEach((t, i) => trial.run(id, i, t.interval, t.interval_count))
        }
        // Baselines last: a product may name one further down the same chunk.
        for (const d of defs) this.q('UPDATE products SET baseline_id = (SELECT id FROM products WHERE api_id = ?) WHERE api_id = ?').run(d.baseline, d.api_id)
      })
      .immediate()
    return result
  }

  async productUses(id: number): Promise<ProductUses> {
    const count = (table: string) => (this.q(`SELECT count(*) AS n FROM ${table} WHERE product_id = ?`).get(id) as {n: number}).n
    return {
      audience_prices: count('audience_prices'),
      charges: count('charges'),
      experiments: count('experiment_products'),
      packages: count('package_products'),
      subscriptions: count('subscriptions'),
    }
  }

  async deleteProduct(id: number): Promise<{baselineOf: string[]}> {
    return this.db
      .transaction(() => {
        const baselineOf = (this.q('SELECT api_id FROM products WHERE baseline_id = ? ORDER BY api_id').all(id) as {api_id: string}[]).map((r) => r.api_id)
        this.q('DELETE FROM products WHERE id = ?').run(id)
        return {baselineOf}
      })
      .immediate()
  }

  // ------------------------------------------------------------ coupons

  async listCoupons(): Promise<StoredCoupon[]> {
    return this.withExternal(this.q('SELECT * FROM coupons ORDER BY api_id').all() as CouponRow[])
  }

  async getCoupons(apiIds: readonly string[]): Promise<StoredCoupon[]> {
    if (apiIds.length === 0) return []
    const found = new Map(this.withExternal(this.q(`SELECT * FROM coupons WHERE api_id ${IN}`).all(json(apiIds)) as CouponRow[]).map((c) => [c.api_id, c]))
    return apiIds.flatMap((id) => found.get(id) ?? [])
  }

  private withExternal(rows: CouponRow[]): StoredCoupon[] {
    if (rows.length === 0) return []
    const ext = this.q(`SELECT id, coupon_id, source, external_id FROM coupon_external_coupons WHERE coupon_id ${IN} ORDER BY coupon_id, position`).all(json(rows.map((r) => r.id))) as {
      coupon_id: number
      external_id: string
      id: number
      source: CouponSource
    }[]
    const byCoupon = new Map<number, StoredCoupon['external']>()
    for (const e of ext) {
      const l = byCoupon.get(e.coupon_id) ?? []
      l.push({external_id: e.external_id, id: e.id, source: e.source})
      byCoupon.set(e.coupon_id, l)
    }
    return rows.map((r) => ({...r, external: byCoupon.get(r.id) ?? []}))
  }

  async saveCoupons(defs: readonly CouponDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    this.db
      .transaction(() => {
        const old = new Map((this.q(`SELECT id, api_id FROM coupons WHERE api_id ${IN}`).all(json(defs.map((d) => d.api_id))) as {api_id: string; id: number}[]).map((r) => [r.api_id, r.id]))
        const ext = this.q('INSERT INTO coupon_external_coupons (coupon_id, position, source, external_id) VALUES (?, ?, ?, ?)')
        for (const d of defs) {
          let id = old.get(d.api_id)
          if (id === undefined) {
            id = Number(
              unique('coupon', () => d.api_id, () =>
                this.q('INSERT INTO coupons (api_id, name, currency, coupon_type, percent, amount_minor, active_from, active_till, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
                  d.api_id, d.name, d.currency, d.coupon_type, d.percent, d.amount_minor, d.active_from, d.active_till, d.status, at, at,
                ),
              ).lastInsertRowid,
            )
            old.set(d.api_id, id)
            result.inserted.push(d.api_id)
          } else {
            this.q('UPDATE coupons SET name = ?, currency = ?, coupon_type = ?, percent = ?, amount_minor = ?, active_from = ?, active_till = ?, status = ?, updated_at = ? WHERE id = ?').run(
              d.name, d.currency, d.coupon_type, d.percent, d.amount_minor, d.active_from, d.active_till, d.status, at, id,
            )
            this.q('DELETE FROM coupon_external_coupons WHERE coupon_id = ?').run(id)
            result.updated.push(d.api_id)
          }
          const couponId = id
          d.external.forEach((e, i) => unique('coupon link', () => e.source, () => ext.run(couponId, i, e.source, e.external_id)))
        }
      })
      .immediate()
    return result
  }

  async couponCampaigns(id: number): Promise<string[]> {
    return (this.q('SELECT api_id FROM campaigns WHERE coupon_id = ? ORDER BY api_id').all(id) as {api_id: string}[]).map((r) => r.api_id)
  }

  async deleteCoupon(id: number): Promise<void> {
    this.q('DELETE FROM coupons WHERE id = ?').run(id)
  }

  async storeContents(): Promise<{rows: number; table: string}[]> {
    return storeContents(this.db)
  }
}
