package llm

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/internal/testenv"
)

// TestCacheEntryMode: a cache entry is 0666 &^ umask like every file the
// tool creates (it was 0600 whatever the umask). Not parallel: the umask
// is process-wide.
func TestCacheEntryMode(t *testing.T) {
	testenv.Umasks(t, func(t *testing.T, umask fs.FileMode) {
		c, err := openCache(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		key := strings.Repeat("ab", 32)
		if err := c.put(key, entry{Text: "s"}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(c.path(key))
		if err != nil {
			t.Fatal(err)
		}
		if m, want := fi.Mode().Perm(), 0o666&^umask; m != want {
			t.Fatalf("mode %03o, want %03o", m, want)
		}
	})
}

func TestCache(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	dir := t.TempDir()
	c := client(t, url, func(c *Config) { c.CacheDir = dir })
	req := region(3, 60)
	first, err := c.Summarize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.CacheHit || srv.Requests() != 1 {
		t.Fatalf("first call: hit=%v requests=%d", first.CacheHit, srv.Requests())
	}
	// A new client on the same directory (a rerun) sends nothing.
	c2 := client(t, url, func(c *Config) { c.CacheDir = dir })
	for range 2 {
		again, err := c2.Summarize(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !again.CacheHit || again.Text != first.Text || again.APICalls != 0 || again.PromptTokens != 0 {
			t.Errorf("rerun = %+v, want a free cache hit of %q", again, first.Text)
		}
	}
	if srv.Requests() != 1 {
		t.Errorf("rerun made %d requests, want 0", srv.Requests()-1)
	}
	if st := c2.Stats(); st.CacheHits != 2 || st.CacheMisses != 0 || st.Calls != 0 {
		t.Errorf("stats = %+v", st)
	}
	if e := c2.Estimate(req); !e.Cached || e.Requests != 0 {
		t.Errorf("estimate of a cached region = %+v", e)
	}

	// One file, under a two-hex-digit fan-out, named by the key.
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 1 {
		t.Fatalf("cache files = %v", files)
	}
	rel, _ := filepath.Rel(dir, files[0])
	sub, name := filepath.Split(rel)
	if len(sub) != 3 || !strings.HasPrefix(name, sub[:2]) || len(name) != 64+len(".json") {
		t.Errorf("cache file %q is not <2 hex>/<sha256>.json", rel)
	}

	// Other parameters are other keys.
	for name, mod := range map[string]func(*Config){
		"temperature": func(c *Config) { c.Temperature = 0.7 },
		"model":       func(c *Config) { c.Model = "other" },
		"seed":        func(c *Config) { s := 1; c.Seed = &s },
		"extra body":  func(c *Config) { c.ExtraBody = map[string]any{"top_k": 20} },
	} {
		before := srv.Requests()
		c3 := client(t, url, func(c *Config) { c.CacheDir = dir; mod(c) })
		if res, err := c3.Summarize(context.Background(), req); err != nil || res.CacheHit || srv.Requests() != before+1 {
			t.Errorf("%s changed but the cache hit: %+v %v", name, res, err)
		}
	}
	// The base URL is not part of the key.
	_, url2 := serve(t, mock.Config{})
	c4 := client(t, url2, func(c *Config) { c.CacheDir = dir })
	if res, err := c4.Summarize(context.Background(), req); err != nil || !res.CacheHit {
		t.Errorf("another base URL missed the cache: %+v %v", res, err)
	}
	// Another target is another prompt and max_tokens.
	req2 := req
	req2.TargetTokens = 50
	if res, _ := c4.Summarize(context.Background(), req2); res.CacheHit {
		t.Errorf("another target hit the cache")
	}
}

func TestCacheCorruptEntryIsAMiss(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	dir := t.TempDir()
	c := client(t, url, func(c *Config) { c.CacheDir = dir })
	req := region(2, 40)
	if _, err := c.Summarize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.WriteFile(p, []byte(`{"text":`), 0o644)
		}
		return err
	})
	res, err := c.Summarize(context.Background(), req)
	if err != nil || res.CacheHit || srv.Requests() != 2 {
		t.Errorf("corrupt entry: %+v %v, %d requests", res, err, srv.Requests())
	}
	if st := c.Stats(); st.CacheErrors != 1 {
		t.Errorf("cache errors = %d, want 1", st.CacheErrors)
	}
	// The entry was rewritten and is good again.
	if res, _ := c.Summarize(context.Background(), req); !res.CacheHit {
		t.Errorf("rewritten entry missed")
	}
}

func TestCacheDisabled(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, func(c *Config) { c.CacheDir = CacheDisabled })
	for range 2 {
		if res, err := c.Summarize(context.Background(), region(2, 40)); err != nil || res.CacheHit {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if srv.Requests() != 2 {
		t.Errorf("requests = %d, want 2", srv.Requests())
	}
}
