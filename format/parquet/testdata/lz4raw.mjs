// lz4raw.mjs makes lz4raw_uuid_md5_v1.parquet and _v2.parquet with DuckDB
// (npm @duckdb/node-api 1.5.6-r.1, DuckDB v1.5.6):
//   npm install @duckdb/node-api@1.5.6-r.1 && node lz4raw.mjs .
// LZ4_RAW pages of uuid and md5 columns, which compress less than 3:1
// (see ../lz4raw.go); 300 rows, as data pages v1
// and v2.
import { DuckDBInstance } from '@duckdb/node-api';
const out = process.argv[2];
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
await c.run(`CREATE TABLE t (id BIGINT NOT NULL, u UUID NOT NULL, u_text VARCHAR, m VARCHAR, mb BLOB, mb_hex VARCHAR)`);
await c.run(`INSERT INTO t SELECT i, u, u::VARCHAR, CASE WHEN i % 7 = 0 THEN NULL ELSE md5(i::VARCHAR) END,
  unhex(md5(i::VARCHAR)), md5(i::VARCHAR) FROM (SELECT i, uuid() AS u FROM range(300) r(i))`);
for (const v of ['V1', 'V2']) {
  await c.run(`COPY (SELECT * FROM t ORDER BY id) TO '${out}/lz4raw_uuid_md5_${v.toLowerCase()}.parquet' (FORMAT parquet, COMPRESSION lz4_raw, PARQUET_VERSION ${v})`);
}
const r = await c.runAndReadAll(`SELECT * FROM parquet_metadata('${out}/lz4raw_uuid_md5_v2.parquet') LIMIT 3`);
console.log((await c.runAndReadAll('select version()')).getRows(), r.getRowObjects().map(o => [o.path_in_schema, o.compression, o.type]));
