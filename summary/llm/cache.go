package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// cacheVersion changes when the key material or entry format changes, so
// old entries are simply never hit again.
const cacheVersion = 1

// keyMaterial is what a summary depends on: the model, the prompt version
// and messages, and the sampling parameters. The base URL and the key are not part of it,
// so the same model behind another endpoint shares the cache.
type keyMaterial struct {
	Version     int            `json:"v"`
	Prompt      string         `json:"prompt"` // PromptVersion, set by cacheKey
	Model       string         `json:"model"`
	Messages    []message      `json:"messages"`
	Temperature *float64       `json:"temperature"`
	MaxTokens   int            `json:"max_tokens"`
	Seed        *int           `json:"seed"`
	Extra       map[string]any `json:"extra"` // marshalled with sorted keys
}

// cacheKey is the hex sha256 of the key material.
func cacheKey(m keyMaterial) string {
	m.Version = cacheVersion
	m.Prompt = PromptVersion
	b, err := json.Marshal(m)
	if err != nil {
		// Only ExtraBody can fail to marshal, and New checks it does not.
		panic(fmt.Sprintf("llm: cache key: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// entry is one cached summary.
type entry struct {
	Text             string `json:"text"`
	Model            string `json:"model"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	Chunks           int    `json:"chunks,omitempty"`
}

// cache is a directory of entries, one file per key under a two-hex-digit
// fan-out: dir/ab/abcdef….json. A nil *cache is a disabled cache.
type cache struct{ dir string }

// CachePath is the directory the summary cache of [Config.CacheDir] dir
// is written in: dir, or for "" os.UserCacheDir()/trajcompress/summaries.
func CachePath(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("llm: no user cache directory (set a cache dir, or %q to disable): %w", CacheDisabled, err)
	}
	return filepath.Join(base, "trajcompress", "summaries"), nil
}

func openCache(dir string) (*cache, error) {
	if dir == CacheDisabled {
		return nil, nil
	}
	dir, err := CachePath(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("llm: cache: %w", err)
	}
	return &cache{dir: dir}, nil
}

func (c *cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// get returns the entry for key. A missing, unreadable or corrupt entry is a
// miss; err is set only for errors other than absence.
func (c *cache) get(key string) (entry, bool, error) {
	if c == nil {
		return entry{}, false, nil
	}
	b, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return entry{}, false, nil
	}
	if err != nil {
		return entry{}, false, fmt.Errorf("llm: cache: %w", err)
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil || e.Text == "" {
		return entry{}, false, fmt.Errorf("llm: cache: %s: corrupt entry", c.path(key))
	}
	return e, true, nil
}

// put stores e under key atomically: a temporary file in the same
// directory, renamed over the final name. Readers never see a partial
// entry. The file is not fsynced: a crash may lose recent entries (they are
// requested again), never corrupt one that get accepts.
func (c *cache) put(key string, e entry) error {
	if c == nil {
		return nil
	}
	dir := filepath.Join(c.dir, key[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	f, err := atomicfile.CreateTemp(dir, ".tmp-*") // 0666 &^ umask, as the user's other files

	if err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("llm: cache: writing %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), c.path(key)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("llm: cache: %w", err)
	}
	return nil
}
