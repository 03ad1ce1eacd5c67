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
