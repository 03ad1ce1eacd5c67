package tokenize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/trajcompress/trajcompress/internal/readfile"
)

// Tokenizer files looked for in a directory or model snapshot, in order.
const (
	hfTokenizerFile = "tokenizer.json"
	tiktokenFile    = "tiktoken.model"
)

// HubCacheDir returns the Hugging Face hub cache directory exactly as
// huggingface_hub computes it: $HF_HUB_CACHE, else the legacy
// $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
func HubCacheDir() string {
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if d := os.Getenv(v); d != "" {
			return expandHome(d)
		}
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(expandHome(d), "hub")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(expandHome(d), "huggingface", "hub")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// isModelID reports whether name has the shape of a Hugging Face model id:
// "name" or "org/name", without path syntax.
func isModelID(name string) bool {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "~") ||
		strings.Contains(name, "\\") || strings.Count(name, "/") > 1 || strings.Contains(name, "..") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" {
			return false
		}
	}
	return true
}

// resolveFile finds the tokenizer file that name stands for (see
// NewRevision) without reading it.
func resolveFile(name, revision string) (string, error) {
	name = expandHome(name)
	if fi, err := os.Stat(name); err == nil {
		if revision != "" {
			return "", fmt.Errorf("tokenize: a revision (%s) is for a Hugging Face model id, and %s is a local %s: give the id, or leave the revision out", revision, name, map[bool]string{true: "directory", false: "file"}[fi.IsDir()])
		}
		if !fi.IsDir() {
			return name, nil
		}
		if p, ok := findInDir(name); ok {
			return p, nil
		}
		return "", fmt.Errorf("tokenize: directory %s holds neither %s nor %s", name, hfTokenizerFile, tiktokenFile)
	}
	if !isModelID(name) || looksLikeFile(name) {
		return "", fmt.Errorf("tokenize: unknown tokenizer %q: not an encoding (%s), nor an existing file or directory (no %s from the working directory), nor a Hugging Face model id", name, strings.Join(Names(), ", "), name)
	}
	cache := HubCacheDir()
	repo := filepath.Join(cache, "models--"+strings.ReplaceAll(name, "/", "--"))
	if revision == "" {
		revision = "main"
	}
	commit := revision
	if !isCommitHash(revision) {
		b, err := readfile.Read(filepath.Join(repo, "refs", revision), "Hugging Face cache ref", readfile.SmallLimit)
		if err != nil {
			return "", notCached(name, revision, cache, fmt.Sprintf("%s does not exist", filepath.Join(repo, "refs", revision)))
		}
		commit = strings.TrimSpace(string(b))
	}
	snap := filepath.Join(repo, "snapshots", commit)
	if p, ok := findInDir(snap); ok {
		return p, nil
	}
	return "", notCached(name, revision, cache, fmt.Sprintf("%s holds neither %s nor %s", snap, hfTokenizerFile, tiktokenFile))
}

func notCached(id, revision, cache, why string) error {
	rev := ""
	if revision != "main" {
		rev = " --revision " + revision
	}
	return fmt.Errorf("tokenize: tokenizer %q is not an encoding (%s) and, as a model id at revision %s, not in the Hugging Face cache %s (%s; the cache is set by HF_HUB_CACHE or HF_HOME); "+
		"nothing is downloaded at run time: get it with `huggingface-cli download %s tokenizer.json%s` (or tiktoken.model and tokenizer_config.json for tiktoken-format models)",
		id, strings.Join(Names(), ", "), revision, cache, why, id, rev)
}

func isCommitHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// findInDir returns the tokenizer file of a directory (a model snapshot).
func findInDir(dir string) (string, bool) {
	for _, f := range []string{hfTokenizerFile, tiktokenFile} {
		p := filepath.Join(dir, f)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, true
		}
	}
	return "", false
}

type fileSlot struct {
	once sync.Once
	c    Counter
	err  error
}

// loadedFiles holds the tokenizers loaded from files, by absolute path
// (after symlinks, as in HF snapshots), so that each is parsed once per
// process.
var loadedFiles sync.Map

// NewRevision is New with a Hugging Face revision (branch, tag or commit)
// for model ids; "" means "main". Besides the encoding names, name may be:
//
//   - a path to a tokenizer.json (a Hugging Face byte-level BPE tokenizer,
//     see [LoadHF]) or to a tiktoken-format BPE file (see [LoadTiktokenFile]);
//   - a directory holding tokenizer.json or tiktoken.model (a model snapshot);
//   - a Hugging Face model id such as "Qwen/Qwen3-8B", found offline in the
//     Hugging Face cache (see [HubCacheDir]) exactly as huggingface_hub lays
//     it out: models--Org--Name/refs/<revision> names the commit whose
//     snapshots/<commit>/ directory is used.
//
// Nothing is ever downloaded, and a name found nowhere is an error saying
// where it was looked for and how to get it. Each file is loaded once per
// process and shared.
func NewRevision(name, revision string) (Counter, error) {
	switch name {
	case O200kBase, CL100kBase, Chars4:
		if revision != "" {
			return nil, fmt.Errorf("tokenize: a revision (%s) is for a Hugging Face model id, and %s is a built-in encoding: leave the revision out", revision, name)
		}
		if name == Chars4 {
			return chars4{}, nil
		}
		return loadEncoding(name)
	}
	path, err := resolveFile(name, revision)
	if err != nil {
		return nil, err
	}
	key, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("tokenize: %w", err)
	}
	if abs, err := filepath.Abs(key); err == nil {
		key = abs
	}
	if isTiktokenFile(path) {
		// Its config (beside it: in a snapshot, another blob than the
		// file's) makes it another tokenizer.
		if cfg, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(path), "tokenizer_config.json")); err == nil {
			key += "\x00" + cfg
		}
	}
	v, _ := loadedFiles.LoadOrStore(key, &fileSlot{})
	slot := v.(*fileSlot)
	slot.once.Do(func() {
		if isTiktokenFile(path) {
			slot.c, slot.err = LoadTiktokenFile(path)
		} else {
			slot.c, slot.err = LoadHF(path)
		}
		if errors.Is(slot.err, fs.ErrNotExist) {
			slot.err = fmt.Errorf("tokenize: %s: %w", path, slot.err)
		}
	})
	return slot.c, slot.err
}

// isTiktokenFile reports whether path names a tiktoken-format BPE file
// (by name), not a tokenizer.json.
func isTiktokenFile(path string) bool {
	return filepath.Base(path) == tiktokenFile || strings.HasSuffix(path, ".tiktoken")
}

// looksLikeFile reports whether name, which has the shape of a model id,
// rather names a tokenizer file that is not there ("tokenizer.json",
// "models/tiktoken.model"): a model id does not end in those names.
func looksLikeFile(name string) bool {
	base := filepath.Base(name)
	return base == hfTokenizerFile || base == tiktokenFile || strings.HasSuffix(base, ".tiktoken")
}

// ModelDir returns the directory of the model files counter c was loaded
// from (the directory of its tokenizer.json or tiktoken-format file, where
// a model keeps its tokenizer_config.json, chat_template.jinja and
// preprocessor_config.json), or "" for the built-in encodings.
func ModelDir(c Counter) string {
	if info := Describe(c); info.Kind == KindHFBPE || info.Kind == KindHFSPBPE || info.Kind == KindTiktokenFile {
		return filepath.Dir(info.Name)
	}
	return ""
}
