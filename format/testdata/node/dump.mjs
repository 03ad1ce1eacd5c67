// dump.mjs: print what a reader nobody on the project wrote (npm hyparquet
// for Parquet, npm apache-arrow for Arrow IPC) sees in a file, as one JSON
// object on stdout, for tests to compare with what they wrote:
//
//   {"columns": {"a.b.c": "BYTE_ARRAY" | "BYTE_ARRAY/STRING" | arrow type, …},
//    "metadata": {key: value, …},
//    "rows": [row, …]}
//
// In rows, binary values (Uint8Array) become {"$bytes": base64} so that a
// binary column can be told from a string column holding base64 text; a
// null struct stays null; bigints become numbers.
//
// usage: node dump.mjs --parquet F.parquet | --arrow F.arrow
import { readFileSync } from 'node:fs'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet'
import { tableFromIPC } from 'apache-arrow'

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]

function norm(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return Number(v)
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('base64') }
  if (Array.isArray(v)) return v.map(norm)
  if (typeof v === 'object') {
    if (typeof v.toArray === 'function' && typeof v.numChildren !== 'undefined') return Array.from(v.toArray(), norm)
    if (typeof v.toJSON === 'function') v = v.toJSON()
    if (Array.isArray(v)) return v.map(norm)
    const out = {}
    for (const [k, x] of Object.entries(v)) out[k] = norm(x)
    return out
  }
  return v
}

const out = { columns: {}, metadata: {}, rows: [] }
if (args.parquet) {
  const file = await asyncBufferFromFile(args.parquet)
  const metadata = await parquetMetadataAsync(file)
  const walk = (node, path) => {
    const p = path.concat(node.element.name)
    if (!node.children.length) {
      const lt = node.element.logical_type?.type ?? node.element.converted_type
      out.columns[p.slice(1).join('.')] = node.element.type + (lt ? '/' + lt : '')
    }
    for (const c of node.children) walk(c, p)
  }
  walk(parquetSchema(metadata), [])
  for (const kv of metadata.key_value_metadata ?? []) out.metadata[kv.key] = kv.value
  // utf8: false keeps a BYTE_ARRAY without a STRING annotation as bytes.
  out.rows = norm(await parquetReadObjects({ file, metadata, utf8: false }))
} else if (args.arrow) {
  const table = tableFromIPC(readFileSync(args.arrow))
  const walk = (f, path) => {
    const p = path.concat(f.name)
    const kids = f.type.children ?? []
    if (!kids.length) out.columns[p.join('.')] = String(f.type)
    for (const c of kids) walk(c, p)
  }
  for (const f of table.schema.fields) walk(f, [])
  for (const [k, v] of table.schema.metadata) out.metadata[k] = v
  for (let i = 0; i < table.numRows; i++) out.rows.push(norm(table.get(i)))
} else {
  console.error('usage: node dump.mjs --parquet F.parquet | --arrow F.arrow')
  process.exit(2)
}
console.log(JSON.stringify(out))
