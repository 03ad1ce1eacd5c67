package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		cfg  mock.Config
		args []string
		code int
		want string
	}{
		{"clean", mock.Config{}, nil, 0, "summarised 40, failed 0, lost 0"},
		{"transient errors", mock.Config{ErrorRate: 0.3, Seed: 2, RetryAfter: "0"}, nil, 0, "summarised 40, failed 0, lost 0"},
		{"failures", mock.Config{ErrorRate: 1, Seed: 2, RetryAfter: "0"}, []string{"-max-retries", "2"}, 1, "summarised 0, failed 40, lost 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mock.New(tt.cfg)
			hs := httptest.NewServer(s)
			defer func() { s.Close(); hs.Close() }()
			var out, errb bytes.Buffer
			args := append([]string{"-url", hs.URL + "/v1", "-n", "40", "-max-concurrent", "4", "-retry-delay", "1ms"}, tt.args...)
			if code := run(args, &out, &errb); code != tt.code {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", code, tt.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("stdout %q lacks %q", out.String(), tt.want)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 2 {
		t.Errorf("no -url: exit %d", code)
	}
}
