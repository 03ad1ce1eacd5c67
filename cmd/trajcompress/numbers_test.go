package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadNumbersAreUsageErrors: a price that is NaN, infinite or negative
// and a shard count below 1 or a negative shard index are usage errors
// (exit 2) that write nothing, not even a run directory. A NaN price was
// written into the run manifest, whose JSON then failed (a 1-byte file)
// and broke every later run on the same output.
func TestBadNumbersAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--price-in", "NaN"}, "--price-in"},
		{[]string{"--price-out", "NaN"}, "--price-out"},
		{[]string{"--price-in", "Inf"}, "--price-in"},
		{[]string{"--price-out", "+Inf"}, "--price-out"},
		{[]string{"--price-in", "-1"}, "--price-in"},
		{[]string{"--num-shards", "0"}, "--num-shards"},
		{[]string{"--num-shards", "-2"}, "--num-shards"},
		{[]string{"--shard", "-1", "--num-shards", "2"}, "--shard"},
		{[]string{"--shard", "-3"}, "--shard"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir, in := smallInput(t)
			var stderr bytes.Buffer
			args := append([]string{"compress", "--quiet", "--input", in}, c.args...)
			if code := run(context.Background(), args, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.msg) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", code, exitUsage, stderr.String(), c.msg)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("written: %v", names)
			}
		})
	}
	// The prices that are fine still are.
	_, in := smallInput(t)
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--price-in", "0.15", "--price-out", "0"}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("good prices: exit %d", code)
	}
	_ = filepath.Join
}

// TestWholeFilesAreSizeChecked: a file read whole (config, tokenizer,
// metrics, baseline) that is /dev/zero is a usage error naming it and the
// limit; before, it was read until memory ran out (a crash with a
// goroutine dump).
func TestWholeFilesAreSizeChecked(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir, in := smallInput(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"compress", "--quiet", "--input", in, "--config", "/dev/zero"}, "/dev/zero: more than 16 MiB, over the limit of 16 MiB for a config file"},
		{[]string{"compress", "--quiet", "--input", in, "--tokenizer", "/dev/zero"}, "/dev/zero: more than 256 MiB, over the limit of 256 MiB for a tokenizer file"},
		{[]string{"check", "--baseline", "/dev/zero", "/dev/zero"}, "over the limit of 256 MiB for a metrics file"},
		{[]string{"report", "--output", filepath.Join(dir, "r.html"), "/dev/zero"}, "/dev/zero: more than 256 MiB, over the limit of 256 MiB for a metrics file"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), c.args, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, want %d; stderr %q, want %q", c.args, code, exitUsage, stderr.String(), c.msg)
		}
	}
}
