// verify.mjs: read trajcompress output with readers nobody on the project
// wrote (npm hyparquet for Parquet, npm apache-arrow for Arrow IPC) and
// compare it with the JSONL equivalent: row count, column names (in order)
// and a sample of rows (every row when there are at most 200, else 200
// spread evenly). A null struct field counts as an absent key, the one
// difference Parquet/Arrow cannot carry. Exit 0 on success, 1 on mismatch.
//
// usage: node verify.mjs --jsonl F.jsonl [--parquet F.parquet] [--arrow F.arrow]
import { readFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet'
import { tableFromIPC } from 'apache-arrow'

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.jsonl || (!args.parquet && !args.arrow)) {
  console.error('usage: node verify.mjs --jsonl F.jsonl [--parquet F.parquet] [--arrow F.arrow]')
  process.exit(2)
}

const lines = readFileSync(args.jsonl, 'utf8').split('\n').filter(l => l.trim() !== '')
const want = lines.map(l => JSON.parse(l))
const wantCols = []
for (const r of want) for (const k of Object.keys(r)) if (!wantCols.includes(k)) wantCols.push(k)

// norm: bigint → number, bytes → base64, drop null-valued keys, Arrow
// vectors/rows → plain arrays/objects.
function norm(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return Number(v)
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
  if (Array.isArray(v)) return v.map(norm)
  if (typeof v === 'object') {
    if (typeof v.toArray === 'function' && typeof v.numChildren !== 'undefined') return Array.from(v.toArray(), norm)
    if (typeof v.toJSON === 'function') v = v.toJSON()
    if (Array.isArray(v)) return v.map(norm)
    const out = {}
    for (const [k, x] of Object.entries(v)) {
      const n = norm(x)
      if (n !== null) out[k] = n
    }
    return out
  }
  return v
}

function sampleIdx(n) {
  if (n <= 200) return [...Array(n).keys()]
  return [...Array(200).keys()].map(i => Math.floor(i * (n - 1) / 199))
}

let failures = 0
function check(label, cols, rows) {
  const fail = msg => { failures++; console.error(`FAIL ${label}: ${msg}`) }
  if (rows.length !== want.length) fail(`row count ${rows.length}, JSONL has ${want.length}`)
  if (!isDeepStrictEqual(cols, wantCols)) fail(`columns ${JSON.stringify(cols)}, JSONL keys ${JSON.stringify(wantCols)}`)
  let checked = 0
  for (const i of sampleIdx(Math.min(rows.length, want.length))) {
    const g = norm(rows[i]), w = norm(want[i])
    if (!isDeepStrictEqual(g, w)) {
      fail(`row ${i}:\n  got  ${JSON.stringify(g)}\n  want ${JSON.stringify(w)}`)
      if (failures > 5) break
    }
    checked++
  }
  console.log(`${label}: ${rows.length} rows, ${cols.length} columns, ${checked} rows compared`)
}

if (args.parquet) {
  const file = await asyncBufferFromFile(args.parquet)
  const metadata = await parquetMetadataAsync(file)
  const cols = parquetSchema(metadata).children.map(c => c.element.name)
  const rows = await parquetReadObjects({ file, metadata })
  check(`hyparquet ${args.parquet}`, cols, rows)
}

if (args.arrow) {
  const table = tableFromIPC(readFileSync(args.arrow))
  const fields = table.schema.fields
  // Fields tagged with the canonical arrow.json extension hold JSON text.
  const parseJSON = (v, f) => {
    if (v === null || v === undefined) return v
    if (f.metadata?.get('ARROW:extension:name') === 'arrow.json' && typeof v === 'string') return JSON.parse(v)
    const kids = f.type.children ?? []
    if (Array.isArray(v) && kids.length === 1) return v.map(x => parseJSON(x, kids[0]))
    if (typeof v === 'object' && !Array.isArray(v)) {
      for (const c of kids) if (c.name in v) v[c.name] = parseJSON(v[c.name], c)
    }
    return v
  }
  const rows = []
  for (let i = 0; i < table.numRows; i++) {
    const r = norm(table.get(i))
    for (const f of fields) if (f.name in r) r[f.name] = parseJSON(r[f.name], f)
    rows.push(norm(r))
  }
  check(`apache-arrow ${args.arrow}`, fields.map(f => f.name), rows)
}

if (failures > 0) {
  console.error(`${failures} failure(s)`)
  process.exit(1)
}
console.log('ok')
