import type {Adoption, ArmCounts, Experiment, ExperimentDef, ExperimentProduct, ExperimentsRepository, Exposure, ExposureChange, Status} from '../port/experiments.js'
import {experimentFromRecord, type ExperimentRecord} from '../rows.js'
import type {PgStore} from './store.js'
import {groupBy, int, repeats, type Sql} from './support.js'

type Row = ExperimentRecord

const SELECT = `SELECT e.id, e.name, e.type, e.status, e.allocation, e.audience_id, a.api_id AS audience, e.countries_json, e.seed,
  e.created_at, e.updated_at, e.started_at, e.stopped_at FROM experiments e LEFT JOIN audiences a ON a.id = e.audience_id`
const PRODUCT = 'p.id, p.api_id, p.base_px_minor, p."interval", p.interval_count, p.min_px_minor, p.max_px_minor'

/**
 * A chunk's exposures in one statement (no visitor twice: ON CONFLICT cannot touch a row
 * twice): a new visitor's row is added, a visitor moved to another arm starts the exposure
 * again (an override), and each answers its arm before (null: a new visitor), in order.
 * The arm before is a lookup by primary key per visitor: a join would let the planner scan
 * the table, which it does while the table is young (no statistics) and then keeps in the
 * named statement's plan.
 */
const EXPOSE = `WITH x AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::bigint[]) WITH ORDINALITY
    AS x(experiment_id, user_id, anonymous, arm_id, exposed_at, n)),
  w AS (INSERT INTO exposures (experiment_id, user_id, anonymous, arm_id, exposed_at)
    SELECT experiment_id, user_id, anonymous, arm_id, exposed_at FROM x ORDER BY experiment_id, user_id
    ON CONFLICT (experiment_id, user_id) DO UPDATE SET arm_id = excluded.arm_id, anonymous = excluded.anonymous, exposed_at = excluded.exposed_at
    WHERE exposures.arm_id <> excluded.arm_id)
  SELECT (SELECT e.arm_id FROM exposures e WHERE e.experiment_id = x.experiment_id AND e.user_id = x.user_id) AS arm_id FROM x ORDER BY x.n`

/** What an exposure changed, from the visitor's arm before it. */
function changeOf(previous: null | string | undefined, arm: string): ExposureChange {
  if (previous === null || previous === undefined) return {change: 'new'}
  return previous === arm ? {change: 'same'} : {change: 'moved', previous}
}

/** EXPOSE's parameters. */
function exposeColumns(exposures: readonly Exposure[]): unknown[][] {
  return [exposures.map((x) => x.experimentId), exposures.map((x) => x.visitor), exposures.map((x) => (x.anonymous ? 1 : 0)), exposures.map((x) => x.armId), exposures.map((x) => x.at)]
}

/** PostgreSQL adapter of the experiments repository (the same semantics as ../sqlite/experiments.ts). */
export class PgExperiments implements ExperimentsRepository {
  constructor(
    private readonly sql: Sql,
    private readonly store: PgStore,
  ) {}

  /** Several writes land together; one (or one inside a caller's transaction) needs no transaction of its own. */
  private async chunk<T>(fn: () => Promise<T>, n: number): Promise<T> {
    return n <= 1 || this.sql.inTransaction() ? fn() : await this.sql.tx(fn)
  }

  private async hydrate(rows: Row[]): Promise<Experiment[]> {
    if (rows.length === 0) return []
    const ids = rows.map((r) => r.id)
    const products = groupBy(
      await this.sql.rows<ExperimentProduct & {experiment_id: number}>(
        `SELECT ep.experiment_id, ${PRODUCT} FROM experiment_products ep JOIN products p ON p.id = ep.product_id
         WHERE ep.experiment_id = ANY($1::bigint[]) ORDER BY ep.experiment_id, ep.position`,
        [ids],
      ),
      (p) => p.experiment_id,
    )
    const arms = groupBy(
      await this.sql.rows<{arm_id: string; experiment_id: number; multiplier: null | number; products_json: null | string; usd_price_minor: null | number}>(
        'SELECT experiment_id, arm_id, multiplier, usd_price_minor, products_json FROM arms WHERE experiment_id = ANY($1::bigint[]) ORDER BY experiment_id, position',
        [ids],
      ),
      (a) => a.experiment_id,
    )
    return rows.map((r) => experimentFromRecord(r, arms.get(r.id) ?? [], products.get(r.id) ?? []))
  }

  async get(ids: readonly number[]): Promise<(Experiment | undefined)[]> {
    if (ids.length === 0) return []
    const found = new Map((await this.hydrate(await this.sql.rows<Row>(`${SELECT} WHERE e.id = ANY($1::bigint[]) ORDER BY e.id`, [ids]))).map((e) => [e.id, e]))
    return ids.map((id) => found.get(id))
  }

  async list(status?: Status): Promise<Experiment[]> {
    return await this.hydrate(status ? await this.sql.rows<Row>(`${SELECT} WHERE e.status = $1 ORDER BY e.id`, [status]) : await this.sql.rows<Row>(`${SELECT} ORDER BY e.id`))
  }

