package parquet

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestLZ4RawUUIDAndMD5: LZ4_RAW Parquet that DuckDB writes (see
// testdata/lz4raw.mjs), with uuid and md5 columns whose pages compress
// less than 3:1, data pages v1 and v2, nulls and a required column, is
// read value for value (parquet-go v0.32.0 refused it, or read a column
// without levels as zeros: see lz4raw.go).
func TestLZ4RawUUIDAndMD5(t *testing.T) {
	for _, v := range []string{"v1", "v2"} {
		path := "testdata/lz4raw_uuid_md5_" + v + ".parquet"
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for ; ; n++ {
			b, row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := checkLZ4Row(b, n, row); err != nil {
				t.Fatalf("%s: row %d: %v\n%s", path, row, err, b)
			}
		}
		r.Close()
		if n != 300 {
			t.Errorf("%s: %d rows, want 300", path, n)
		}
	}
}

// checkLZ4Row checks one row of the fixture against what DuckDB wrote:
// id is the row, u the 16 bytes u_text spells, m md5(id) (null every
// 7th row), mb the bytes mb_hex spells, mb_hex md5(id).
func checkLZ4Row(b []byte, want, row int64) error {
	var r struct {
		ID    int64   `json:"id"`
		U     string  `json:"u"`
		UText string  `json:"u_text"`
		M     *string `json:"m"`
		MB    string  `json:"mb"`
		MBHex string  `json:"mb_hex"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	sum := md5.Sum([]byte(fmt.Sprint(want)))
	md := hex.EncodeToString(sum[:])
	u, _ := base64.StdEncoding.DecodeString(r.U)
	ut, _ := hex.DecodeString(strings.ReplaceAll(r.UText, "-", ""))
	mb, _ := base64.StdEncoding.DecodeString(r.MB)
	switch {
	case r.ID != want || row != want:
		return fmt.Errorf("id %d at row %d, want %d", r.ID, row, want)
	case len(u) != 16 || !bytes.Equal(u, ut):
		return fmt.Errorf("uuid %x is not %s", u, r.UText)
	case want%7 == 0 && r.M != nil, want%7 != 0 && (r.M == nil || *r.M != md):
		return fmt.Errorf("md5 %v, want %s", r.M, md)
	case r.MBHex != md || hex.EncodeToString(mb) != md:
		return fmt.Errorf("md5 bytes %x (%s), want %s", mb, r.MBHex, md)
	}
	return nil
}

// TestPadVarint: a padded varint reads as the same number.
func TestPadVarint(t *testing.T) {
	for _, u := range []uint64{0, 1, 127, 128, 16383, 1 << 20, 1<<31 - 1} {
		for n := 1; n <= 5; n++ {
			b, ok := padVarint(u, n)
			if !ok {
				continue
			}
			got, k := uvarint(b)
			if got != u || k != n {
				t.Errorf("padVarint(%d, %d) = %x reads as %d in %d bytes", u, n, b, got, k)
			}
		}
	}
	if _, ok := padVarint(128, 1); ok {
		t.Error("128 does not fit one byte")
	}
}

func uvarint(b []byte) (uint64, int) {
	var u uint64
	for i, c := range b {
		u |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return u, i + 1
		}
	}
	return u, len(b)
}

// TestLZ4RawRequiredColumnIsNotZeros: a required LZ4_RAW column (no
// levels to trip on) read its values as zeros, silently.
func TestLZ4RawRequiredColumnIsNotZeros(t *testing.T) {
	type row struct {
		V int64 `parquet:"v"`
	}
	path := filepath.Join(t.TempDir(), "r.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[row](f, pq.Compression(&pq.Lz4Raw))
	rows := make([]row, 1000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		rows[i].V = rng.Int64() // random: LZ4 cannot compress them 3:1
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range rows {
		b, _, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"v":%d}`, rows[i].V); string(b) != want {
			t.Fatalf("row %d: %s, want %s", i, b, want)
		}
	}
}
