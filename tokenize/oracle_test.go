package tokenize

import (
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

var (
	oracleOnce sync.Once
	oracles    map[string]*tiktoken.Tiktoken
	oracleErr  error
)

// oracle returns pkoukk/tiktoken-go for name, with its offline loader so it
// never touches the network. It is exact on valid UTF-8 but slow (quadratic
// on long pieces), so callers bound their inputs.
func oracle(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	oracleOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		oracles = map[string]*tiktoken.Tiktoken{}
		for _, n := range []string{O200kBase, CL100kBase} {
			tk, err := tiktoken.GetEncoding(n)
			if err != nil {
				oracleErr = err
				return
			}
			oracles[n] = tk
		}
	})
	if oracleErr != nil {
		t.Fatalf("loading oracle: %v", oracleErr)
	}
	return oracles[name]
}

// oracleEncode is tiktoken-go's ordinary encoding (no special tokens).
func oracleEncode(t testing.TB, name, text string) []int {
	return oracle(t, name).EncodeOrdinary(text)
}

func mustEncoding(t testing.TB, name string) *Encoding {
	t.Helper()
	c, err := New(name)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	return c.(*Encoding)
}
