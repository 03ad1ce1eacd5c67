package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mockllm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0 picks a free port)")
	var cfg mock.Config
	fs.DurationVar(&cfg.Latency, "latency", 0, "latency added to every answer")
	fs.Float64Var(&cfg.ErrorRate, "error-rate", 0, "fraction of requests given a random transient fault (429, 5xx, truncated, malformed, length, empty, dropped connection)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the fault mix")
	fs.IntVar(&cfg.ContextLimit, "context-limit", 0, "largest prompt in chars/4 tokens; larger prompts get 400 context too long (0 = unlimited)")
	fs.StringVar(&cfg.ContextStyle, "context-style", "vllm", "wording of context-too-long errors: vllm or llamacpp")
	fs.StringVar(&cfg.RetryAfter, "retry-after", "1", "Retry-After header of injected 429s")
	fs.StringVar(&cfg.APIKey, "api-key", "", "if set, require this bearer key (401 otherwise)")
	fs.BoolVar(&cfg.OmitUsage, "omit-usage", false, "answer without a usage object")
	runBatch := fs.String("run-batch", "", "answer the OpenAI Batch input `FILE` (as vllm run-batch does) instead of serving: answers to -batch-output, failures to -batch-errors, then exit")
	batchOut := fs.String("batch-output", "", "with -run-batch: the output file (200 answers)")
	batchErrs := fs.String("batch-errors", "", "with -run-batch: the error file (failed requests)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || cfg.ErrorRate < 0 || cfg.ErrorRate > 1 ||
		(cfg.ContextStyle != "vllm" && cfg.ContextStyle != "llamacpp") {
		fmt.Fprintln(stderr, "mockllm: bad arguments; see -h")
		return 2
	}
	if *runBatch != "" {
		return batchFiles(mock.New(cfg), *runBatch, *batchOut, *batchErrs, stderr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 1
	}
	srv := mock.New(cfg)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "http://%s/v1\n", ln.Addr())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-done:
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 1
	}
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	counts := srv.Answered()
	kinds := make([]mock.Kind, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	fmt.Fprintf(stderr, "mockllm: %d requests, peak %d in flight", srv.Requests(), srv.MaxInFlight())
	for _, k := range kinds {
		fmt.Fprintf(stderr, ", %s %d", k, counts[k])
	}
	fmt.Fprintln(stderr)
	return 0
}

// batchFiles answers the Batch input file in into the output and error
// files.
func batchFiles(srv *mock.Server, in, out, errs string, stderr io.Writer) int {
	if out == "" || errs == "" {
		fmt.Fprintln(stderr, "mockllm: -run-batch needs -batch-output and -batch-errors")
		return 2
	}
	fin, err := os.Open(in)
	if err != nil {
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 1
	}
	defer fin.Close()
	fo, err := os.Create(out)
	if err != nil {
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 1
	}
	fe, err := os.Create(errs)
	if err != nil {
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 1
	}
	counts, err := srv.RunBatch(fin, fo, fe)
	if cerr := errors.Join(fo.Close(), fe.Close()); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "mockllm: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "mockllm: batch of %d requests: %d completed, %d failed\n", counts.Total, counts.Completed, counts.Failed)
	return 0
}
