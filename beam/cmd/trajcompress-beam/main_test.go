package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/trajcompress/trajcompress/config"
)

// TestMain runs the pipelines of this package on prism, in process.
func TestMain(m *testing.M) { os.Exit(ptest.MainRet(m)) }

// repoRoot is the main module's directory.
const repoRoot = "../../.."

// compressHelp is the -h text of `trajcompress compress`, kept true by
// cmd/trajcompress's TestHelpGolden.
const compressHelp = repoRoot + "/cmd/trajcompress/testdata/help/compress.txt"

// compressFlags are the flag names compress's -h lists.
func compressFlags(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(compressHelp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^  -([a-z][a-z0-9-]*)( \S+)?$`)
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) < 40 {
		t.Fatalf("%s lists %d flags: not compress's help", compressHelp, len(names))
	}
	return names
}

// TestCompressParity: every flag of `trajcompress compress` is a flag of
// the Beam main with the same name (and, for a config setting, the same
// text: both come from config's option groups), or is listed in
// notApplying with the reason; notApplying names no flag the Beam main
// has and none compress lacks.
func TestCompressParity(t *testing.T) {
	names := compressFlags(t)
	for _, n := range names {
		reason, listed := notApplying[n]
		beamFlag := flag.CommandLine.Lookup(n)
		switch {
		case beamFlag != nil && listed:
			t.Errorf("--%s is a flag of the Beam main and listed as not applying (%s)", n, reason)
		case beamFlag == nil && !listed:
			t.Errorf("compress --%s has no Beam equivalent: add its option group to groups, a flag of that name, or an entry in notApplying with the reason", n)
		case listed && strings.TrimSpace(reason) == "":
			t.Errorf("--%s is listed as not applying without a reason", n)
		}
	}
	for n := range notApplying {
		if !slices.Contains(names, n) {
			t.Errorf("notApplying lists --%s, which compress does not have", n)
		}
	}
	// The option groups compress registers are all in its help (so the
	// list above is the whole of compress's settings).
	for _, n := range config.Names(config.CompressGroups...) {
		if !slices.Contains(names, n) {
			t.Errorf("config.CompressGroups has --%s, which %s lacks (run cmd/trajcompress's TestHelpGolden -update)", n, compressHelp)
		}
	}
	// Same text as compress's for every setting they share.
	help, err := os.ReadFile(compressHelp)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		for _, o := range g.Options {
			if f := flag.CommandLine.Lookup(o.Name); f == nil || f.Usage != o.Usage || !bytes.Contains(help, []byte(o.Usage)) {
				t.Errorf("--%s: the Beam main's text differs from compress's", o.Name)
			}
		}
	}
}

// setFlags sets the Beam main's flags as a command line would.
func setFlags(t *testing.T, kv ...string) {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := flag.Set(kv[i], kv[i+1]); err != nil {
			t.Fatalf("--%s %s: %v", kv[i], kv[i+1], err)
		}
	}
}

// cli is the trajcompress CLI the Beam runs are compared with:
// $TRAJCOMPRESS_BIN (make test-beam builds it), or one built here with go
// build in the main module.
func cli(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TRAJCOMPRESS_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trajcompress")
	build := exec.Command("go", "build", "-o", path, "./cmd/trajcompress")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("TRAJCOMPRESS_BIN is unset and go build ./cmd/trajcompress failed: %v\n%s", err, out)
	}
	return path
}

// metricsDoc is a metrics file as JSON.
func metricsDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// records are the non-empty lines of the .jsonl files under dir but
// rejects.jsonl, sorted (the Beam run's part files are in the runner's
// order).
func records(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || d.Name() == "rejects.jsonl" || strings.HasSuffix(p, "_rejects.jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestMainEqualsCLI: the Beam main takes compress's settings as compress
// does — a trainer config (its model, its cutoff_len as the target,
// LLaMA-Factory's alternation, counted by its template), the prepass, an
// image rule and --drop-old-images — and writes the records the CLI
// writes with the same flags: on the bundled example with a LLaMA-Factory
// config, and on the WebVoyager screenshots.
func TestMainEqualsCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs two Beam pipelines and the CLI")
	}
	bin := cli(t)
	dir := t.TempDir()
	lf := filepath.Join(dir, "lf.yaml")
	if err := os.WriteFile(lf, []byte("stage: sft\ntemplate: chatml\ncutoff_len: 5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, input string
		settings    []string // flag, value: given to both
		check       func(t *testing.T, cfg config.Config)
	}{
		{"trainer config and prepass", repoRoot + "/fixtures/example/agent_runs.jsonl.gz",
			[]string{"trainer-config", lf, "tokenizer", "o200k_base", "prepass", "true", "summary-target-tokens", "300", "image-tokens", "auto", "drop-old-images", "false"},
			func(t *testing.T, cfg config.Config) {
				if cfg.Compression.TargetMaxTokens != 5000 || !cfg.Output.Alternation || cfg.Tokenizer.TrainerConfig != lf {
					t.Errorf("the trainer config is not applied: target %d, alternation %v", cfg.Compression.TargetMaxTokens, cfg.Output.Alternation)
				}
			}},
		{"images", repoRoot + "/fixtures/multimodal/webvoyager/records.jsonl",
			[]string{"trainer-config", "", "tokenizer", "o200k_base", "prepass", "false", "summary-target-tokens", "300", "image-tokens", "flat:1000", "drop-old-images", "true", "target-max-tokens", "5000"},
			func(t *testing.T, cfg config.Config) {
				if cfg.Tokenizer.ImageTokens != "flat:1000" || !cfg.Compression.DropOldImages {
					t.Errorf("the image settings are not applied: %+v", cfg.Tokenizer)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := filepath.Abs(tc.input)
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			cliOut := filepath.Join(work, "cli", "out.jsonl")
			if err := os.MkdirAll(filepath.Dir(cliOut), 0o755); err != nil {
				t.Fatal(err)
			}
			cliMetrics := filepath.Join(work, "cli-metrics.json")
			args := []string{"compress", "--quiet", "--input", in, "--output", cliOut, "--metrics", cliMetrics}
			for i := 0; i+1 < len(tc.settings); i += 2 {
				args = append(args, "--"+tc.settings[i]+"="+tc.settings[i+1])
			}
			var cliErr bytes.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Stderr = &cliErr
			if err := cmd.Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 3 {
					t.Fatalf("trajcompress %s: %v\n%s", strings.Join(args, " "), err, cliErr.String())
				}
			}

			beamOut := filepath.Join(work, "beam")
			setFlags(t, append([]string{"input", in, "output", beamOut}, tc.settings...)...)
			cfg, err := effectiveConfig(new(bytes.Buffer))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
			var stderr bytes.Buffer
			if code := run(context.Background(), &stderr); code != 0 && code != 3 {
				t.Fatalf("beam main: exit %d\n%s", code, stderr.String())
			}
			cliRecs := records(t, filepath.Dir(cliOut))
			beamRecs := records(t, beamOut)
			if len(cliRecs) == 0 || !slices.Equal(cliRecs, beamRecs) {
				t.Errorf("records differ: CLI %d, Beam %d", len(cliRecs), len(beamRecs))
			}
			// The same outcomes, trainer and image figures in the metrics:
			// a setting one run did not apply shows here even where the
			// records happen to agree.
			cliDoc, beamDoc := metricsDoc(t, cliMetrics), metricsDoc(t, filepath.Join(beamOut, "compression_metrics.json"))
			for _, key := range []string{"outcomes", "trainer", "images", "prepass"} {
				if !reflect.DeepEqual(cliDoc[key], beamDoc[key]) {
					t.Errorf("metrics %q differ:\nCLI  %v\nBeam %v", key, cliDoc[key], beamDoc[key])
				}
			}
			t.Logf("%d records; outcomes %v", len(cliRecs), cliDoc["outcomes"])
		})
	}
}
