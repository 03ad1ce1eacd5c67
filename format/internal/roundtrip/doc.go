// Package roundtrip holds only tests: cross-format round trips
// (JSONL → Parquet → Arrow → JSONL) over format/parquet and format/arrow,
// and the check of their output with readers nobody on the project wrote
// (npm hyparquet and apache-arrow, driven by format/testdata/node).
//
// The Node check skips with a message when `node` is not installed or
// `npm ci` cannot install the pinned packages (offline machines); set
// TRAJCOMPRESS_REQUIRE_NODE=1 to make those conditions fail instead.
package roundtrip
