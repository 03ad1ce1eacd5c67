package jsonval

// SetHFFeature sets the feature of column name in the datasets
// "huggingface" metadata JSON ({"info":{"features":{...}}}) to the
// feature of type t (see [HFFeature]), replacing an entry of that name in
// place or appending one, keeping key order. Metadata that does not have
// that shape is returned unchanged.
func SetHFFeature(meta, name string, t *Type) string {
	root, err := DecodeObject([]byte(meta))
	if err != nil {
		return meta
	}
	info, _ := root.Get("info")
	io, ok := info.(*Object)
	if !ok {
		return meta
	}
	feats, _ := io.Get("features")
	fo, ok := feats.(*Object)
	if !ok {
		return meta
	}
	f := HFFeature(t)
	for i, k := range fo.Keys {
		if k == name {
			fo.Vals[i] = f
			return string(Append(nil, root))
		}
	}
	fo.Keys = append(fo.Keys, name)
	fo.Vals = append(fo.Vals, f)
	return string(Append(nil, root))
}

// AddHFFeature is [SetHFFeature] with a string column.
func AddHFFeature(meta, name string) string {
	return SetHFFeature(meta, name, &Type{Kind: KindString})
}

// HFFeature is the datasets feature (as serialised in the "huggingface"
// metadata and dataset_info.json) of a column of type t: Value("bool"),
// Value("int64"), Value("float64") or Value("string") (also for JSON text),
// a struct as a plain object of its fields' features, a list as
// Sequence(feature).
func HFFeature(t *Type) any {
	value := func(dtype string) any {
		return &Object{Keys: []string{"dtype", "_type"}, Vals: []any{dtype, "Value"}}
	}
	switch t.Kind {
	case KindBool:
		return value("bool")
	case KindInt:
		return value("int64")
	case KindFloat:
		return value("float64")
	case KindBytes:
		return value("binary")
	case KindList:
		return &Object{Keys: []string{"feature", "_type"}, Vals: []any{HFFeature(t.Elem), "Sequence"}}
	case KindStruct:
		o := &Object{}
		for _, f := range t.Fields {
			o.Keys = append(o.Keys, f.Name)
			o.Vals = append(o.Vals, HFFeature(f.Type))
		}
		return o
	}
	return value("string")
}

// WithHFImages types as datasets stores them the columns that the datasets
// features in meta (the "huggingface" metadata JSON) declare as Image:
// struct<bytes: binary, path: string>, at any depth (in structs and in
// lists: a Python list, Sequence, List or LargeList feature). Inference
// alone makes the bytes a string column of base64 text, and a loader
// trusting the features would read that text as the image. Only a
// position inferred as a struct of at most bytes and path is retyped;
// anything else, and metadata that does not parse, leaves t as it is. It
// changes t in place and returns it.
func WithHFImages(t *Type, meta string) *Type {
	root, err := DecodeObject([]byte(meta))
	if err != nil {
		return t
	}
	info, _ := root.Get("info")
	io, ok := info.(*Object)
	if !ok {
		return t
	}
	feats, _ := io.Get("features")
	return withImages(t, feats)
}

func withImages(t *Type, feat any) *Type {
	switch f := feat.(type) {
	case []any:
		if len(f) == 1 && t.Kind == KindList {
			t.Elem = withImages(t.Elem, f[0])
		}
	case *Object:
		typ, _ := f.Get("_type")
		switch typ {
		case "Image":
			if t.Kind != KindStruct {
				return t
			}
			for _, fl := range t.Fields {
				if fl.Name != "bytes" && fl.Name != "path" {
					return t
				}
			}
			return &Type{Kind: KindStruct, Fields: []*Field{
				{Name: "bytes", Type: &Type{Kind: KindBytes}}, {Name: "path", Type: &Type{Kind: KindString}}}}
		case "Sequence", "List", "LargeList":
			if e, ok := f.Get("feature"); ok && t.Kind == KindList {
				t.Elem = withImages(t.Elem, e)
			}
		case nil:
			if t.Kind == KindStruct {
				for _, fl := range t.Fields {
					if sub, ok := f.Get(fl.Name); ok {
						fl.Type = withImages(fl.Type, sub)
					}
				}
			}
		}
	}
	return t
}
