package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/summary/llm"
	"github.com/trajcompress/trajcompress/traj"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "base URL of the endpoint (required)")
	n := fs.Int("n", 3200, "regions to summarise")
	maxConc := fs.Int("max-concurrent", 64, "max_concurrent_requests")
	callers := fs.Int("callers", 0, "goroutines calling Summarize (0 = 2 × max-concurrent)")
	latency := fs.Duration("latency", 200*time.Millisecond, "the server's latency, for the ideal rate")
	retries := fs.Int("max-retries", 8, "attempts per request")
	retryDelay := fs.Duration("retry-delay", 50*time.Millisecond, "backoff base")
	turns := fs.Int("turns", 12, "turns per region")
	turnBytes := fs.Int("turn-bytes", 600, "bytes per turn")
	defaultTransport := fs.Bool("default-transport", false, "use http.DefaultTransport (2 idle connections per host) instead of the client's own")
	if err := fs.Parse(args); err != nil || *url == "" || *n <= 0 {
		fmt.Fprintln(stderr, "llm: -url is required; see -h")
		return 2
	}
	if *callers == 0 {
		*callers = 2 * *maxConc
	}
	if os.Getenv("LLM_BENCH_KEY") == "" {
		os.Setenv("LLM_BENCH_KEY", "bench-key")
	}
	var hc *http.Client
	if *defaultTransport {
		hc = &http.Client{Transport: http.DefaultTransport}
	}
	c, err := llm.New(llm.Config{
		HTTPClient: hc,
		Model:      "bench", BaseURL: *url, APIKeyEnv: "LLM_BENCH_KEY", Temperature: llm.DefaultTemperature,
		MaxRetries: *retries, RetryDelay: *retryDelay, MaxRetryDelay: 2 * time.Second,
		MaxConcurrent: *maxConc, Timeout: 30 * time.Second, CacheDir: llm.CacheDisabled,
	})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	net := semaphore.NewWeighted(int64(*maxConc)) // the bound pipeline.Run would pass
	jobs := make(chan int)
	var done, failed, lost atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *callers {
		wg.Go(func() {
			for i := range jobs {
				req := request(i, *turns, *turnBytes)
				req.Network = net
				res, err := c.Summarize(context.Background(), req)
				switch {
				case err != nil:
					failed.Add(1)
				case strings.HasPrefix(res.Text, summary.Prefix):
					done.Add(1)
				default:
					lost.Add(1)
				}
			}
		})
	}
	for i := range *n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	el := time.Since(start)
	st := c.Stats()
	rate := float64(st.Calls) / el.Seconds()
	ideal := float64(*maxConc) / latency.Seconds()
	fmt.Fprintf(stdout, "regions %d: summarised %d, failed %d, lost %d in %.2fs\n", *n, done.Load(), failed.Load(), lost.Load(), el.Seconds())
	fmt.Fprintf(stdout, "requests %d (errors %d): %.1f req/s, ideal %.1f req/s, %.1f%% of ideal\n",
		st.Calls, st.APIErrors, rate, ideal, 100*rate/ideal)
	fmt.Fprintf(stdout, "retries by cause: %s\n", format(st.Retries))
	fmt.Fprintf(stdout, "tokens: prompt %d, completion %d\n", st.PromptTokens, st.CompletionTokens)
	if lost.Load() != 0 || failed.Load() != 0 {
		return 1
	}
	return 0
}

func request(i, nTurns, size int) summary.Request {
	ts := make([]traj.Turn, nTurns)
	for j := range ts {
		role, name := traj.RoleAssistant, "gpt"
		if j%2 == 1 {
			role, name = traj.RoleTool, "tool"
		}
		text := fmt.Sprintf("record %d turn %d: ", i, j)
		ts[j] = traj.Turn{Role: role, Name: name, Text: text + strings.Repeat("lorem ipsum ", max(size-len(text), 0)/12)}
	}
	return summary.Request{Turns: ts, Start: 2, TargetTokens: 250, RecordID: fmt.Sprintf("bench:%d", i+1)}
}

func format(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
