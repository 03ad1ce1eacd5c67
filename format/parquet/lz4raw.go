package parquet

import (
	"bufio"
	"io"
	"sort"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Reading LZ4_RAW pages around a bug of parquet-go v0.32.0 (the latest
// release; its main branch has the same code).
//
// Column.decompress gets a buffer of the page's uncompressed_page_size
// bytes and hands it to the codec's Decode. The LZ4_RAW codec
// (compress/lz4) first makes sure its buffer holds 3× the compressed
// size and, when it does not, decodes into a new one. decompress then
// keeps the new bytes only when there are more of them than
// uncompressed_page_size: when there are exactly as many, as for every
// data page v1 and dictionary page, it keeps its own buffer, which holds
// nothing decoded. So every LZ4_RAW page that compresses less than 3:1
// (a uuid or md5 column, random text, even short runs of integers) is
// read as whatever the buffer held: an error ("decoding level expected N
// values but got only 0"), or, for a column without levels, wrong values.
// A data page v2 is hit whenever its values are decoded into a new buffer.
//
// lz4RawPatches reads around it without a fork: it lowers each LZ4_RAW
// page's uncompressed_page_size, in the bytes of its header as the reader
// sees them (see patchedFile), to one less than the bytes its compressed
// part decompresses to. Decode's output is then always longer than that,
// and decompress keeps it, wherever it was decoded. The value keeps the
// byte length of the one it replaces (a varint padded with continuation
// bytes, which thrift's compact protocol reads as the same number), so no
// offset in the file moves. Nothing else in the reader uses the field.

// lz4RawPatches returns the patches that make the LZ4_RAW pages of file
// readable (none when no column chunk is LZ4_RAW), reading each page
// header of those chunks through r. A header it cannot read, or one that
// does not start as writers write it, is left as it is.
func lz4RawPatches(r io.ReaderAt, file *pq.File) []patch {
	var patches []patch
	for _, g := range file.Metadata().RowGroups {
		for _, c := range g.Columns {
			md := c.MetaData
			if md.Codec != format.Lz4Raw {
				continue
			}
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
				start = md.DictionaryPageOffset
			}
			patches = append(patches, chunkPatches(r, start, start+md.TotalCompressedSize)...)
		}
	}
	sort.Slice(patches, func(i, j int) bool { return patches[i].off < patches[j].off })
	return patches
}

// chunkPatches walks the pages of one column chunk, [start, end).
func chunkPatches(r io.ReaderAt, start, end int64) []patch {
	var patches []patch
	br := bufio.NewReaderSize(nil, 4096)
	var proto thrift.CompactProtocol
	for off := start; off < end; {
		sec := io.NewSectionReader(r, off, end-off)
		br.Reset(sec)
		var h format.PageHeader
		if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
			return patches
		}
		pos, _ := sec.Seek(0, io.SeekCurrent)
		hlen := pos - int64(br.Buffered())
		if h.CompressedPageSize < 0 || hlen <= 0 {
			return patches
		}
		size := int64(-1) // the bytes Decode returns
		switch h.Type {
		case format.DataPage, format.DictionaryPage:
			size = int64(h.UncompressedPageSize)
		case format.DataPageV2:
			if v := h.DataPageHeaderV2.V; h.DataPageHeaderV2.Valid && (!v.IsCompressed.Valid || v.IsCompressed.V) {
				size = int64(h.UncompressedPageSize) - int64(v.DefinitionLevelsByteLength) - int64(v.RepetitionLevelsByteLength)
			}
		}
		if size > 0 {
			head := make([]byte, hlen)
			if _, err := r.ReadAt(head, off); err != nil {
				return patches
			}
			if at, n, ok := uncompressedSizeField(head); ok {
				if b, ok := padVarint(uint64(size-1)<<1, n); ok { // zigzag of a non-negative i32
					patches = append(patches, patch{off: off + int64(at), b: b})
				}
			}
		}
		off += hlen + int64(h.CompressedPageSize)
	}
	return patches
}

// uncompressedSizeField finds field 2 of a page header in thrift's
// compact protocol, where writers put it: right after field 1 (the page
// type), both i32. It returns the offset and length of its varint.
func uncompressedSizeField(h []byte) (at, n int, ok bool) {
	const i32 = 5
	pos, id := 0, 0
	for pos < len(h) {
		b := h[pos]
		pos++
		if b&0x0f != i32 || b>>4 == 0 {
			return 0, 0, false // not a short-form i32 field header
		}
		id += int(b >> 4)
		start := pos
		for pos < len(h) && h[pos]&0x80 != 0 {
			pos++
		}
		pos++
		if pos > len(h) {
			return 0, 0, false
		}
		switch {
		case id == 2:
			return start, pos - start, true
		case id > 2:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// padVarint encodes u as an unsigned varint of exactly n bytes (padding
// with continuation bytes), if it fits.
func padVarint(u uint64, n int) ([]byte, bool) {
	if n < 1 || n > 10 || (n < 10 && u>>(7*n) != 0) {
		return nil, false
	}
	b := make([]byte, n)
	for i := range n - 1 {
		b[i] = 0x80 | byte(u>>(7*i))&0x7f
	}
	b[n-1] = byte(u>>(7*(n-1))) & 0x7f
	return b, true
}

// patch replaces the bytes at off with b.
type patch struct {
	off int64
	b   []byte
}

// patchedFile is a file read with patches applied (sorted by offset, not
// overlapping).
type patchedFile struct {
	r       io.ReaderAt
	patches []patch
}

func (p *patchedFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.r.ReadAt(b, off)
	end := off + int64(n)
	i := sort.Search(len(p.patches), func(i int) bool { return p.patches[i].off+int64(len(p.patches[i].b)) > off })
	for ; i < len(p.patches) && p.patches[i].off < end; i++ {
		pt := p.patches[i]
		lo, hi := max(pt.off, off), min(pt.off+int64(len(pt.b)), end)
		copy(b[lo-off:hi-off], pt.b[lo-pt.off:hi-pt.off])
	}
	return n, err
}
