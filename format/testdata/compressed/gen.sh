#!/usr/bin/env bash
# Makes the compressed fixtures of TestCompressedRoundTrip from
# records.jsonl with the reference command-line tools, each file as two
# members/frames/streams (the records split in two halves, compressed
# apart and concatenated), so that reading stops at no inner end.
#   gzip 1.x, zstd 1.x, bzip2 1.0.x, xz 5.x
set -euo pipefail
cd "$(dirname "$0")"
head -n 30 records.jsonl > /tmp/gen.a
tail -n +31 records.jsonl > /tmp/gen.b
for c in "gzip -9 -n:gz" "zstd -q -19:zst" "bzip2 -9:bz2" "xz -6:xz"; do
	cmd=${c%%:*} ext=${c##*:}
	{ $cmd -c < /tmp/gen.a; $cmd -c < /tmp/gen.b; } > records.jsonl.$ext
done
# A JSON array, zstd-compressed.
python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open("records.jsonl") if l.strip()], indent=1, ensure_ascii=False))' | zstd -q -19 -c > array.json.zst
rm -f /tmp/gen.a /tmp/gen.b
