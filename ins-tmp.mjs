import Database from 'better-sqlite3'
import {copyFileSync, rmSync} from 'node:fs'
const mode = process.argv[2], cache = Number(process.argv[3] || 40960), batch = Number(process.argv[4] || 50000)
const f = '/tmp/imp/syn.db'; for (const s of ['','-wal','-shm']) rmSync(f+s,{force:true})
copyFileSync('/tmp/imp/base.db', f)
const db = new Database(f); db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('foreign_keys = OFF')
db.pragma(`cache_size = -${cache}`); db.pragma('wal_autocheckpoint = 16384')
if (mode === 'worowid') { db.exec(`DROP TABLE charges; CREATE TABLE charges (user_id TEXT NOT NULL, origin TEXT NOT NULL, origin_id TEXT NOT NULL, product_id INTEGER, country TEXT, created INTEGER, status TEXT NOT NULL, currency TEXT, amount_minor INTEGER, amount_refunded_minor INTEGER NOT NULL DEFAULT 0, amount_usd_minor INTEGER, amount_refunded_usd_minor INTEGER NOT NULL DEFAULT 0, metadata_json TEXT, latest_event_timestamp INTEGER NOT NULL, latest_event_id TEXT NOT NULL, PRIMARY KEY (user_id, origin, origin_id)) WITHOUT ROWID; CREATE INDEX charges_created ON charges (created);`) }
if (mode === 'nounique') { db.exec(`DROP TABLE charges; CREATE TABLE charges (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, origin TEXT NOT NULL, origin_id TEXT NOT NULL, product_id INTEGER, country TEXT, created INTEGER, status TEXT NOT NULL, currency TEXT, amount_minor INTEGER, amount_refunded_minor INTEGER NOT NULL DEFAULT 0, amount_usd_minor INTEGER, amount_refunded_usd_minor INTEGER NOT NULL DEFAULT 0, metadata_json TEXT, latest_event_timestamp INTEGER NOT NULL, latest_event_id TEXT NOT NULL); CREATE INDEX charges_created ON charges (created);`) }
const cols = ['user_id','origin','origin_id','product_id','country','created','status','currency','amount_minor','amount_refunded_minor','amount_usd_minor','amount_refunded_usd_minor','metadata_json','latest_event_timestamp','latest_event_id']
const ins = db.prepare(`INSERT INTO charges (${cols}) VALUES (${cols.map(()=>'?')}) ${mode==='nounique'?'':'ON CONFLICT (user_id, origin, origin_id) DO NOTHING'}`)
let s = 42; const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s }
const A = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const id = (p, n) => { let o = p; for (let i = 0; i < n; i++) o += A[rnd() % 62]; return o }
const users = Array.from({length: 200000}, () => id('cus_', 14))
const rows = []
for (let i = 0; i < 1000000; i++) { const t = 1782691675 - i*29; rows.push([users[rnd()%200000], 'gateway_a', id('ch_3', 23), 1, null, t, 'succeeded', 'USD', 999, 0, 999, 0, null, t, 'import:' + t]) }
const sortRun = Number(process.argv[5] || 0)
const cmp = (a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0
if (sortRun) for (let i = 0; i < rows.length; i += sortRun) { const part = rows.slice(i, i + sortRun).sort(cmp); for (let j = 0; j < part.length; j++) rows[i + j] = part[j] }
const t0 = performance.now(); let ex = 0
for (let b = 0; b < rows.length; b += batch) { const e0 = performance.now(); db.exec('BEGIN IMMEDIATE'); ex += performance.now()-e0; const end = Math.min(rows.length, b + batch); for (let i = b; i < end; i++) ins.run(...rows[i]); const e1 = performance.now(); db.exec('COMMIT'); ex += performance.now()-e1 }
const t1 = performance.now(); db.close()
console.log(mode, 'cache', cache, 'batch', batch, 'total', ((t1-t0)/1000).toFixed(2), 's commits', (ex/1000).toFixed(2), 'close', ((performance.now()-t1)/1000).toFixed(2), 'rss', (process.resourceUsage().maxRSS/1024).toFixed(0), 'MB', 'sort', sortRun)
