package arrow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	flatbuffers "github.com/google/flatbuffers/go"
)

// Arrow-go allocates slices and message bodies with sizes read straight
// from the file, so a flipped bit in a schema or a body length can make it
// ask for hundreds of GiB and kill the process with an unrecoverable
// out-of-memory error. validateIPC walks the message framing and the
// flatbuffer metadata first (metadata only: bodies are skipped with a
// seek) and rejects sizes that cannot fit in the file.

// maxMetadata bounds one message's flatbuffer metadata; real schemas are
// kilobytes.
const maxMetadata = 64 << 20

// ipcLayout is what the walk learns of a file's record batches, for
// reading a range of them (Reader.Batches): where each starts (its
// message, or its footer block), how many rows it holds, whether
// dictionary batches are present, and (stream) where the messages after
// the schema start.
type ipcLayout struct {
	offsets, rows []int64
	dicts         int
	afterSchema   int64
}

func validateIPC(f *os.File, size int64, fileFormat bool, lay *ipcLayout) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt metadata: %v", p)
		}
	}()
	if fileFormat {
		return validateFile(f, size, lay)
	}
	off := int64(0)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	var head [8]byte
	for msg := 0; ; msg++ {
		n, err := io.ReadFull(f, head[:4])
		if err == io.EOF || (err == nil && n == 4 && !fileFormat && off+4 == size && binary.LittleEndian.Uint32(head[:4]) == 0) {
			return nil // stream without (or with a legacy) end marker
		}
		if err != nil {
			return fmt.Errorf("message %d at offset %d: truncated", msg, off)
		}
		metaLen := int64(int32(binary.LittleEndian.Uint32(head[:4])))
		hdr := int64(4)
		if metaLen == -1 { // continuation marker, then the length
			if _, err := io.ReadFull(f, head[4:8]); err != nil {
				return fmt.Errorf("message %d at offset %d: truncated", msg, off)
			}
			metaLen = int64(int32(binary.LittleEndian.Uint32(head[4:8])))
			hdr = 8
		}
		if metaLen == 0 {
			return nil // end-of-stream marker
		}
		if metaLen < 0 || metaLen > maxMetadata || off+hdr+metaLen > size {
			return fmt.Errorf("message %d at offset %d: metadata length %d does not fit in the file (%d bytes)", msg, off, metaLen, size)
		}
		meta := make([]byte, metaLen)
		if _, err := io.ReadFull(f, meta); err != nil {
			return fmt.Errorf("message %d at offset %d: truncated metadata", msg, off)
		}
		info, err := checkMessage(meta)
		if err != nil {
			return fmt.Errorf("message %d at offset %d: %w", msg, off, err)
		}
		switch info.htype {
		case 1:
			lay.afterSchema = off + hdr + metaLen + info.body
		case 2:
			lay.dicts++
		case 3:
			lay.offsets, lay.rows = append(lay.offsets, off), append(lay.rows, info.rows)
		}
		off += hdr + metaLen
		if info.body < 0 || info.body > size-off {
			return fmt.Errorf("message %d at offset %d: body of %d bytes but only %d left in the file (truncated?)", msg, off, info.body, size-off)
		}
		if err := checkBody(f, off, info); err != nil {
			return fmt.Errorf("message %d at offset %d: %w", msg, off, err)
		}
		off += info.body
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
	}
}

// fbuf wraps a flatbuffer with bounds-checked accessors.
type fbuf struct{ b []byte }

var errFB = errors.New("flatbuffer offset out of range")

func (fb fbuf) root() (flatbuffers.Table, error) {
	if len(fb.b) < 8 {
		return flatbuffers.Table{}, errFB
	}
	pos := flatbuffers.GetUOffsetT(fb.b)
	if int(pos) >= len(fb.b)-4 {
		return flatbuffers.Table{}, errFB
	}
	return flatbuffers.Table{Bytes: fb.b, Pos: pos}, nil
}

// vector returns the element count and start of the vector in slot (or 0,
// 0 when absent) after checking that n elements of size elem fit.
func (fb fbuf) vector(t flatbuffers.Table, slot int, elem int) (n int, start flatbuffers.UOffsetT, err error) {
	o := t.Offset(flatbuffers.VOffsetT(4 + 2*slot))
	if o == 0 {
		return 0, 0, nil
	}
	n = t.VectorLen(flatbuffers.UOffsetT(o))
	start = t.Vector(flatbuffers.UOffsetT(o))
	if n < 0 || int64(start)+int64(n)*int64(elem) > int64(len(fb.b)) {
		return 0, 0, fmt.Errorf("vector of %d elements does not fit in %d bytes of metadata", n, len(fb.b))
	}
	return n, start, nil
}

