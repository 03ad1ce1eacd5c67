package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-latency", "1ms", "-seed", "5"}, pw, &stderr)
		pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v", err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("URL = %q", url)
	}
	resp, err := http.Post(url+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"[Turn 1 - GPT]: hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "mock summary of turns 1-1") {
		t.Errorf("answer %d %s", resp.StatusCode, body)
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d", c)
	}
	if !strings.Contains(stderr.String(), "1 requests") || !strings.Contains(stderr.String(), "ok 1") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"help", []string{"-h"}, 0},
		{"unknown flag", []string{"-nope"}, 2},
		{"bad rate", []string{"-error-rate", "2"}, 2},
		{"bad style", []string{"-context-style", "x"}, 2},
		{"extra args", []string{"x"}, 2},
		{"bad addr", []string{"-addr", "256.0.0.1:0"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := run(context.Background(), tt.args, &out, &errb); got != tt.want {
				t.Errorf("run(%v) = %d, want %d; stderr %q", tt.args, got, tt.want, errb.String())
			}
		})
	}
}
