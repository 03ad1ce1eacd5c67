// Command prepassbench runs package prepass on the real trajectories in
// ../shared/data/real (issue 16) and reports, per source and target, how
// many records over the target fit by the prepass alone and the tokens
// each step saved. The plan (protected head and tail, the middle) is
// snap.Compute's with the default budget at the given targets; a record
// fits when its token total (turns, plus an outside system prompt) less
// the prepass's saving is at most the target. Digests carry no error lines
// here (the deterministic summary's detector is not exported yet).
//
//	go run ./bench/prepass [-dir ../shared/data/real] [-targets 15250,8000,4000]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

type row struct {
	records, over, fit, changed int
	saved                       [prepass.NumSteps]int
	overTokens                  int
}

func main() {
	dir := flag.String("dir", "", "real data directory (default ../shared/data/real from the module root)")
	targets := flag.String("targets", "15250,8000,4000", "target_max_tokens values to try")
	flag.Parse()
	if *dir == "" {
		*dir = testenv.RealDataDir()
	}
	if *dir == "" {
		fmt.Println("real data absent (../shared/data/real): nothing to measure")
		return
	}
	counter, err := tokenize.New("o200k_base")
	if err != nil {
		fail(err)
	}
	var ts []int
	for _, s := range strings.Split(*targets, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fail(err)
		}
		ts = append(ts, t)
	}
	files, _ := filepath.Glob(filepath.Join(*dir, "*", "*.jsonl"))
	sort.Strings(files)
	rows := map[string]map[int]*row{}
	var sources []string
	for _, file := range files {
		src := filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
		sources = append(sources, src)
		rows[src] = map[int]*row{}
		for _, t := range ts {
			rows[src][t] = &row{}
		}
		f, err := os.Open(file)
		if err != nil {
			fail(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<28)
		for line := 1; sc.Scan(); line++ {
			rec, err := traj.Decode(append([]byte(nil), sc.Bytes()...), traj.Pos{File: file, Line: int64(line)}, traj.Schema{})
			if err != nil {
				continue
			}
			roles := make([]traj.Role, len(rec.Turns))
			tok := make([]int, len(rec.Turns))
			for i, tr := range rec.Turns {
				roles[i], tok[i] = tr.Role, counter.Count(tr.Text)+tr.Extra
			}
			system := counter.Count(rec.System)
			for _, target := range ts {
				r := rows[src][target]
				r.records++
				b := snap.DefaultBudget()
				b.Target = target - system
				p := snap.Compute(roles, tok, b)
				if p.Total <= b.Target {
					continue
				}
				r.over++
				r.overTokens += p.Total - b.Target
				fits := func(saved int) bool { return p.Total-saved <= b.Target }
				out, rep := prepass.Apply(rec, rec.Turns, p.HeadEnd, p.TailStart, fits, prepass.Config{Counter: counter})
				if rep.Total() > 0 {
					check(rec, out)
				}
				if rep.Fits {
					r.fit++
				}
				if rep.Total() > 0 {
					r.changed++
				}
				for s := range rep.Saved {
					r.saved[s] += rep.Saved[s]
				}
			}
		}
		f.Close()
	}
	fmt.Printf("%-62s %7s %7s %5s %5s %8s %10s %10s %10s\n", "source", "target", "records", "over", "fit", "changed", "duplicates", "digests", "arguments")
	for _, target := range ts {
		var tot row
		for _, src := range sources {
			r := rows[src][target]
			fmt.Printf("%-62s %7d %7d %5d %5d %8d %10d %10d %10d\n", src, target, r.records, r.over, r.fit, r.changed, r.saved[0], r.saved[1], r.saved[2])
			tot.records += r.records
			tot.over += r.over
			tot.fit += r.fit
			tot.changed += r.changed
			for s := range r.saved {
				tot.saved[s] += r.saved[s]
			}
		}
		fmt.Printf("%-62s %7d %7d %5d %5d %8d %10d %10d %10d\n\n", "all", target, tot.records, tot.over, tot.fit, tot.changed, tot.saved[0], tot.saved[1], tot.saved[2])
	}
	fmt.Printf("%d changed records re-decoded to the same turn count and pairing problems\n", checked)
}

// check fails the run when the prepass's output is not valid JSON that
// decodes to as many turns, or pairs calls and results differently.
func check(rec *traj.Record, out []traj.Turn) {
	line := rec.AppendJSON(nil, out)
	back, err := traj.Decode(line, rec.Pos, traj.Schema{})
	if err != nil || len(back.Turns) != len(rec.Turns) {
		fail(fmt.Errorf("%s: prepass output does not decode to the same turns: %v", rec.Pos, err))
	}
	if a, b := snap.CheckPairing(rec.Turns), snap.CheckPairing(back.Turns); fmt.Sprint(a) != fmt.Sprint(b) {
		fail(fmt.Errorf("%s: pairing changed: %v → %v", rec.Pos, a, b))
	}
	checked++
}

var checked int

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
