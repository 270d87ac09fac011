import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {openStore} from '/work/main/src/store/db.js'
import {createProduct} from '/work/main/src/catalog/products.js'
import {simulate, parseDemand} from '/work/main/src/experiments/simulate.js'

const store = openStore(join(mkdtempSync(join(tmpdir(), 'sim-')), 's.db'))
createProduct(store.db, {api_id: 'p', name: 'P', base_px: 10, interval: 'month', interval_count: 1})
const demand = parseDemand(process.argv[2] ?? '7.99=0.11,10=0.10,12.99=0.06')
let ok = 0
const t = Date.now()
async function main() {
for (let seed = 1; seed <= Number(process.argv[3] ?? 5); seed++) {
  const r = await simulate(store.db, {arms: [{multiplier: 0.8}, {multiplier: 1.3}], demand, product: "p", seed, visitors: 5000, batch: Number(process.argv[4] ?? 100)})
  const th = r.policies.thompson!, un = r.policies.uniform!
  const pass = th.best_arm_share_last >= 0.6 && th.revenue >= un.revenue
  if (pass) ok++
  console.log(seed, JSON.stringify(th.allocation), r.best_arm, JSON.stringify(r.arms.map(a => [a.arm_id, a.price_usd, a.true_revenue_per_visitor])), th.best_arm_share_last, th.revenue, un.revenue, r.policies.oracle.revenue, pass, Date.now() - t)
}
console.log("ok", ok)
}
main()
