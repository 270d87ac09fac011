import type {FeatureOutput, Trial} from '../../schemas/catalog.js'
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
import {groupBy, inOrder, type Sql, unique} from './support.js'

type ProductRow = ProductRecord
type CouponRow = Omit<StoredCoupon, 'external'>

const PRODUCT = 'id, api_id, name, base_px_minor, "interval", interval_count, min_px_minor, max_px_minor, baseline_id, created_at, updated_at'
const COUPON = 'id, api_id, name, currency, coupon_type, percent, amount_minor, active_from, active_till, status, created_at, updated_at'

/**
 * PostgreSQL adapter of the catalog repository: a chunk is one statement per list (ids as
 * one array parameter), as in the SQLite adapter (../sqlite/catalog.ts).
 */
export class PgCatalog implements CatalogRepository {
  constructor(private readonly sql: Sql) {}

  // ------------------------------------------------------------ products

  async listProducts(): Promise<Product[]> {
    return await this.withLists(await this.sql.rows<ProductRow>(`SELECT ${PRODUCT} FROM products ORDER BY api_id COLLATE "C"`), true)
  }

  async getProducts(apiIds: readonly string[]): Promise<Product[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, await this.withLists(await this.sql.rows<ProductRow>(`SELECT ${PRODUCT} FROM products WHERE api_id = ANY($1::text[])`, [apiIds])))
  }

  async productIds(apiIds: readonly string[]): Promise<Map<string, number>> {
    if (apiIds.length === 0) return new Map()
    const rows = await this.sql.rows<{api_id: string; id: number}>('SELECT api_id, id FROM products WHERE api_id = ANY($1::text[])', [apiIds])
    return new Map(rows.map((r) => [r.api_id, r.id]))
  }

  async productApiIds(ids: readonly number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map()
    const rows = await this.sql.rows<{api_id: string; id: number}>('SELECT id, api_id FROM products WHERE id = ANY($1::bigint[])', [ids])
    return new Map(rows.map((r) => [r.id, r.api_id]))
  }

  async featureGroups(ids: readonly number[]): Promise<Map<number, FeatureGroupDef>> {
    if (ids.length === 0) return new Map()
    const rows = await this.sql.rows<FeatureGroupDef & {id: number}>('SELECT id, api_id, name, description FROM feature_groups WHERE id = ANY($1::bigint[])', [ids])
    return new Map(rows.map(({id, ...g}) => [id, g]))
  }

  /** Rows with their lists: one query per list for the whole chunk (`all`: every product, no filter). */
  private async withLists(rows: ProductRow[], all = false): Promise<Product[]> {
    if (rows.length === 0) return []
    const params = all ? [] : [rows.map((r) => r.id)]
    const where = (column: string) => (all ? '' : `WHERE ${column} = ANY($1::bigint[])`)
    const byProduct = <T extends {product_id: number}>(list: T[]) => groupBy(list, (r) => r.product_id)
    const prices = byProduct(await this.sql.rows<CountryPrice & {product_id: number}>(`SELECT product_id, country, currency, amount_minor FROM country_prices ${where('product_id')} ORDER BY product_id, position`, params))
    const integrations = byProduct(
      await this.sql.rows<IntegrationRow & {product_id: number}>(
        `SELECT product_id, type, gateway_ref, "interval", interval_count, currency FROM product_integrations ${where('product_id')} ORDER BY product_id, position`,
        params,
      ),
    )
    const features = byProduct(
      await this.sql.rows<Omit<FeatureOutput, 'feature_group'> & {g_api_id: null | string; g_description: null | string; g_name: null | string; product_id: number}>(
        `SELECT f.product_id, f.api_id, f.name, f.description, f.status, f.type, f.unit, f.group_id, f.value,
                g.api_id AS g_api_id, g.name AS g_name, g.description AS g_description
         FROM product_features f LEFT JOIN feature_groups g ON g.id = f.group_id ${where('f.product_id')} ORDER BY f.product_id, f.position`,
        params,
      ),
    )
    const trials = byProduct(await this.sql.rows<Trial & {product_id: number}>(`SELECT product_id, "interval", interval_count FROM product_trials ${where('product_id')} ORDER BY product_id, position`, params))
    const baselines = await this.productApiIds([...new Set(rows.flatMap((r) => (r.baseline_id === null ? [] : [r.baseline_id])))])

    return rows.map((r) => productFromRecord(r, {baselines, features, integrations, prices, trials}))
  }

  async saveProducts(defs: readonly ProductDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    const {sql} = this
    await sql.tx(async () => {
      const old = new Map(
        (await sql.rows<{api_id: string; id: number; name: string}>('SELECT id, api_id, name FROM products WHERE api_id = ANY($1::text[]) FOR UPDATE', [defs.map((d) => d.api_id)])).map((r) => [r.api_id, r]),
      )
      // Renamed products step aside first, so names can be swapped within one chunk
      // (chr(1): text cannot hold the NUL character SQLite uses).
      const renamed = defs.flatMap((d) => {
        const o = old.get(d.api_id)
        return o && o.name !== d.name ? [o.id] : []
      })
      if (renamed.length > 0) await sql.run('UPDATE products SET name = chr(1) || api_id WHERE id = ANY($1::bigint[])', [renamed])
      for (const d of defs) {
        const o = old.get(d.api_id)
        let id: number
        if (o) {
          id = o.id
          await unique('product', () => d.name, async () =>
            await sql.run('UPDATE products SET name = $1, base_px_minor = $2, "interval" = $3, interval_count = $4, min_px_minor = $5, max_px_minor = $6, updated_at = $7 WHERE id = $8', [
              d.name, d.base_px_minor, d.interval, d.interval_count, d.min_px_minor, d.max_px_minor, at, id,
            ]),
          )
          for (const table of ['country_prices', 'product_integrations', 'product_features', 'product_trials']) await sql.run(`DELETE FROM ${table} WHERE product_id = $1`, [id])
          result.updated.push(d.api_id)
        } else {
          id = (await unique('product', (c) => (c === 'name' ? d.name : d.api_id), async () =>
            await sql.rows<{id: number}>(
              `INSERT INTO products (api_id, name, base_px_minor, "interval", interval_count, min_px_minor, max_px_minor, baseline_id, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $8) RETURNING id`,
              [d.api_id, d.name, d.base_px_minor, d.interval, d.interval_count, d.min_px_minor, d.max_px_minor, at],
            ),
          ))[0].id
          result.inserted.push(d.api_id)
        }
        await this.saveLists(id, d)
      }
      // Baselines last: a product may name one further down the same chunk.
      await sql.run(
        `UPDATE products p SET baseline_id = b.id FROM unnest($1::text[], $2::text[]) AS d(api_id, baseline)
         LEFT JOIN products b ON b.api_id = d.baseline WHERE p.api_id = d.api_id AND p.baseline_id IS DISTINCT FROM b.id`,
        [defs.map((d) => d.api_id), defs.map((d) => d.baseline)],
      )
    })
    return result
  }

  /** A product's lists, each as one statement (unnest of the list's columns). */
  private async saveLists(id: number, d: ProductDef): Promise<void> {
    const {sql} = this
    if (d.country_prices.length > 0) {
      const c = d.country_prices
      await unique('country price', (col) => (col === 'country' ? duplicate(c.map((p) => p.country)) : String(id)), async () =>
        await sql.run(
          `INSERT INTO country_prices (product_id, country, currency, amount_minor, position)
           SELECT $1, country, currency, amount_minor, ord - 1 FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS x(country, currency, amount_minor, ord)`,
          [id, c.map((p) => p.country), c.map((p) => p.currency), c.map((p) => p.amount_minor)],
        ),
      )
    }
    if (d.integrations.length > 0) {
      const r = d.integrations.map((it) => integrationRow(it))
      await unique('integration', () => duplicate(r.map((i) => i.gateway_ref)), async () =>
        await sql.run(
          `INSERT INTO product_integrations (product_id, position, type, gateway_ref, "interval", interval_count, currency)
           SELECT $1, ord - 1, type, gateway_ref, iv, ic, currency FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[]) WITH ORDINALITY AS x(type, gateway_ref, iv, ic, currency, ord)`,
          [id, r.map((i) => i.type), r.map((i) => i.gateway_ref), r.map((i) => i.interval), r.map((i) => i.interval_count), r.map((i) => i.currency)],
        ),
      )
    }
    if (d.features.length > 0) {
      const groups = new Map<string, FeatureGroupDef>()
      for (const f of d.features) if (f.feature_group) groups.set(f.feature_group.api_id, f.feature_group)
      const groupIds = new Map<string, number>()
      if (groups.size > 0) {
        const g = [...groups.values()]
        await sql.run(
          `INSERT INTO feature_groups (api_id, name, description) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
           ON CONFLICT (api_id) DO UPDATE SET name = excluded.name, description = excluded.description
           WHERE feature_groups.name IS DISTINCT FROM excluded.name OR feature_groups.description IS DISTINCT FROM excluded.description`,
          [g.map((x) => x.api_id), g.map((x) => x.name), g.map((x) => x.description)],
        )
        for (const r of await sql.rows<{api_id: string; id: number}>('SELECT id, api_id FROM feature_groups WHERE api_id = ANY($1::text[])', [[...groups.keys()]])) groupIds.set(r.api_id, r.id)
      }
      const f = d.features
      await unique('feature', () => duplicate(f.map((x) => x.api_id)), async () =>
        await sql.run(
          `INSERT INTO product_features (product_id, position, api_id, name, description, status, type, unit, group_id, value)
           SELECT $1, ord - 1, api_id, name, description, status, type, unit, group_id, value
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::float8[]) WITH ORDINALITY AS x(api_id, name, description, status, type, unit, group_id, value, ord)`,
          [
            id,
            f.map((x) => x.api_id),
            f.map((x) => x.name),
            f.map((x) => x.description),
            f.map((x) => x.status),
            f.map((x) => x.type),
            f.map((x) => x.unit),
            f.map((x) => (x.feature_group ? groupIds.get(x.feature_group.api_id)! : null)),
            f.map((x) => x.value),
          ],
        ),
      )
    }
    if (d.product_trials.length > 0) {
      const t = d.product_trials
      await sql.run(
        `INSERT INTO product_trials (product_id, position, "interval", interval_count)
         SELECT $1, ord - 1, iv, ic FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS x(iv, ic, ord)`,
        [id, t.map((x) => x.interval), t.map((x) => x.interval_count)],
      )
    }
  }

  async productUses(id: number): Promise<ProductUses> {
    const r = (await this.sql.rows<ProductUses>(
      `SELECT (SELECT count(*) FROM audience_prices WHERE product_id = $1)::int AS audience_prices,
              (SELECT count(*) FROM charges WHERE product_id = $1)::int AS charges,
              (SELECT count(*) FROM experiment_products WHERE product_id = $1)::int AS experiments,
              (SELECT count(*) FROM package_products WHERE product_id = $1)::int AS packages,
              (SELECT count(*) FROM subscriptions WHERE product_id = $1)::int AS subscriptions`,
      [id],
    ))[0]
    return {audience_prices: r.audience_prices, charges: r.charges, experiments: r.experiments, packages: r.packages, subscriptions: r.subscriptions}
  }

  async deleteProduct(id: number): Promise<{baselineOf: string[]}> {
    return await this.sql.tx(async () => {
      const baselineOf = (await this.sql.rows<{api_id: string}>('SELECT api_id FROM products WHERE baseline_id = $1 ORDER BY api_id COLLATE "C"', [id])).map((r) => r.api_id)
      await this.sql.run('DELETE FROM products WHERE id = $1', [id])
      // No foreign key clears them (schema version 8): the revenue records keep no product.
      await this.sql.run('UPDATE charges SET product_id = NULL WHERE product_id = $1', [id])
      await this.sql.run('UPDATE subscriptions SET product_id = NULL WHERE product_id = $1', [id])
      return {baselineOf}
    })
  }

  // ------------------------------------------------------------ coupons

  async listCoupons(): Promise<StoredCoupon[]> {
    return await this.withExternal(await this.sql.rows<CouponRow>(`SELECT ${COUPON} FROM coupons ORDER BY api_id COLLATE "C"`))
  }

  async getCoupons(apiIds: readonly string[]): Promise<StoredCoupon[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, await this.withExternal(await this.sql.rows<CouponRow>(`SELECT ${COUPON} FROM coupons WHERE api_id = ANY($1::text[])`, [apiIds])))
  }

  private async withExternal(rows: CouponRow[]): Promise<StoredCoupon[]> {
    if (rows.length === 0) return []
    const ext = await this.sql.rows<{coupon_id: number; external_id: string; id: number; source: CouponSource}>(
      'SELECT id, coupon_id, source, external_id FROM coupon_external_coupons WHERE coupon_id = ANY($1::bigint[]) ORDER BY coupon_id, position',
      [rows.map((r) => r.id)],
    )
    const byCoupon = groupBy(ext, (e) => e.coupon_id)
    return rows.map((r) => ({...r, external: (byCoupon.get(r.id) ?? []).map((e) => ({external_id: e.external_id, id: e.id, source: e.source}))}))
  }

  async saveCoupons(defs: readonly CouponDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    const {sql} = this
    await sql.tx(async () => {
      const old = new Map((await sql.rows<{api_id: string; id: number}>('SELECT id, api_id FROM coupons WHERE api_id = ANY($1::text[]) FOR UPDATE', [defs.map((d) => d.api_id)])).map((r) => [r.api_id, r.id]))
      for (const d of defs) {
        let id = old.get(d.api_id)
        const values = [d.name, d.currency, d.coupon_type, d.percent, d.amount_minor, d.active_from, d.active_till, d.status, at]
        if (id === undefined) {
          id = (await unique('coupon', () => d.api_id, async () =>
            await sql.rows<{id: number}>(
              `INSERT INTO coupons (name, currency, coupon_type, percent, amount_minor, active_from, active_till, status, created_at, updated_at, api_id)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10) RETURNING id`,
              [...values, d.api_id],
            ),
          ))[0].id
          old.set(d.api_id, id)
          result.inserted.push(d.api_id)
        } else {
          await sql.run('UPDATE coupons SET name = $1, currency = $2, coupon_type = $3, percent = $4, amount_minor = $5, active_from = $6, active_till = $7, status = $8, updated_at = $9 WHERE id = $10', [...values, id])
          await sql.run('DELETE FROM coupon_external_coupons WHERE coupon_id = $1', [id])
          result.updated.push(d.api_id)
        }
        if (d.external.length > 0) {
          const e = d.external
          await unique('coupon link', () => duplicate(e.map((x) => x.source)), async () =>
            await sql.run(
              `INSERT INTO coupon_external_coupons (coupon_id, position, source, external_id)
               SELECT $1, ord - 1, source, external_id FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS x(source, external_id, ord)`,
              [id, e.map((x) => x.source), e.map((x) => x.external_id)],
            ),
          )
        }
      }
    })
    return result
  }

  async couponCampaigns(id: number): Promise<string[]> {
    return (await this.sql.rows<{api_id: string}>('SELECT api_id FROM campaigns WHERE coupon_id = $1 ORDER BY api_id COLLATE "C"', [id])).map((r) => r.api_id)
  }

  async deleteCoupon(id: number): Promise<void> {
    await this.sql.run('DELETE FROM coupons WHERE id = $1', [id])
  }

  async storeContents(): Promise<{rows: number; table: string}[]> {
    return await storeContents(this.sql)
  }
}

/** The first value of a list that occurs twice (what a unique violation of one list statement was about). */
function duplicate(values: readonly string[]): string {
  const seen = new Set<string>()
  for (const v of values) {
    if (seen.has(v)) return v
    seen.add(v)
  }
  return values[0] ?? ''
}
