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
// lists: a Python list, Sequence, List or LargeList feature, and the
// older Sequence of a dict, stored as a struct of lists). Inference
// alone makes the bytes a string column of base64 text, and a loader
// trusting the features would read that text as the image. A position
// inferred as a struct of at most bytes and path is retyped; so is a
// position the sample held only as null or as the element of lists that
// were always empty (a dataset whose first rows have no image): it gets
// its type from the features alone (see [featureType]) when they declare
// an Image in it. Anything else, and metadata that does not parse,
// leaves t as it is. It changes t in place and returns it.
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

// imageType is datasets' layout of an Image value.
func imageType() *Type {
	return &Type{Kind: KindStruct, Fields: []*Field{
		{Name: "bytes", Type: &Type{Kind: KindBytes}}, {Name: "path", Type: &Type{Kind: KindString}}}}
}

func withImages(t *Type, feat any) *Type {
	if t.unseen {
		if ft, img := featureType(feat); img {
			return ft
		}
		return t
	}
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
			return imageType()
		case "Sequence", "List", "LargeList":
			e, ok := f.Get("feature")
			switch {
			case !ok:
			case t.Kind == KindList:
				t.Elem = withImages(t.Elem, e)
			case typ == "Sequence" && t.Kind == KindStruct && isDict(e):
				// The older Sequence of a dict: a dict of lists.
				d := e.(*Object)
				for _, fl := range t.Fields {
					if sub, ok := d.Get(fl.Name); ok {
						fl.Type = withImages(fl.Type, []any{sub})
					}
				}
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

// isDict reports whether feat is a datasets feature dict (an object of
// features with no _type).
func isDict(feat any) bool {
	o, ok := feat.(*Object)
	if !ok {
		return false
	}
	_, typed := o.Get("_type")
	return !typed
}

// featureType is the column type datasets stores the feature feat as,
// built from the feature alone, and whether an Image is in it: Image →
// struct<bytes, path>, a dict → a struct of its fields in order, a Python
// list, List or LargeList → a list, the older Sequence → a list, or of a
// dict a struct of lists; Value bool → bool, an integer dtype up to int64
// and uint32 and ClassLabel → int, a float dtype → float, binary → bytes;
// anything else → string, the type [Infer] gives a position it never saw
// a value in.
func featureType(feat any) (*Type, bool) {
	str := &Type{Kind: KindString, unseen: true}
	switch f := feat.(type) {
	case []any:
		if len(f) == 1 {
			e, img := featureType(f[0])
			return &Type{Kind: KindList, Elem: e}, img
		}
	case *Object:
		typ, _ := f.Get("_type")
		switch typ {
		case "Image":
			return imageType(), true
		case "Sequence", "List", "LargeList":
			e, ok := f.Get("feature")
			if !ok {
				return str, false
			}
			if d, dict := e.(*Object); dict && typ == "Sequence" && isDict(e) {
				t, img := &Type{Kind: KindStruct}, false
				for i, k := range d.Keys {
					ft, im := featureType([]any{d.Vals[i]})
					t.Fields = append(t.Fields, &Field{Name: k, Type: ft})
					img = img || im
				}
				return t, img && len(t.Fields) > 0
			}
			et, img := featureType(e)
			return &Type{Kind: KindList, Elem: et}, img
		case "ClassLabel":
			return &Type{Kind: KindInt}, false
		case "Value":
			dt, _ := f.Get("dtype")
			switch dt {
			case "bool":
				return &Type{Kind: KindBool}, false
			case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32":
				return &Type{Kind: KindInt}, false
			case "float16", "float32", "float64":
				return &Type{Kind: KindFloat}, false
			case "binary", "large_binary":
				return &Type{Kind: KindBytes}, false
			}
		case nil:
			t, img := &Type{Kind: KindStruct}, false
			for i, k := range f.Keys {
				ft, im := featureType(f.Vals[i])
				t.Fields = append(t.Fields, &Field{Name: k, Type: ft})
				img = img || im
			}
			return t, img && len(t.Fields) > 0
		}
	}
	return str, false
}
