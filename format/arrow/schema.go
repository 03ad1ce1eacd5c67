package arrow

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/trajcompress/trajcompress/format/internal/jsonval"
)

// Schema is an Arrow schema including its metadata (for example the
// "huggingface" features JSON). It is immutable and safe for concurrent use.
type Schema struct {
	s *arrow.Schema
}

// Arrow returns the underlying Arrow schema.
func (s *Schema) Arrow() *arrow.Schema { return s.s }

// Columns returns the top-level column names in order.
func (s *Schema) Columns() []string {
	var names []string
	for _, f := range s.s.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// Metadata returns the schema metadata entry for key.
func (s *Schema) Metadata(key string) (string, bool) {
	md := s.s.Metadata()
	if i := md.FindKey(key); i >= 0 {
		return md.Values()[i], true
	}
	return "", false
}

// String renders the schema.
func (s *Schema) String() string { return s.s.String() }

// NewSchema wraps an Arrow schema.
func NewSchema(s *arrow.Schema) *Schema { return &Schema{s: s} }

const (
	extNameKey = "ARROW:extension:name"
	extMetaKey = "ARROW:extension:metadata"
	jsonExt    = "arrow.json"
)

// isJSON reports whether the field is the canonical arrow.json extension
// (utf8 storage whose values are JSON text), as written by datasets' Json()
// feature and by InferSchema for mixed-kind columns.
func isJSON(f arrow.Field) bool {
	if i := f.Metadata.FindKey(extNameKey); i >= 0 {
		return f.Metadata.Values()[i] == jsonExt
	}
	return false
}

func jsonField(name string) arrow.Field {
	return arrow.Field{
		Name: name, Type: arrow.BinaryTypes.String, Nullable: true,
		Metadata: arrow.NewMetadata([]string{extNameKey, extMetaKey}, []string{jsonExt, ""}),
	}
}

// InferSchema derives a schema from sample JSON objects with the rules of
// the package doc: int64, float64, bool, utf8, list<item: …> (the name the
// `datasets` in-memory Arrow uses), struct, and arrow.json-tagged utf8 for
// mixed kinds. All fields are nullable. There is no metadata. Keys named
// in except are left out (see [WriterOptions.Extra]).
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
// [Schema.WithMetadata].
func InferSchemaFeatures(sample [][]byte, features string, except ...string) (*Schema, error) {
	t, err := jsonval.Infer(sample, except...)
	if err != nil {
		return nil, fmt.Errorf("arrow: infer schema: %w", err)
	}
	if features != "" {
		t = jsonval.WithHFImages(t, features)
	}
	if t.Kind != jsonval.KindStruct {
		return nil, fmt.Errorf("arrow: infer schema: the sample objects have no keys")
	}
	var fields []arrow.Field
	for _, f := range t.Fields {
		fields = append(fields, fieldOf(f.Name, f.Type))
	}
	return &Schema{s: arrow.NewSchema(fields, nil)}, nil
}

func fieldOf(name string, t *jsonval.Type) arrow.Field {
	f := arrow.Field{Name: name, Nullable: true}
	switch t.Kind {
	case jsonval.KindBool:
		f.Type = arrow.FixedWidthTypes.Boolean
	case jsonval.KindInt:
		f.Type = arrow.PrimitiveTypes.Int64
	case jsonval.KindFloat:
		f.Type = arrow.PrimitiveTypes.Float64
	case jsonval.KindString:
		f.Type = arrow.BinaryTypes.String
	case jsonval.KindBytes:
		f.Type = arrow.BinaryTypes.Binary
	case jsonval.KindList:
		f.Type = arrow.ListOfField(fieldOf("item", t.Elem))
	case jsonval.KindStruct:
		var fields []arrow.Field
		for _, c := range t.Fields {
			fields = append(fields, fieldOf(c.Name, c.Type))
		}
		f.Type = arrow.StructOf(fields...)
	default:
		return jsonField(name)
	}
	return f
}

// WithMetadata returns s with the given schema metadata entries set: an
// entry of the same key replaced in place, others appended.
func (s *Schema) WithMetadata(kv map[string]string) *Schema {
	md := s.s.Metadata()
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if i := slices.Index(keys, k); i >= 0 {
			vals[i] = kv[k]
		} else {
			keys, vals = append(keys, k), append(vals, kv[k])
		}
	}
	m := arrow.NewMetadata(keys, vals)
	return &Schema{s: arrow.NewSchema(s.s.Fields(), &m)}
}

// withExtraColumn returns s with the column c (see [WriterOptions.Extra]),
// and whether Write must store non-string values of it as JSON text (a
// string column). A column s lacks is appended last, nullable, typed from
// c.Sample, and its feature set in the "huggingface" features metadata
// when that parses.
func (s *Schema) withExtraColumn(c Column) (*Schema, bool, error) {
	if c.Name == "" {
		return s, false, nil
	}
	if i := s.s.FieldIndices(c.Name); len(i) > 0 {
		switch s.s.Field(i[0]).Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return s, !isJSON(s.s.Field(i[0])), nil
		}
		return s, false, nil
	}
	t := &jsonval.Type{Kind: jsonval.KindString}
	if c.Sample != nil {
		var err error
		if t, err = jsonval.TypeOf(c.Sample); err != nil {
			return nil, false, fmt.Errorf("extra column %q: sample: %w", c.Name, err)
		}
	}
	fields := append(append([]arrow.Field(nil), s.s.Fields()...), fieldOf(c.Name, t))
	md := s.s.Metadata()
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	for i, k := range keys {
		if k == "huggingface" {
			vals[i] = jsonval.SetHFFeature(vals[i], c.Name, t)
		}
	}
	m := arrow.NewMetadata(keys, vals)
	return &Schema{s: arrow.NewSchema(fields, &m)}, t.Kind == jsonval.KindString, nil
}
