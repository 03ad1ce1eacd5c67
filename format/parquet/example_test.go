package parquet_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/format/parquet"
)

func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "train-00000-of-00001.parquet")

	recs := [][]byte{
		[]byte(`{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello"}],"id":1}`),
		[]byte(`{"conversations":[],"id":9007199254740993}`),
	}
	schema, err := parquet.InferSchema(recs)
	if err != nil {
		log.Fatal(err)
	}
	w, err := parquet.Create(path, schema, parquet.WriterOptions{Compression: "zstd"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := parquet.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		obj, row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row, string(obj))
	}
	// Output:
	// 0 {"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello"}],"id":1}
	// 1 {"conversations":[],"id":9007199254740993}
}
