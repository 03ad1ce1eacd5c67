# Sourced by the bench scripts that run trajcompress over the real data (bench/prepass,
# bench/retention): `realdata NAME` sets root, real (../shared/data/real, or $REAL) and out
# (bench/out/NAME), builds trajcompress into $out, prints the commit, and exits 0 when the real
# data is absent.
realdata() {
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cd "$root"
	real=${REAL:-$root/../shared/data/real}
	if [ ! -d "$real" ]; then echo "real data absent ($real): nothing to measure"; exit 0; fi
	out=bench/out/$1
	mkdir -p "$out"
	go build -o "$out/trajcompress" ./cmd/trajcompress
	echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD), args: ${ARGS:-none}"
}