func (fb fbuf) table(t flatbuffers.Table, slot int) (flatbuffers.Table, bool) {
	o := t.Offset(flatbuffers.VOffsetT(4 + 2*slot))
	if o == 0 {
		return flatbuffers.Table{}, false
	}
	pos := t.Indirect(flatbuffers.UOffsetT(o) + t.Pos)
	if int(pos) >= len(fb.b) {
		panic(errFB)
	}
	return flatbuffers.Table{Bytes: fb.b, Pos: pos}, true
}

func (fb fbuf) elemTable(start flatbuffers.UOffsetT, i int) flatbuffers.Table {
	x := start + flatbuffers.UOffsetT(i*4)
	t := flatbuffers.Table{Bytes: fb.b}
	pos := t.Indirect(x)
	if int(pos) >= len(fb.b) {
		panic(errFB)
	}
	t.Pos = pos
	return t
}

// msgInfo is what checkBody needs from a message.
type msgInfo struct {
	htype      byte  // 1 schema, 2 dictionary batch, 3 record batch
	rows       int64 // a record batch's length
	body       int64
	buffers    [][2]int64 // offset, length inside the body
	compressed bool
}

// checkMessage validates a Message flatbuffer and returns its body length
// and buffer layout.
func checkMessage(meta []byte) (msgInfo, error) {
	var info msgInfo
	fb := fbuf{meta}
	msg, err := fb.root()
	if err != nil {
		return info, err
	}
	if o := msg.Offset(4 + 2*3); o != 0 {
		info.body = msg.GetInt64(flatbuffers.UOffsetT(o) + msg.Pos)
	}
	if err := fb.keyValues(msg, 4); err != nil {
		return info, err
	}
	var htype byte
	if o := msg.Offset(4 + 2*1); o != 0 {
		htype = msg.GetByte(flatbuffers.UOffsetT(o) + msg.Pos)
	}
	info.htype = htype
	h, ok := fb.table(msg, 2)
	if !ok {
		return info, nil
	}
	switch htype {
	case 1: // Schema
		err = fb.schema(h)
	case 2: // DictionaryBatch{id, data: RecordBatch, isDelta}
		if rb, ok := fb.table(h, 1); ok {
			err = fb.recordBatch(rb, &info)
		}
	case 3: // RecordBatch{length, nodes, buffers, compression}
		if o := h.Offset(4); o != 0 {
			info.rows = h.GetInt64(flatbuffers.UOffsetT(o) + h.Pos)
		}
		err = fb.recordBatch(h, &info)
	}
	if err != nil {
		return info, err
	}
	for i, b := range info.buffers {
		if b[0] < 0 || b[1] < 0 || b[0] > info.body || b[1] > info.body-b[0] {
			return info, fmt.Errorf("buffer %d (offset %d, %d bytes) lies outside the %d-byte body", i, b[0], b[1], info.body)
		}
	}
	return info, nil
}

// A compressed buffer may claim at most max(minClaim, maxRatio × its
// compressed size) uncompressed bytes. Real text compresses 3–20×; a claim
// beyond this is a corrupt length that would make arrow allocate (and zero)
// gigabytes.
const (
	minClaim = 64 << 20
	maxRatio = 4096
)

// checkBody reads the 8-byte uncompressed-size prefix of every compressed
// buffer of a message whose body starts at bodyOff.
func checkBody(f *os.File, bodyOff int64, info msgInfo) error {
	if !info.compressed {
		return nil
	}
	var pre [8]byte
	for i, b := range info.buffers {
		if b[1] < 8 {
			continue
		}
		if _, err := f.ReadAt(pre[:], bodyOff+b[0]); err != nil {
			return fmt.Errorf("buffer %d: %w", i, err)
		}
		if n := int64(binary.LittleEndian.Uint64(pre[:])); n != -1 && (n < 0 || n > max(minClaim, maxRatio*b[1])) {
			return fmt.Errorf("compressed buffer %d claims %d uncompressed bytes", i, n)
		}
	}
	return nil
}

// schema: endianness, fields [Field], custom_metadata [KeyValue], features [long].
func (fb fbuf) schema(s flatbuffers.Table) error {
	if err := fb.fields(s, 1, 0); err != nil {
		return err
	}
	if err := fb.keyValues(s, 2); err != nil {
		return err
	}
	_, _, err := fb.vector(s, 3, 8)
	return err
}

