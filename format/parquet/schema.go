package parquet

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
)

// KeyValue is one entry of the Parquet file's key/value metadata.
type KeyValue struct{ Key, Value string }

// Schema is the column layout of a Parquet file plus its key/value metadata
// (for example the "huggingface" features JSON). It is immutable and safe
// for concurrent use. Obtain one from [Reader.Schema] or [InferSchema].
type Schema struct {
	root     pq.Node // an ordered group; top-level column order = JSON key order
	metadata []KeyValue
}

// Columns returns the top-level column names in file order.
func (s *Schema) Columns() []string {
	var names []string
	for _, f := range s.root.Fields() {
		names = append(names, f.Name())
	}
	return names
}

// Metadata returns the key/value metadata entry for key.
func (s *Schema) Metadata(key string) (string, bool) {
	for _, kv := range s.metadata {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// KeyValues returns a copy of all key/value metadata entries in file order.
func (s *Schema) KeyValues() []KeyValue { return append([]KeyValue(nil), s.metadata...) }

// String renders the schema in Parquet's message syntax.
func (s *Schema) String() string { return pq.NewSchema("schema", s.root).String() }

// group is a Parquet group node that keeps its fields in the given order
// (parquet.Group is a map and sorts them). typ carries the LIST/MAP logical
// annotation when there is one.
type group struct {
	fields []pq.Field
	typ    pq.Type
}

var (
	groupType = pq.Group{}.Type()
	listType  = pq.List(pq.String()).Type()
	mapType   = pq.Map(pq.String(), pq.String()).Type()
)

func newGroup(typ pq.Type, fields ...pq.Field) *group {
	if typ == nil {
		typ = groupType
	}
	return &group{fields: fields, typ: typ}
}

func (g *group) ID() int                     { return 0 }
func (g *group) String() string              { return pq.NewSchema("group", g).String() }
func (g *group) Type() pq.Type               { return g.typ }
func (g *group) Optional() bool              { return false }
func (g *group) Repeated() bool              { return false }
func (g *group) Required() bool              { return true }
func (g *group) Leaf() bool                  { return false }
func (g *group) Fields() []pq.Field          { return g.fields }
func (g *group) Encoding() encoding.Encoding { return nil }
func (g *group) Compression() compress.Codec { return nil }
func (g *group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }
func (g *group) lookup(name string) pq.Field {
	for _, f := range g.fields {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// field names a node inside a group.
type field struct {
	pq.Node
	name string
}

func (f *field) Name() string                           { return f.name }
func (f *field) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func named(name string, n pq.Node) pq.Field { return &field{Node: n, name: name} }

// ownNode copies a (file) schema node into package-owned nodes: ordered
// groups, plain leaves, the same repetition and logical types, and no
// per-column encoding or compression so that the writer's options apply.
func ownNode(n pq.Node) pq.Node {
	var out pq.Node
	if n.Leaf() {
		out = pq.Leaf(n.Type())
	} else {
		var fields []pq.Field
		for _, f := range n.Fields() {
			fields = append(fields, named(f.Name(), ownNode(f)))
		}
		typ := groupType
		switch logical(n.Type()).(type) {
		case *format.ListType:
			typ = listType
		case *format.MapType:
			typ = mapType
		}
		out = newGroup(typ, fields...)
	}
	switch {
	case n.Repeated():
		out = pq.Repeated(out)
	case n.Optional():
		out = pq.Optional(out)
	}
	return out
}

// InferSchema derives a schema from sample JSON objects (see the package
// doc for the rules). Lists are written in the standard 3-level layout
// (`optional group x (LIST) { repeated group list { optional element } }`),
// as pyarrow writes them; structs become optional groups, JSON-kind
// columns become strings annotated JSON. Keys named in except are left
// out (see [WriterOptions.Extra]).
func InferSchema(sample [][]byte, except ...string) (*Schema, error) {
	return InferSchemaFeatures(sample, "", except...)
}

// InferSchemaFeatures is [InferSchema] for records read from a file of
// another format whose "huggingface" metadata is features: the columns
// it declares as datasets Image values, inferred as structs of bytes and
// path or seen only as null or in empty lists (a sample without images),
// get datasets' layout, struct<bytes: binary, path: string>, so the
// base64 text of the records is written back as the image's bytes (see
// jsonval.WithHFImages). The metadata itself is not added: see
// [Schema.WithKeyValues].
func InferSchemaFeatures(sample [][]byte, features string, except ...string) (*Schema, error) {
	t, err := jsonval.Infer(sample, except...)
	if err != nil {
		return nil, fmt.Errorf("parquet: infer schema: %w", err)
	}
	if features != "" {
		t = jsonval.WithHFImages(t, features)
	}
	if t.Kind != jsonval.KindStruct {
		return nil, fmt.Errorf("parquet: infer schema: the sample objects have no keys")
	}
	var fields []pq.Field
	for _, f := range t.Fields {
		fields = append(fields, named(f.Name, pq.Optional(nodeOf(f.Type))))
	}
	return &Schema{root: newGroup(nil, fields...)}, nil
}

func nodeOf(t *jsonval.Type) pq.Node {
	switch t.Kind {
	case jsonval.KindBool:
		return pq.Leaf(pq.BooleanType)
	case jsonval.KindInt:
		return pq.Leaf(pq.Int64Type)
	case jsonval.KindFloat:
		return pq.Leaf(pq.DoubleType)
	case jsonval.KindString:
		return pq.String()
	case jsonval.KindBytes:
		return pq.Leaf(pq.ByteArrayType)
	case jsonval.KindList:
		return listOf(pq.Optional(nodeOf(t.Elem)))
	case jsonval.KindStruct:
		var fields []pq.Field
		for _, f := range t.Fields {
			fields = append(fields, named(f.Name, pq.Optional(nodeOf(f.Type))))
		}
		return newGroup(nil, fields...)
	default:
		return pq.JSON()
	}
}

func listOf(elem pq.Node) pq.Node {
	return newGroup(listType, named("list", pq.Repeated(newGroup(nil, named("element", elem)))))
}

// WithKeyValues returns s with the given key/value metadata entries set:
// an entry of the same key replaced in place, others appended.
func (s *Schema) WithKeyValues(kvs ...KeyValue) *Schema {
	out := &Schema{root: s.root, metadata: s.KeyValues()}
	for _, kv := range kvs {
		i := slices.IndexFunc(out.metadata, func(e KeyValue) bool { return e.Key == kv.Key })
		if i >= 0 {
			out.metadata[i] = kv
		} else {
			out.metadata = append(out.metadata, kv)
		}
	}
	return out
}

// withExtraColumn returns s with the column c (see [WriterOptions.Extra]),
// and whether Write must store non-string values of it as JSON text (a
// string column). A column s lacks is appended last, optional, typed from
// c.Sample; when the "huggingface" metadata holds a features map, the
// column's feature is set in it so `datasets` accepts the file (metadata
// that does not parse is kept as is), and pyarrow's "ARROW:schema" entry,
// which would no longer match, is dropped.
func (s *Schema) withExtraColumn(c Column) (*Schema, bool, error) {
	if c.Name == "" {
		return s, false, nil
	}
	g := s.root.(*group)
	if f := g.lookup(c.Name); f != nil {
		text := f.Leaf() && encOf(f.Type()) == eString
		return s, text, nil
	}
	t := &jsonval.Type{Kind: jsonval.KindString}
	if c.Sample != nil {
		var err error
		if t, err = jsonval.TypeOf(c.Sample); err != nil {
			return nil, false, fmt.Errorf("extra column %q: sample: %w", c.Name, err)
		}
	}
	fields := append(append([]pq.Field(nil), g.fields...), named(c.Name, pq.Optional(nodeOf(t))))
	out := &Schema{root: newGroup(nil, fields...)}
	for _, kv := range s.metadata {
		switch kv.Key {
		case "ARROW:schema":
			// pyarrow's serialized schema would no longer match the columns;
			// readers fall back to the Parquet schema without it.
			continue
		case "huggingface":
			kv.Value = jsonval.SetHFFeature(kv.Value, c.Name, t)
		}
		out.metadata = append(out.metadata, kv)
	}
	return out, t.Kind == jsonval.KindString, nil
}

func encOf(t pq.Type) int {
	e, _ := encodingOf(t)
	return e
}

// plan kinds.
const (
	kLeaf = iota
	kStruct
	kList // LIST-annotated group in the 3-level layout
	kList2
	kMap
)

// leaf value encodings.
const (
	eBool = iota
	eInt32
	eUint32
	eInt64
	eUint64
	eFloat
	eDouble
	eString
	eJSON
	eBytes // base64 in JSON
	eInt96
)

// pnode is the compiled form of a schema node used to assemble rows into
// JSON (Dremel record assembly) and to shred JSON back into rows.
type pnode struct {
	name               string
	kind               int
	optional, repeated bool
	def, rep           int // definition/repetition level when this node is present
	enc                int
	typ                pq.Type
	col                int      // leaf column index
	leaves             []int    // leaf column indexes under this node
	children           []*pnode // struct fields; list: [repeated middle]; map: [key_value]
	elem               *pnode   // kList: the element; kMap: nil
	key, value         *pnode   // kMap
	middle             *pnode   // kList, kMap: the repeated group
	byName             map[string]*pnode
}

func compile(root pq.Node) (*pnode, int, error) {
	col := 0
	p, err := compileNode("", root, 0, 0, &col)
	return p, col, err
}

func compileNode(name string, n pq.Node, def, rep int, col *int) (*pnode, error) {
	p := &pnode{name: name, optional: n.Optional(), repeated: n.Repeated()}
	if p.optional {
		def++
	}
	if p.repeated {
		def++
		rep++
	}
	p.def, p.rep = def, rep
	if n.Leaf() {
		p.kind = kLeaf
		p.typ = n.Type()
		p.col = *col
		p.leaves = []int{*col}
		*col++
		enc, err := encodingOf(p.typ)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", name, err)
		}
		p.enc = enc
		return p, nil
	}
	p.kind = kStruct
	lt := logical(n.Type())
	fields := n.Fields()
	_, isList := lt.(*format.ListType)
	_, isMap := lt.(*format.MapType)
	switch {
	case isList && len(fields) == 1 && fields[0].Repeated():
		mid := fields[0]
		if !mid.Leaf() && len(mid.Fields()) == 1 && mid.Name() != "array" && !strings.HasSuffix(mid.Name(), "_tuple") {
			p.kind = kList
		} else {
			p.kind = kList2 // legacy 2-level list: the repeated child is the element
		}
	case isMap && len(fields) == 1 && fields[0].Repeated() && !fields[0].Leaf():
		p.kind = kMap
	}
	p.byName = map[string]*pnode{}
	for _, f := range fields {
		c, err := compileNode(f.Name(), f, def, rep, col)
		if err != nil {
			if name != "" {
				err = fmt.Errorf("%s.%w", name, err)
			}
			return nil, err
		}
		p.children = append(p.children, c)
		p.byName[f.Name()] = c
		p.leaves = append(p.leaves, c.leaves...)
	}
	if len(p.leaves) == 0 {
		return nil, fmt.Errorf("group %q has no columns", name)
	}
	switch p.kind {
	case kList:
		p.middle = p.children[0]
		p.elem = p.middle.children[0]
	case kMap:
		p.middle = p.children[0]
		p.key, p.value = p.middle.byName["key"], p.middle.byName["value"]
		if p.key == nil || p.key.kind != kLeaf || p.value == nil || len(p.middle.children) != 2 {
			p.kind = kStruct // not a well-formed MAP: carry it as the groups it is
		}
	}
	return p, nil
}

func encodingOf(t pq.Type) (int, error) {
	lt := logical(t)
	switch t.Kind() {
	case pq.Boolean:
		return eBool, nil
	case pq.Int32:
		if it, ok := lt.(*format.IntType); ok && !it.IsSigned {
			return eUint32, nil
		}
		return eInt32, nil
	case pq.Int64:
		if it, ok := lt.(*format.IntType); ok && !it.IsSigned {
			return eUint64, nil
		}
		return eInt64, nil
	case pq.Int96:
		return eInt96, nil
	case pq.Float:
		return eFloat, nil
	case pq.Double:
		return eDouble, nil
	case pq.ByteArray, pq.FixedLenByteArray:
		switch lt.(type) {
		case *format.StringType, *format.EnumType:
			return eString, nil
		case *format.JsonType:
			return eJSON, nil
		}
		return eBytes, nil
	}
	return 0, fmt.Errorf("unsupported physical type %v", t.Kind())
}

// logical returns the logical type annotation of t, or nil.
func logical(t pq.Type) format.LogicalTypeValue {
	if lt := t.LogicalType(); lt != nil {
		return lt.Value
	}
	return nil
}
