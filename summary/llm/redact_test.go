package llm

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestImportBatchKeyRedacted: an offline client (a batch import) redacts
// the key its variable holds from the answers it imports, with redaction
// off too.
func TestImportBatchKeyRedacted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(keyEnv, unknownKey)
	c, err := NewOffline(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: keyEnv, CacheDir: dir, Counter: quarter{}})
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("7", 64)
	text := mock.EchoKeyReply(mock.ChatRequest{Authorization: "Bearer " + unknownKey})
	st, err := c.ImportBatch(strings.NewReader(resultLine(customID(40, 500, key), text)+"\n"), nil)
	if err != nil || st.Imported != 1 || st.Redacted != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
	for _, k := range []string{unknownKey, strings.ToLower(unknownKey), strings.ToUpper(unknownKey)} {
		if testenv.FileHolding(dir, k) != "" {
			t.Errorf("the cache holds %q", k)
		}
	}
}

// unknownKey is an API key in a format no rule knows.
const unknownKey = "Zq8/Lm3+Vx7~Rt2.Kp9aaaa-Wn4Hs6Yb1Qe5"

// TestEchoedKeyRedacted: an endpoint that echoes the key it was sent (in
// a format no rule knows, and case-folded) gets it into neither the
// summary nor the cache, with redaction on or off; a cache entry that
// holds it (written by an older version) is returned without it.
func TestEchoedKeyRedacted(t *testing.T) {
	if _, c := redact.Default().RedactString("key " + unknownKey); c != nil {
		t.Fatalf("a rule knows the test key's format: %v", c)
	}
	spellings := []string{unknownKey, strings.ToLower(unknownKey), strings.ToUpper(unknownKey)}
	for _, on := range []bool{true, false} {
		srv, url := serve(t, mock.Config{Reply: mock.EchoKeyReply})
		dir := t.TempDir()
		mk := func() *Client {
			t.Setenv(keyEnv, unknownKey)
			cfg := Config{Model: "test-model", BaseURL: url, APIKeyEnv: keyEnv, RetryDelay: time.Millisecond,
				Timeout: 10 * time.Second, CacheDir: dir, Counter: quarter{}}
			if on {
				cfg.Redactor = redact.Default()
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := mk()
		res, err := c.Summarize(context.Background(), region(3, 400))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range spellings {
			if strings.Contains(res.Text, k) || testenv.FileHolding(dir, k) != "" {
				t.Errorf("redaction %v: %q in the summary %q or the cache", on, k, res.Text)
			}
		}
		if !strings.Contains(res.Text, "[REDACTED:llm_api_key]") || c.Stats().Redacted != 1 || srv.Requests() != 1 {
			t.Errorf("redaction %v: summary %q, %d redacted, %d requests", on, res.Text, c.Stats().Redacted, srv.Requests())
		}
		// An entry written with the key in it is read back without it.
		for _, f := range cacheFiles(t, dir) {
			b, _ := os.ReadFile(f)
			os.WriteFile(f, bytes.ReplaceAll(b, []byte("[REDACTED:llm_api_key]"), []byte(unknownKey)), 0o644)
		}
		if testenv.FileHolding(dir, unknownKey) == "" {
			t.Fatal("the cache entry was not rewritten")
		}
		res, err = mk().Summarize(context.Background(), region(3, 400))
		if err != nil || !res.CacheHit || strings.Contains(res.Text, unknownKey) {
			t.Errorf("redaction %v: cached entry with the key: hit %v, %q, %v", on, res.CacheHit, res.Text, err)
		}
	}
}

// cacheFiles lists the files under a cache directory.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}
