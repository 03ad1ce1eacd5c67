package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/redact"
)

// Secrets a summary may echo: an AWS access key id and a GitHub token.
const (
	awsKey   = "AKIAQ2W3E4R5T6Y7U2I3"
	ghToken  = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
	echoText = "[CONTEXT SUMMARY]: the agent exported AWS_ACCESS_KEY_ID=" + awsKey + " and pushed with token " + ghToken + "."
)

// TestReplyRedacted: with a Redactor, a reply that echoes secrets is
// redacted before it is returned and before it is cached; without one it
// is kept as sent.
func TestReplyRedacted(t *testing.T) {
	r := redact.Default()
	if r.Contains(awsKey) == false || r.Contains(ghToken) == false {
		t.Fatal("the redactor does not know the planted secrets")
	}
	for _, on := range []bool{true, false} {
		srv, url := serve(t, mock.Config{Reply: func(mock.ChatRequest) string { return echoText }})
		dir := t.TempDir()
		c := client(t, url, func(c *Config) {
			c.CacheDir = dir
			if on {
				c.Redactor = r
			}
		})
		res, err := c.Summarize(context.Background(), region(3, 200))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{awsKey, ghToken} {
			if on && (strings.Contains(res.Text, secret) || testenv.FileHolding(dir, secret) != "") {
				t.Errorf("redaction on: %s in the summary %q or the cache", secret, res.Text)
			}
			if !on && (!strings.Contains(res.Text, secret) || testenv.FileHolding(dir, secret) == "") {
				t.Errorf("redaction off: %s lost", secret)
			}
		}
		if on && (!strings.Contains(res.Text, "[REDACTED:") || c.Stats().Redacted != 1) {
			t.Errorf("summary %q, %d redacted", res.Text, c.Stats().Redacted)
		}
		if srv.Requests() != 1 {
			t.Errorf("requests %d", srv.Requests())
		}
	}
}

// TestCachedSecretRedacted: an entry cached with a secret (by a run
// without redaction, or before replies were redacted) is redacted when
// read back.
func TestCachedSecretRedacted(t *testing.T) {
	srv, url := serve(t, mock.Config{Reply: func(mock.ChatRequest) string { return echoText }})
	dir := t.TempDir()
	req := region(3, 200)
	plain := client(t, url, func(c *Config) { c.CacheDir = dir })
	if _, err := plain.Summarize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := client(t, url, func(c *Config) { c.CacheDir = dir; c.Redactor = redact.Default() })
	res, err := c.Summarize(context.Background(), req)
	if err != nil || !res.CacheHit || srv.Requests() != 1 {
		t.Fatalf("hit %v, requests %d, %v", res.CacheHit, srv.Requests(), err)
	}
	if strings.Contains(res.Text, awsKey) || strings.Contains(res.Text, ghToken) {
		t.Errorf("cached summary returned with its secrets: %q", res.Text)
	}
}

// TestImportBatchRedacted: an imported Batch answer is redacted before it
// is cached.
func TestImportBatchRedacted(t *testing.T) {
	dir := t.TempDir()
	c, err := NewOffline(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", CacheDir: dir, Counter: quarter{}, Redactor: redact.Default()})
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("7", 64)
	st, err := c.ImportBatch(strings.NewReader(resultLine(customID(40, 500, key), echoText)+"\n"), nil)
	if err != nil || st.Imported != 1 || st.Redacted != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if testenv.FileHolding(dir, awsKey) != "" || testenv.FileHolding(dir, ghToken) != "" {
		t.Error("the cache holds a secret of an imported answer")
	}
	if e, ok, _ := c.cache.get(key); !ok || !strings.Contains(e.Text, "[REDACTED:") {
		t.Errorf("cached %q %v", e.Text, ok)
	}
}