// fields checks the Field tables in slot: name, nullable, type_type, type,
// dictionary, children [Field], custom_metadata [KeyValue].
func (fb fbuf) fields(t flatbuffers.Table, slot, depth int) error {
	if depth > 64 {
		return errors.New("schema nested more than 64 levels deep")
	}
	n, start, err := fb.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		f := fb.elemTable(start, i)
		if _, _, err := fb.vector(f, 0, 1); err != nil {
			return err
		}
		if err := fb.fields(f, 5, depth+1); err != nil {
			return err
		}
		if err := fb.keyValues(f, 6); err != nil {
			return err
		}
		var ttype byte
		if o := f.Offset(4 + 2*2); o != 0 {
			ttype = f.GetByte(flatbuffers.UOffsetT(o) + f.Pos)
		}
		if ty, ok := fb.table(f, 3); ok && ttype == 14 { // Union{mode, typeIds [int]}: the only vector in a type
			if _, _, err := fb.vector(ty, 1, 4); err != nil {
				return err
			}
		}
	}
	return nil
}

func (fb fbuf) keyValues(t flatbuffers.Table, slot int) error {
	n, start, err := fb.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		kv := fb.elemTable(start, i)
		if _, _, err := fb.vector(kv, 0, 1); err != nil {
			return err
		}
		if _, _, err := fb.vector(kv, 1, 1); err != nil {
			return err
		}
	}
	return nil
}

// recordBatch: length, nodes [FieldNode 16B], buffers [Buffer 16B],
// compression, variadicBufferCounts [long].
func (fb fbuf) recordBatch(rb flatbuffers.Table, info *msgInfo) error {
	for _, v := range []struct{ slot, size int }{{1, 16}, {2, 16}, {4, 8}} {
		if _, _, err := fb.vector(rb, v.slot, v.size); err != nil {
			return err
		}
	}
	n, start, _ := fb.vector(rb, 2, 16)
	for i := range n {
		p := int(start) + 16*i
		info.buffers = append(info.buffers, [2]int64{
			int64(binary.LittleEndian.Uint64(fb.b[p:])), int64(binary.LittleEndian.Uint64(fb.b[p+8:])),
		})
	}
	_, info.compressed = fb.table(rb, 3)
	return nil
}

// validateFile checks the IPC file footer (its schema, and that every
// block's offset, metadata length and body length lie inside the file) and
// the message metadata each block points at.
func validateFile(f *os.File, size int64, lay *ipcLayout) error {
	if size < 8+10 {
		return errors.New("file too short for an Arrow IPC file")
	}
	var tail [10]byte
	if _, err := f.ReadAt(tail[:], size-10); err != nil {
		return err
	}
	if string(tail[4:]) != "ARROW1" {
		return errors.New("missing the trailing ARROW1 magic (truncated?)")
	}
	flen := int64(int32(binary.LittleEndian.Uint32(tail[:4])))
	if flen <= 0 || flen > size-18 || flen > maxMetadata {
		return fmt.Errorf("footer length %d does not fit in the file", flen)
	}
	footer := make([]byte, flen)
	if _, err := f.ReadAt(footer, size-10-flen); err != nil {
		return err
	}
	fb := fbuf{footer}
	root, err := fb.root()
	if err != nil {
		return err
	}
	if s, ok := fb.table(root, 1); ok {
		if err := fb.schema(s); err != nil {
			return fmt.Errorf("footer schema: %w", err)
		}
	}
	for _, slot := range []int{2, 3} { // dictionaries, recordBatches: [Block 24B]
		n, start, err := fb.vector(root, slot, 24)
		if err != nil {
			return err
		}
		for i := range n {
			p := int(start) + 24*i
			boff := int64(binary.LittleEndian.Uint64(footer[p:]))
			mlen := int64(int32(binary.LittleEndian.Uint32(footer[p+8:])))
			blen := int64(binary.LittleEndian.Uint64(footer[p+16:]))
			if boff < 8 || mlen < 8 || blen < 0 || boff > size || mlen > maxMetadata || blen > size || boff+mlen+blen > size {
				return fmt.Errorf("footer block %d lies outside the file", i)
			}
			meta := make([]byte, mlen)
			if _, err := f.ReadAt(meta, boff); err != nil {
				return fmt.Errorf("footer block %d: %w", i, err)
			}
			// The block's metadata length includes the length prefix.
			skip := 4
			if binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
				skip = 8
			}
			info, err := checkMessage(meta[skip:])
			if err != nil {
				return fmt.Errorf("block %d at offset %d: %w", i, boff, err)
			}
			if info.body != blen {
				return fmt.Errorf("block %d at offset %d: body length %d, footer says %d", i, boff, info.body, blen)
			}
			if slot == 2 {
				lay.dicts++
			} else {
				lay.offsets, lay.rows = append(lay.offsets, boff), append(lay.rows, info.rows)
			}
			if err := checkBody(f, boff+mlen, info); err != nil {
				return fmt.Errorf("block %d at offset %d: %w", i, boff, err)
			}
		}
	}
	return nil
}
