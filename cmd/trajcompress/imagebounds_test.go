package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pngDeclaring is a PNG signature and IHDR chunk declaring a w×h image
// (its pixels never follow: sizes are read from the header alone).
func pngDeclaring(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 2, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}

// A preprocessor_config.json whose numbers no model has is refused at
// load, with one line naming the file and the field, exit 2: patch_size
// and merge_size of 65536 made counting divide by zero (a panic, exit 2
// as "usage"), and max_pixels near 2^63 with a PNG declaring 2^31−1
// squared pixels made the record's tokens_before −9,223,372,036,854,773,342
// with exit 0.
func TestPreprocessorConfigOutOfRangeRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "huge.png"), pngDeclaring(1<<31-1, 1<<31-1), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	rec := `{"messages": [{"role": "user", "content": "<image>look"}, {"role": "assistant", "content": "ok"}], "images": ["huge.png"]}` + "\n"
	if err := os.WriteFile(in, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ config, want string }{
		{`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 65536, "merge_size": 65536}`, "patch_size is 65536: want a whole number from 1 to 1024"},
		{`{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 1, "merge_size": 4294967296}`, "merge_size is 4294967296"},
		{`{"image_processor_type": "Qwen2VLImageProcessor", "max_pixels": 9223372036854775000}`, "max_pixels (size.longest_edge) is 9223372036854775000"},
	} {
		model := t.TempDir()
		byteLevelTokenizer(t, model)
		pp := filepath.Join(model, "preprocessor_config.json")
		if err := os.WriteFile(pp, []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", filepath.Join(t.TempDir(), "out.jsonl"),
			"--tokenizer", model, "--chat-template", "none"}, nil, io.Discard, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != exitUsage || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, pp) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and one line naming %s and %q", c.config, code, msg, pp, c.want)
		}
	}
}
