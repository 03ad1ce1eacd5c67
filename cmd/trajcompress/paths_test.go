package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrittenPathOverInputRefused: every path a run writes — the profile,
// the report, the Batch export, the summary cache, besides the outputs —
// is refused, before anything is written, when it is an input (by any
// name) or where a later run over the input directory would read it.
func TestWrittenPathOverInputRefused(t *testing.T) {
	t.Parallel()
	dir, in := smallInput(t)
	want, _ := os.ReadFile(in)
	link := filepath.Join(t.TempDir(), "in-link.jsonl")
	os.Symlink(in, link)
	runs := filepath.Join(t.TempDir(), "runs")
	os.Mkdir(runs, 0o755)
	dirIn := filepath.Join(runs, "a.jsonl")
	os.WriteFile(dirIn, want, 0o644)
	out := filepath.Join(dir, "out.jsonl")
	llm := []string{"--summarizer", "llm", "--cache-dir"}
	for _, c := range []struct {
		name  string
		args  []string
		named string // the path the error must name
	}{
		{"cpuprofile is the input", []string{"--input", in, "--cpuprofile", in}, in},
		{"cpuprofile is a link to the input", []string{"--input", in, "--cpuprofile", link}, link},
		{"cpuprofile is the metrics file", []string{"--input", in, "--output", out, "--cpuprofile", filepath.Join(dir, "out_metrics.json")}, "out_metrics.json"},
		{"cpuprofile inside the input directory", []string{"--input", runs, "--cpuprofile", filepath.Join(runs, "cpu.prof")}, "cpu.prof"},
		{"report is the input", []string{"--input", in, "--report", link}, link},
		{"batch export is the input", append(append([]string{"--input", in, "--output", out}, llm...), t.TempDir(), "--batch-export", link), link},
		{"batch export inside the input directory", append(append([]string{"--input", runs}, llm...), t.TempDir(), "--batch-export", filepath.Join(runs, "requests.jsonl")), "requests.jsonl"},
		{"cache is the input directory", append([]string{"--input", runs}, append(llm, runs)...), runs},
		{"cache inside the input directory", append([]string{"--input", runs}, append(llm, filepath.Join(runs, "cache"))...), filepath.Join(runs, "cache")},
		{"cache is the input file", append([]string{"--input", in, "--output", out}, append(llm, in)...), in},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), append([]string{"compress", "--quiet"}, c.args...), nil, io.Discard, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), c.named) {
				t.Fatalf("exit %d, want %d naming %s: %s", code, exitUsage, c.named, stderr.String())
			}
			for _, p := range []string{in, dirIn} {
				if b, _ := os.ReadFile(p); !bytes.Equal(b, want) {
					t.Fatalf("input %s now holds %q", p, b)
				}
			}
			ents, _ := os.ReadDir(runs)
			if len(ents) != 1 {
				t.Fatalf("the input directory now holds %s", dirNames(runs))
			}
		})
	}
	// A hidden cache inside the input directory is not walked: allowed.
	hidden := filepath.Join(runs, ".cache")
	var stderr bytes.Buffer
	code := run(context.Background(), append([]string{"compress", "--quiet", "--input", runs, "--dry-run", "--metrics", filepath.Join(t.TempDir(), "m.json")}, append(llm, hidden)...), nil, io.Discard, &stderr)
	if code != exitOK {
		t.Fatalf("hidden cache: exit %d: %s", code, stderr.String())
	}
}

