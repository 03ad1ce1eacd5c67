package jsonval

// AddHFFeature adds a string Value feature to the datasets "huggingface"
// metadata JSON ({"info":{"features":{...}}}), keeping key order.
// Metadata that does not have that shape is returned unchanged.
func AddHFFeature(meta, name string) string {
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
	fo.Keys = append(fo.Keys, name)
	fo.Vals = append(fo.Vals, &Object{
		Keys: []string{"dtype", "_type"},
		Vals: []any{"string", "Value"},
	})
	return string(Append(nil, root))
}
