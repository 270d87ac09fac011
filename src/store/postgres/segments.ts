import type {Rule} from '../../segments/rules.js'
import type {SaveResult} from '../port/catalog.js'
import type {AudienceDef, AudiencePrice, AudienceUses, CampaignDef, PackageDef, SegmentsRepository, StoredAudience, StoredCampaign, StoredPackage} from '../port/segments.js'
import {groupBy, inOrder, type Sql, unique} from './support.js'

type AudienceRow = {api_id: string; created_at: string; id: number; name: string; priority: number; rules_json: string; updated_at: string}
type PackageRow = {api_id: string; audience: null | string; audience_id: null | number; countries_json: string; created_at: string; id: number; name: string; updated_at: string}
type CampaignRow = Omit<StoredCampaign, 'countries' | 'products'> & {countries_json: string; products_json: string}

/** Highest priority first; equal priorities by api_id, so the order never depends on insertion. */
const AUDIENCE_ORDER = 'ORDER BY priority DESC, api_id COLLATE "C"'
const AUDIENCES = 'SELECT id, api_id, name, priority, rules_json, created_at, updated_at FROM audiences'
const PACKAGES = `SELECT k.id, k.api_id, k.name, k.countries_json, k.audience_id, k.created_at, k.updated_at, a.api_id AS audience
  FROM packages k LEFT JOIN audiences a ON a.id = k.audience_id`
const CAMPAIGNS = `SELECT m.id, m.api_id, m.name, m.coupon_id, m.countries_json, m.audience_id, m.products_json, m.active_from, m.active_till, m.created_at, m.updated_at,
  c.api_id AS coupon, a.api_id AS audience FROM campaigns m JOIN coupons c ON c.id = m.coupon_id LEFT JOIN audiences a ON a.id = m.audience_id`

/** PostgreSQL adapter of the segments repository (the same semantics as ../sqlite/segments.ts). */
export class PgSegments implements SegmentsRepository {
  constructor(private readonly sql: Sql) {}

  private async idsOf(table: string, apiIds: readonly string[], lock = ''): Promise<Map<string, number>> {
    const rows = await this.sql.rows<{api_id: string; id: number}>(`SELECT api_id, id FROM ${table} WHERE api_id = ANY($1::text[])${lock}`, [apiIds])
    return new Map(rows.map((r) => [r.api_id, r.id]))
  }

  // ------------------------------------------------------------ audiences

  async listAudiences(): Promise<StoredAudience[]> {
    return await this.withPrices(await this.sql.rows<AudienceRow>(`${AUDIENCES} ${AUDIENCE_ORDER}`))
  }