// TestDefaultNameLinkRefused: a symbolic link at a name the run chose
// itself (the default output, metrics, rejects, output directory, or a
// file in it) is an error naming it, and the file it points to is left
// alone; a link at a path the user named is written through.
func TestDefaultNameLinkRefused(t *testing.T) {
	t.Parallel()
	const precious = "precious\n"
	for _, c := range []struct {
		name string
		link func(dir string) string // the link, planted before the run
		args func(dir, in string) []string
	}{
		{"output", func(dir string) string { return filepath.Join(dir, "in_compressed.jsonl") },
			func(dir, in string) []string { return []string{"--input", in} }},
		{"metrics", func(dir string) string { return filepath.Join(dir, "in_compressed_metrics.json") },
			func(dir, in string) []string { return []string{"--input", in} }},
		{"rejects beside a named output", func(dir string) string { return filepath.Join(dir, "out_rejects.jsonl") },
			func(dir, in string) []string {
				return []string{"--input", in, "--output", filepath.Join(filepath.Dir(in), "out.jsonl")}
			}},
		{"output in a directory", func(dir string) string {
			os.MkdirAll(filepath.Join(dir, "runs_compressed"), 0o755)
			return filepath.Join(dir, "runs_compressed", "in.jsonl")
		}, func(dir, in string) []string { return []string{"--input", filepath.Dir(in)} }},
		{"output in a named directory", func(dir string) string {
			os.MkdirAll(filepath.Join(dir, "named"), 0o755)
			return filepath.Join(dir, "named", "in.jsonl")
		}, func(dir, in string) []string {
			return []string{"--input", filepath.Dir(in), "--output", filepath.Join(dir, "named")}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			runs := filepath.Join(dir, "runs")
			os.Mkdir(runs, 0o755)
			in := filepath.Join(runs, "in.jsonl")
			os.WriteFile(in, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\nnot json\n"), 0o644)
			victim := filepath.Join(t.TempDir(), "victim")
			os.WriteFile(victim, []byte(precious), 0o644)
			args := c.args(dir, in)
			if args[1] == in { // a file input: its defaults are beside it
				dir = runs
			}
			l := c.link(dir)
			if err := os.Symlink(victim, l); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			code := run(context.Background(), append([]string{"compress", "--quiet"}, args...), nil, io.Discard, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), l) || !strings.Contains(stderr.String(), "symbolic link") {
				t.Fatalf("exit %d, want %d naming %s: %s", code, exitUsage, l, stderr.String())
			}
			if b, _ := os.ReadFile(victim); string(b) != precious {
				t.Fatalf("the link's target now holds %q", b)
			}
			if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("the link was replaced: %v", err)
			}
		})
	}
	// A link to a directory at a directory the run chose.
	for _, c := range []struct{ name, link, output string }{
		{"default output directory", "runs_compressed", ""},
		{"directory in the output directory", "out/sub", "out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sub := filepath.Join(dir, "runs", "sub")
			os.MkdirAll(sub, 0o755)
			os.WriteFile(filepath.Join(sub, "in.jsonl"), []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"), 0o644)
			elsewhere := t.TempDir()
			l := filepath.Join(dir, c.link)
			os.MkdirAll(filepath.Dir(l), 0o755)
			os.Symlink(elsewhere, l)
			args := []string{"compress", "--quiet", "--input", filepath.Join(dir, "runs")}
			if c.output != "" {
				args = append(args, "--output", filepath.Join(dir, c.output))
			}
			var stderr bytes.Buffer
			if code := run(context.Background(), args, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), l) {
				t.Fatalf("exit %d, want %d naming %s: %s", code, exitUsage, l, stderr.String())
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Fatalf("written through the link: %s", dirNames(elsewhere))
			}
		})
	}
	// Named: --metrics and --rejects links are followed, the links stay.
	t.Run("named links are followed", func(t *testing.T) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.jsonl")
		os.WriteFile(in, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\nnot json\n"), 0o644)
		elsewhere := t.TempDir()
		for _, name := range []string{"m.json", "r.jsonl"} {
			os.WriteFile(filepath.Join(elsewhere, name), []byte(precious), 0o644)
			os.Symlink(filepath.Join(elsewhere, name), filepath.Join(dir, name))
		}
		code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--metrics", filepath.Join(dir, "m.json"), "--rejects", filepath.Join(dir, "r.jsonl")}, nil, io.Discard, io.Discard)
		if code != exitPartial {
			t.Fatalf("exit %d", code)
		}
		for name, want := range map[string]string{"m.json": `"outcomes"`, "r.jsonl": "not json"} {
			if fi, _ := os.Lstat(filepath.Join(dir, name)); fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s: the link was replaced by a file", name)
			}
			if b, _ := os.ReadFile(filepath.Join(elsewhere, name)); !strings.Contains(string(b), want) {
				t.Errorf("%s: target holds %q", name, b)
			}
		}
	})
}