  private async writeParts(id: number, def: ExperimentDef): Promise<void> {
    const {sql} = this
    await sql.run('DELETE FROM experiment_products WHERE experiment_id = $1', [id])
    await sql.run('DELETE FROM arms WHERE experiment_id = $1', [id])
    if (def.product_ids.length > 0) {
      await sql.run('INSERT INTO experiment_products (experiment_id, product_id, position) SELECT $1, product_id, ord - 1 FROM unnest($2::bigint[]) WITH ORDINALITY AS x(product_id, ord)', [id, def.product_ids])
    }
    if (def.arms.length > 0) {
      const a = def.arms
      await sql.run(
        `INSERT INTO arms (experiment_id, arm_id, position, multiplier, usd_price_minor, products_json)
         SELECT $1, arm_id, ord - 1, multiplier, usd, products FROM unnest($2::text[], $3::float8[], $4::bigint[], $5::text[]) WITH ORDINALITY AS x(arm_id, multiplier, usd, products, ord)`,
        [id, a.map((x) => x.id), a.map((x) => x.multiplier), a.map((x) => x.usd_price_minor), a.map((x) => (x.products === null ? null : JSON.stringify(x.products)))],
      )
    }
  }

  async insert(defs: readonly ExperimentDef[], now: string): Promise<number[]> {
    return await this.sql.tx(async () => {
      const ids: number[] = []
      for (const def of defs) {
        const [{id}] = await this.sql.rows<{id: number}>(
          `INSERT INTO experiments (name, type, status, allocation, audience_id, countries_json, seed, created_at, updated_at)
           VALUES ($1, $2, 'draft', $3, $4, $5, $6, $7, $7) RETURNING id`,
          [def.name, def.type, def.allocation, def.audience_id, JSON.stringify(def.countries), def.seed, now],
        )
        await this.writeParts(id, def)
        ids.push(id)
      }
      return ids
    })
  }

  async replace(id: number, def: ExperimentDef, now: string): Promise<void> {
    await this.sql.tx(async () => {
      await this.sql.run('UPDATE experiments SET name = $1, type = $2, allocation = $3, audience_id = $4, countries_json = $5, seed = $6, updated_at = $7 WHERE id = $8', [
        def.name, def.type, def.allocation, def.audience_id, JSON.stringify(def.countries), def.seed, now, id,
      ])
      await this.writeParts(id, def)
    })
  }

  async setStatus(ids: readonly number[], status: Status, now: string): Promise<void> {
    if (ids.length === 0) return
    // One statement, in id order (each row's write is recorded in the history in that order).
    if (status === 'running') {
      await this.sql.run("UPDATE experiments SET status = 'running', started_at = coalesce(started_at, $1), stopped_at = NULL, updated_at = $1 WHERE id = ANY($2::bigint[])", [now, ids])
    } else {
      await this.sql.run('UPDATE experiments SET status = $1, stopped_at = $2, updated_at = $3 WHERE id = ANY($4::bigint[])', [status, status === 'stopped' ? now : null, now, ids])
    }
  }