  async getAudiences(apiIds: readonly string[]): Promise<StoredAudience[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, await this.withPrices(await this.sql.rows<AudienceRow>(`${AUDIENCES} WHERE api_id = ANY($1::text[])`, [apiIds])))
  }

  async audienceIds(apiIds: readonly string[]): Promise<Map<string, number>> {
    return apiIds.length === 0 ? new Map() : await this.idsOf('audiences', apiIds)
  }

  private async withPrices(rows: AudienceRow[]): Promise<StoredAudience[]> {
    if (rows.length === 0) return []
    const list = await this.sql.rows<AudiencePrice & {audience_id: number}>(
      `SELECT ap.audience_id, ap.product_id, p.api_id AS product, ap.multiplier, ap.amount_minor, ap.currency
       FROM audience_prices ap JOIN products p ON p.id = ap.product_id
       WHERE ap.audience_id = ANY($1::bigint[]) ORDER BY ap.audience_id, ap.position`,
      [rows.map((r) => r.id)],
    )
    const prices = groupBy(list, (p) => p.audience_id)
    return rows.map(({rules_json: rules, ...r}) => ({
      ...r,
      prices: (prices.get(r.id) ?? []).map(({audience_id: _a, ...p}) => p),
      rules: JSON.parse(rules) as Rule[],
    }))
  }

  async saveAudiences(defs: readonly AudienceDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    const {sql} = this
    await sql.tx(async () => {
      const old = await this.idsOf('audiences', defs.map((d) => d.api_id), ' FOR UPDATE')
      for (const d of defs) {
        let id = old.get(d.api_id)
        if (id === undefined) {
          id = (await unique('audience', () => d.api_id, async () =>
            await sql.rows<{id: number}>('INSERT INTO audiences (api_id, name, priority, rules_json, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING id', [
              d.api_id, d.name, d.priority, JSON.stringify(d.rules), at,
            ]),
          ))[0].id
          old.set(d.api_id, id)
          result.inserted.push(d.api_id)
        } else {
          await sql.run('UPDATE audiences SET name = $1, priority = $2, rules_json = $3, updated_at = $4 WHERE id = $5', [d.name, d.priority, JSON.stringify(d.rules), at, id])
          await sql.run('DELETE FROM audience_prices WHERE audience_id = $1', [id])
          result.updated.push(d.api_id)
        }
        const p = d.prices
        if (p.length === 0) continue
        await unique('audience price', () => String(p.find((x, i) => p.findIndex((y) => y.product_id === x.product_id) !== i)?.product_id ?? p[0].product_id), async () =>
          await sql.run(
            `INSERT INTO audience_prices (audience_id, product_id, position, multiplier, amount_minor, currency)
             SELECT $1, product_id, ord - 1, multiplier, amount_minor, currency
             FROM unnest($2::bigint[], $3::float8[], $4::bigint[], $5::text[]) WITH ORDINALITY AS x(product_id, multiplier, amount_minor, currency, ord)`,
            [id, p.map((x) => x.product_id), p.map((x) => x.multiplier), p.map((x) => x.amount_minor), p.map((x) => x.currency)],
          ),
        )
      }
    })
    return result
  }

  async audienceUses(id: number): Promise<AudienceUses> {
    const names = async (text: string) => (await this.sql.rows<{api_id: string}>(text, [id])).map((r) => r.api_id)
    return {
      campaigns: await names('SELECT api_id FROM campaigns WHERE audience_id = $1 ORDER BY api_id COLLATE "C"'),
      experiments: (await this.sql.rows<{id: number}>('SELECT id FROM experiments WHERE audience_id = $1 ORDER BY id', [id])).map((r) => r.id),
      packages: await names('SELECT api_id FROM packages WHERE audience_id = $1 ORDER BY api_id COLLATE "C"'),
    }
  }

  async deleteAudience(id: number): Promise<void> {
    await this.sql.tx(async () => {
      await this.sql.run('DELETE FROM campaigns WHERE audience_id = $1', [id])
      await this.sql.run('DELETE FROM packages WHERE audience_id = $1', [id])
      await this.sql.run('DELETE FROM audiences WHERE id = $1', [id])
    })
  }

  // ------------------------------------------------------------ packages

  async listPackages(): Promise<StoredPackage[]> {
    return await this.withProducts(await this.sql.rows<PackageRow>(`${PACKAGES} ORDER BY k.api_id COLLATE "C"`))
  }

  async getPackages(apiIds: readonly string[]): Promise<StoredPackage[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, await this.withProducts(await this.sql.rows<PackageRow>(`${PACKAGES} WHERE k.api_id = ANY($1::text[])`, [apiIds])))
  }

  private async withProducts(rows: PackageRow[]): Promise<StoredPackage[]> {
    if (rows.length === 0) return []
    const products = await this.sql.rows<{api_id: string; package_id: number; product_id: number}>(
      `SELECT pp.package_id, pp.product_id, p.api_id FROM package_products pp JOIN products p ON p.id = pp.product_id
       WHERE pp.package_id = ANY($1::bigint[]) ORDER BY pp.package_id, pp.position`,
      [rows.map((r) => r.id)],
    )
    const byPackage = groupBy(products, (p) => p.package_id)
    return rows.map(({countries_json: countries, ...r}) => {
      const mine = byPackage.get(r.id) ?? []
      return {...r, countries: JSON.parse(countries) as string[], product_ids: mine.map((p) => p.product_id), products: mine.map((p) => p.api_id)}
    })
  }

  async savePackages(defs: readonly PackageDef[], at: string): Promise<SaveResult> {
    const result: SaveResult = {inserted: [], updated: []}
    if (defs.length === 0) return result
    const {sql} = this
    await sql.tx(async () => {
      const old = await this.idsOf('packages', defs.map((d) => d.api_id), ' FOR UPDATE')
      for (const d of defs) {
        let id = old.get(d.api_id)
        if (id === undefined) {
          id = (await unique('package', () => d.api_id, async () =>
            await sql.rows<{id: number}>('INSERT INTO packages (api_id, name, countries_json, audience_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING id', [
              d.api_id, d.name, JSON.stringify(d.countries), d.audience_id, at,
            ]),
          ))[0].id
          old.set(d.api_id, id)
          result.inserted.push(d.api_id)
        } else {
          await sql.run('UPDATE packages SET name = $1, countries_json = $2, audience_id = $3, updated_at = $4 WHERE id = $5', [d.name, JSON.stringify(d.countries), d.audience_id, at, id])
          await sql.run('DELETE FROM package_products WHERE package_id = $1', [id])
          result.updated.push(d.api_id)
        }
        const p = d.product_ids
        if (p.length === 0) continue
        await unique('package product', () => String(p.find((x, i) => p.indexOf(x) !== i) ?? p[0]), async () =>
          await sql.run('INSERT INTO package_products (package_id, product_id, position) SELECT $1, product_id, ord - 1 FROM unnest($2::bigint[]) WITH ORDINALITY AS x(product_id, ord)', [id, p]),
        )
      }
    })
    return result
  }

  async deletePackage(id: number): Promise<void> {
    await this.sql.run('DELETE FROM packages WHERE id = $1', [id])
  }

  // ------------------------------------------------------------ campaigns

  async listCampaigns(): Promise<StoredCampaign[]> {
    return (await this.sql.rows<CampaignRow>(`${CAMPAIGNS} ORDER BY m.api_id COLLATE "C"`)).map((r) => fromCampaignRow(r))
  }

  async getCampaigns(apiIds: readonly string[]): Promise<StoredCampaign[]> {
    if (apiIds.length === 0) return []
    return inOrder(apiIds, (await this.sql.rows<CampaignRow>(`${CAMPAIGNS} WHERE m.api_id = ANY($1::text[])`, [apiIds])).map((r) => fromCampaignRow(r)))
  }

  async addCampaigns(defs: readonly CampaignDef[], at: string): Promise<void> {
    if (defs.length === 0) return
    await this.sql.tx(async () => {
      for (const c of defs) {
        await unique('campaign', () => c.api_id, async () =>
          await this.sql.run(
            `INSERT INTO campaigns (api_id, name, coupon_id, countries_json, audience_id, products_json, active_from, active_till, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
            [c.api_id, c.name, c.coupon_id, JSON.stringify(c.countries), c.audience_id, JSON.stringify(c.products), c.active_from, c.active_till, at],
          ),
        )
      }
    })
  }

  async deleteCampaign(id: number): Promise<void> {
    await this.sql.run('DELETE FROM campaigns WHERE id = $1', [id])
  }
}

function fromCampaignRow({countries_json: countries, products_json: products, ...r}: CampaignRow): StoredCampaign {
  return {...r, countries: JSON.parse(countries) as string[], products: JSON.parse(products) as string[]}
}
