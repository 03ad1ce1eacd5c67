module github.com/trajcompress/trajcompress

go 1.26.0

require (
	github.com/apache/arrow/go/v17 v17.0.0
	github.com/ardanlabs/jinja v1.8.0
	github.com/dlclark/regexp2 v1.10.0
	github.com/google/flatbuffers v24.3.25+incompatible
	github.com/klauspost/compress v1.17.9
	github.com/parquet-go/parquet-go v0.32.0
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/ulikunitz/xz v0.5.17
	github.com/zeebo/xxh3 v1.0.2
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/image v0.18.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.46.0
	golang.org/x/term v0.44.0
	golang.org/x/text v0.16.0
	golang.org/x/time v0.16.0
)

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/goccy/go-json v0.10.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.8 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/parquet-go/bitpack v1.0.0 // indirect
	github.com/parquet-go/jsonlite v1.0.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/twpayne/go-geom v1.6.1 // indirect
	golang.org/x/exp v0.0.0-20240222234643-814bf88cf225 // indirect
	golang.org/x/mod v0.35.0 // indirect
	golang.org/x/telemetry v0.0.0-20260409153401-be6f6cb8b1fa // indirect
	golang.org/x/tools v0.44.1-0.20260420230617-19499e7caabc // indirect
	golang.org/x/xerrors v0.0.0-20231012003039-104605ab7028 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)

// ardanlabs/jinja v1.8.0 patched to raise where Python jinja2 raises (third_party/jinja/PATCHES.md).
replace github.com/ardanlabs/jinja => ./third_party/jinja