// TestWalkLinkOutsideTree: a link in a directory input to a file outside
// it is left out with a note naming it and its target, unless
// --follow-links; a link to a file inside the tree is read.
func TestWalkLinkOutsideTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	os.Mkdir(runs, 0o755)
	rec := func(s string) []byte {
		return []byte(`{"conversations":[{"from":"human","value":"` + s + `"}]}` + "\n")
	}
	os.WriteFile(filepath.Join(runs, "a.jsonl"), rec("a"), 0o644)
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	os.WriteFile(outside, rec("outside"), 0o644)
	os.Symlink(outside, filepath.Join(runs, "x.jsonl"))
	os.Symlink("a.jsonl", filepath.Join(runs, "inside.jsonl"))
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprint("follow=", follow), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := []string{"compress", "--quiet", "--input", runs, "--output", out}
			if follow {
				args = append(args, "--follow-links")
			}
			var stderr bytes.Buffer
			if code := run(context.Background(), args, nil, io.Discard, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			noted := strings.Contains(stderr.String(), filepath.Join(runs, "x.jsonl")) && strings.Contains(stderr.String(), outside)
			_, err := os.Stat(filepath.Join(out, "x.jsonl"))
			if follow == noted || follow != (err == nil) {
				t.Fatalf("--follow-links %v: noted %v, x.jsonl written: %v; stderr: %s; out: %s", follow, noted, err == nil, stderr.String(), dirNames(out))
			}
			if _, err := os.Stat(filepath.Join(out, "inside.jsonl")); err != nil {
				t.Fatalf("the link inside the tree was not read: %v", err)
			}
		})
	}
}

// TestCreatedFileModes: every file a run creates has mode 0666 &^ umask
// (under umask 077 and 022, in a process of its own, the umask being
// process-wide), and a file written over keeps its mode.
func TestCreatedFileModes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the CLI in subprocesses")
	}
	for _, umask := range []os.FileMode{0o077, 0o022} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			dir, in := smallInput(t)
			f, _ := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("not json\n")
			f.Close()
			files := map[string]string{
				"output": "in_compressed.jsonl", "metrics": "in_compressed_metrics.json", "rejects": "in_compressed_rejects.jsonl",
				"outcomes": "o.jsonl", "report": "r.html", "profile": "cpu.prof",
			}
			compress := func() {
				t.Helper()
				cmd := cliCmd(t, []string{fmt.Sprintf("TRAJCOMPRESS_TEST_UMASK=%o", umask)}, "compress", "--quiet", "--input", in,
					"--outcomes", filepath.Join(dir, "o.jsonl"), "--report", filepath.Join(dir, "r.html"), "--cpuprofile", filepath.Join(dir, "cpu.prof"))
				if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != exitPartial {
					t.Fatalf("%v: %s", err, out)
				}
			}
			compress()
			cache, export := t.TempDir(), filepath.Join(dir, "requests.jsonl")
			cmd := cliCmd(t, []string{fmt.Sprintf("TRAJCOMPRESS_TEST_UMASK=%o", umask)}, "compress", "--quiet", "--input", in, "--summarizer", "llm",
				"--cache-dir", cache, "--batch-export", export, "--output", filepath.Join(dir, "unused.jsonl"))
			if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != exitPartial {
				t.Fatalf("--batch-export: %v: %s", err, out)
			}
			files["batch export"] = "requests.jsonl"
			want := 0o666 &^ umask
			kept := map[string]os.FileMode{}
			for what, name := range files {
				fi, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if fi.Mode().Perm() != want {
					t.Errorf("%s %s: mode %03o, want %03o", what, name, fi.Mode().Perm(), want)
				}
				// Written over next: each keeps a mode of its own.
				kept[name] = []os.FileMode{0o640, 0o604, 0o600, 0o660}[len(kept)%4]
				os.Chmod(filepath.Join(dir, name), kept[name])
			}
			delete(files, "batch export")
			compress()
			for what, name := range files {
				if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != kept[name] {
					t.Errorf("%s %s written over: mode %03o, want the %03o it had", what, name, fi.Mode().Perm(), kept[name])
				}
			}
		})
	}
}
