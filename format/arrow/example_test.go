package arrow_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/trajcompress/trajcompress/format/arrow"
)

func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "data-00000-of-00001.arrow")

	recs := [][]byte{
		[]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"yo"}]}]}`),
	}
	schema, err := arrow.InferSchema(recs) // "content" mixes kinds → arrow.json
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(schema.Arrow().Field(0).Type)
	w, err := arrow.Create(path, schema, arrow.WriterOptions{Extra: arrow.Column{Name: "compression_metrics"}})
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

	r, err := arrow.Open(path) // IPC stream, like datasets' save_to_disk
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		obj, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(obj))
	}
	// Output:
	// list<item: struct<role: utf8, content: utf8>, nullable>
	// {"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"yo"}]}],"compression_metrics":null}
}