  async remove(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) await this.sql.run('DELETE FROM experiments WHERE id = ANY($1::bigint[])', [ids])
  }

  async audienceIds(apiIds: readonly string[]): Promise<Map<string, number>> {
    if (apiIds.length === 0) return new Map()
    const rows = await this.sql.rows<{api_id: string; id: number}>('SELECT api_id, id FROM audiences WHERE api_id = ANY($1::text[])', [apiIds])
    const found = new Map(rows.map((r) => [r.api_id, r.id]))
    return new Map(apiIds.flatMap((a) => (found.has(a) ? [[a, found.get(a)!] as const] : [])))
  }

  async productsByApiId(apiIds: readonly string[]): Promise<Map<string, ExperimentProduct>> {
    if (apiIds.length === 0) return new Map()
    const rows = await this.sql.rows<ExperimentProduct>(`SELECT ${PRODUCT} FROM products p WHERE p.api_id = ANY($1::text[])`, [apiIds])
    return new Map(rows.map((r) => [r.api_id, r]))
  }

  async productNamed(text: string): Promise<boolean> {
    return (await this.sql.rows('SELECT 1 FROM products WHERE api_id = $1 OR name = $1 LIMIT 1', [text])).length > 0
  }

  async runningOn(productIds: readonly number[], except: number): Promise<{id: number; name: string}[]> {
    if (productIds.length === 0) return []
    return await this.sql.rows<{id: number; name: string}>(
      `SELECT DISTINCT e.id, e.name FROM experiments e JOIN experiment_products ep ON ep.experiment_id = e.id
       WHERE e.status = 'running' AND e.id <> $1 AND ep.product_id = ANY($2::bigint[]) ORDER BY e.id`,
      [except, productIds],
    )
  }

  async recordExposure(x: Exposure): Promise<ExposureChange> {
    return (await this.recordExposures([x]))[0]
  }

  /**
   * One statement (EXPOSE) for a chunk, one per exposure when a visitor comes twice. In a
   * lock-writing transaction (serve's new users, a `price --input` group) the exposures of
   * the visitors whose new lock it claimed need no write lock: no other writer makes their
   * row, since a claim that loses takes its transaction's exposures with it. They go after
   * the claims, in the same round trip. Any other exposure runs the transaction again with
   * the write lock.
   */
  async recordExposures(exposures: readonly Exposure[]): Promise<ExposureChange[]> {
    if (exposures.length === 0) return []
    const key = (x: Exposure) => `${x.experimentId}\t${x.visitor}`
    const store = this.store
    if (store.writingLocks && store.inside) {
      const other = exposures.find((x) => !store.claimed.has(x.visitor))
      if (other) store.needsWriteLock(`the exposure of ${other.visitor} without a new lock`)
      if (repeats(exposures, key)) store.needsWriteLock(`${exposures.length} exposures that name a visitor twice`)
      const [rows] = (await store.send({rowMode: 'array', text: EXPOSE, values: exposeColumns(exposures)})) as [null | string][][]
      return exposures.map((x, i) => changeOf(rows[i][0], x.armId))
    }
    if (repeats(exposures, key)) return await this.chunk(async () => {
      const changes: ExposureChange[] = []
      for (const x of exposures) changes.push(await this.recordExposure(x))
      return changes
    }, exposures.length)
    const rows = await this.sql.rows<{arm_id: null | string}>(EXPOSE, exposeColumns(exposures))
    return exposures.map((x, i) => changeOf(rows[i].arm_id, x.armId))
  }

  async exposuresOf(experimentId: number, visitors: readonly string[]): Promise<(string | undefined)[]> {
    if (visitors.length === 0) return []
    const rows = await this.sql.rows<{arm_id: string; user_id: string}>('SELECT user_id, arm_id FROM exposures WHERE experiment_id = $1 AND user_id = ANY($2::text[])', [experimentId, visitors])
    const arms = new Map(rows.map((r) => [r.user_id, r.arm_id]))
    return visitors.map((v) => arms.get(v))
  }

  async adoptExposures(adoptions: readonly Adoption[]): Promise<void> {
    if (adoptions.length === 0) return
    await this.chunk(async () => {
      for (const a of adoptions) {
        // The anonymous exposure moves to the user, or is dropped where the user has one.
        const moved = await this.sql.run(
          `UPDATE exposures SET user_id = $1, anonymous = 0 WHERE experiment_id = $2 AND user_id = $3 AND anonymous = 1
           AND NOT EXISTS (SELECT 1 FROM exposures x WHERE x.experiment_id = $2 AND x.user_id = $1)`,
          [a.userId, a.experimentId, a.ip],
        )
        if (moved === 0) await this.sql.run('DELETE FROM exposures WHERE experiment_id = $1 AND user_id = $2 AND anonymous = 1', [a.experimentId, a.ip])
      }
    }, adoptions.length)
  }

  async armCounts(experimentId: number): Promise<Map<string, ArmCounts>> {
    const out = new Map<string, ArmCounts>()
    for (const v of await this.sql.rows<{arm_id: string; n: number}>('SELECT arm_id, count(*)::int AS n FROM exposures WHERE experiment_id = $1 GROUP BY arm_id', [experimentId])) {
      out.set(v.arm_id, {conversions: 0, revenue_minor: 0, visitors: v.n})
    }
    const conversions = await this.sql.rows<{arm_id: string; conversions: number; revenue: number | string}>(
      `SELECT arm_id, count(DISTINCT user_id)::int AS conversions, coalesce(sum(value), 0)::bigint AS revenue FROM (
        SELECT e.arm_id, e.user_id, coalesce(s.amount_usd_monthly_minor, s.amount_usd_minor, 0) AS value
          FROM exposures e JOIN subscriptions s ON s.user_id = e.user_id
          WHERE e.experiment_id = $1 AND e.anonymous = 0 AND s.status <> 'pending'
            AND s.product_id IN (SELECT product_id FROM experiment_products WHERE experiment_id = $1)
            AND (s.created IS NULL OR s.created >= e.exposed_at)
        UNION ALL
        SELECT e.arm_id, e.user_id, coalesce(c.amount_usd_minor, 0) - c.amount_refunded_usd_minor AS value
          FROM exposures e JOIN charges c ON c.user_id = e.user_id
          WHERE e.experiment_id = $1 AND e.anonymous = 0 AND c.status = 'succeeded'
            AND c.product_id IN (SELECT product_id FROM experiment_products WHERE experiment_id = $1)
            AND (c.created IS NULL OR c.created >= e.exposed_at)
      ) v GROUP BY arm_id`,
      [experimentId],
    )
    for (const c of conversions) {
      const row = out.get(c.arm_id) ?? {conversions: 0, revenue_minor: 0, visitors: 0}
      row.conversions = c.conversions
      row.revenue_minor = int(c.revenue)
      out.set(c.arm_id, row)
    }
    return out
  }
}
