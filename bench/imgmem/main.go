// Command imgmem measures the peak RSS of `trajcompress compress` on JSON
// Lines files whose records each hold a 20 MiB PNG as base64 (package
// imagetok/imagetest makes them): OpenAI image_url data:
// URLs and Anthropic base64 blocks, in the three cases of
// imagetest.Cases (under target, written as read; over target with the
// image in the protected tail, a region summarised and the image kept;
// over target with --drop-old-images removing it), with --workers 1 and
// the default. Each run's peak RSS is /usr/bin/time's %M, as the binary
// runs (its GC target of 400% under a soft limit of 256 MiB lets garbage
// pile up to the limit: on a few records the peak is about what the run
// allocated), and with GOMEMLIMIT=1 (the GC collects whenever it can: the
// peak is about what is held at once); each run's outcomes are checked.
// The base rows are the same command on one record without images: what
// the process holds besides the records. See bench/README.md, "Images".
//
//	go run ./bench/imgmem -bin BIN [-out bench/out/imgmem] [-records 4]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/imagetok/imagetest"
)

func main() {
	bin := flag.String("bin", "bin/trajcompress", "trajcompress binary")
	out := flag.String("out", "bench/out/imgmem", "directory for inputs and outputs")
	records := flag.Int("records", 4, "records per input file")
	flag.Parse()
	if err := run(*bin, *out, *records); err != nil {
		fmt.Fprintln(os.Stderr, "imgmem:", err)
		os.Exit(1)
	}
}

func run(bin, dir string, records int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	img := float64(imagetest.ImageLen())
	fmt.Printf("# %s, %s, %d records a file, image %.1f MB as base64 (%d bytes of PNG)\n\n",
		time.Now().UTC().Format(time.RFC3339), bin, records, img/1e6, len(imagetest.BigPNG()))
	base := filepath.Join(dir, "base.jsonl")
	if err := os.WriteFile(base, imagetest.File("", false, 1), 0o644); err != nil {
		return err
	}
	fmt.Println("| layout | case | --workers | outcome | peak RSS MB | (RSS − base) / image | GOMEMLIMIT=1: peak RSS MB | (RSS − base) / image |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	baseRSS := map[string][2]float64{}
	for _, w := range []string{"1", "default"} {
		rss, err := compress(bin, base, filepath.Join(dir, "base.out.jsonl"), w, []string{"--target-max-tokens", "100000"})
		if err != nil {
			return err
		}
		baseRSS[w] = rss
		fmt.Printf("| base (1 record, no image) | skipped | %s | skipped_under_target | %.0f | | %.0f | |\n", w, rss[0]/1e6, rss[1]/1e6)
	}
	for _, layout := range []string{imagetest.OpenAI, imagetest.Anthropic} {
		for _, c := range imagetest.Cases {
			in := filepath.Join(dir, layout+"-"+c.Name+".jsonl")
			if err := os.WriteFile(in, imagetest.File(layout, c.Old, records), 0o644); err != nil {
				return err
			}
			for _, w := range []string{"1", "default"} {
				outcomes := in + ".outcomes"
				rss, err := compress(bin, in, in+".out", w, append(c.Args, "--outcomes", outcomes))
				if err != nil {
					return err
				}
				data, err := os.ReadFile(outcomes)
				if err != nil {
					return err
				}
				if err := c.Check(data, records); err != nil {
					return fmt.Errorf("%s: %w", layout, err)
				}
				oc := c.Outcome
				if c.Old {
					oc += ", image removed"
				}
				b := baseRSS[w]
				fmt.Printf("| %s | %s | %s | %s | %.0f | %.2f | %.0f | %.2f |\n", layout, c.Name, w, oc,
					rss[0]/1e6, (rss[0]-b[0])/img, rss[1]/1e6, (rss[1]-b[1])/img)
			}
			os.Remove(in)
			os.Remove(in + ".out")
		}
	}
	return nil
}

// compress runs bin compress on in under /usr/bin/time, as it runs and
// with GOMEMLIMIT=1, and returns the two peak RSS in bytes.
func compress(bin, in, out, workers string, args []string) ([2]float64, error) {
	var rss [2]float64
	argv := []string{"-f", "%M", bin, "compress", "--quiet", "--input", in, "--output", out}
	if workers != "default" {
		argv = append(argv, "--workers", workers)
	}
	argv = append(argv, args...)
	for k, env := range []string{"", "GOMEMLIMIT=1"} {
		cmd := exec.Command("/usr/bin/time", argv...)
		cmd.Env = os.Environ()
		if env != "" {
			cmd.Env = append(cmd.Env, env)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return rss, fmt.Errorf("%s %v: %w\n%s", env, argv, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		kb, err := strconv.ParseFloat(lines[len(lines)-1], 64)
		if err != nil {
			return rss, fmt.Errorf("/usr/bin/time: %q", stderr.String())
		}
		rss[k] = kb * 1024
	}
	return rss, nil
}
