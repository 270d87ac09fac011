import Database from 'better-sqlite3'
import {copyFileSync, rmSync} from 'node:fs'
const mode = process.argv[2]
const f = '/tmp/imp/syn.db'; for (const s of ['','-wal','-shm']) rmSync(f+s,{force:true})
copyFileSync(process.env.BASE ?? '/tmp/imp/base.db', f)
const db = new Database(f); db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('foreign_keys = OFF')
db.pragma('cache_size = -40960'); db.pragma('wal_autocheckpoint = 65536')
const cols = ['user_id','origin','origin_id','product_id','country','created','status','currency','amount_minor','amount_refunded_minor','amount_usd_minor','amount_refunded_usd_minor','metadata_json','latest_event_timestamp','latest_event_id']
const ins = db.prepare(`INSERT INTO charges (${cols}) VALUES (${cols.map(()=>'?')}) ON CONFLICT (user_id, origin, origin_id) DO NOTHING`)
const bulk = db.prepare(`INSERT INTO charges (${cols}) SELECT ${cols.map((c, i) => `value ->> ${i}`).join(', ')} FROM json_each(?) WHERE true ON CONFLICT (user_id, origin, origin_id) DO NOTHING`)
let s = 42; const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s }
const A = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const id = (p, n) => { let o = p; for (let i = 0; i < n; i++) o += A[rnd() % 62]; return o }
const users = Array.from({length: 200000}, () => id('cus_', 14))
const chunks = []
for (let c = 0; c < 250; c++) { const rows = []; for (let i = 0; i < 4000; i++) { const t = 1782691675 - (c*4000+i)*29; rows.push([users[rnd()%200000], 'gateway_a', id('ch_3', 23), 1, null, t, 'succeeded', 'USD', 999, 0, 999, 0, null, t, 'import:' + t]) } rows.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0); chunks.push(mode === 'json' ? JSON.stringify(rows) : rows) }
const t0 = performance.now(); let n = 0
db.exec('BEGIN IMMEDIATE')
for (const [ci, ch] of chunks.entries()) {
  if (ci % 62 === 61) { db.exec('COMMIT'); db.exec('BEGIN IMMEDIATE') }
  if (mode === 'json') n += bulk.run(ch).changes
  else for (const r of ch) n += ins.run(...r).changes
}
db.exec('COMMIT')
const t1 = performance.now(); db.close()
console.log(mode, 'inserted', n, 'total', ((t1-t0)/1000).toFixed(2), 's close', ((performance.now()-t1)/1000).toFixed(2))
