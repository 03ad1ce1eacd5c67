package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// ParseRules parses a YAML rules file's bytes (see the package
// documentation for the layout; checkfile.LoadRules reads the file).
// Unknown keys, a second YAML document, and invalid rules are errors (with
// the line, where YAML reports one).
func ParseRules(b []byte) (Rules, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var r Rules
	if err := dec.Decode(&r); err != nil {
		if errors.Is(err, io.EOF) {
			return Rules{}, errors.New("check: rules: empty document")
		}
		return Rules{}, fmt.Errorf("check: rules: %w", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Rules{}, errors.New("check: rules: more than one YAML document")
	}
	if len(r.Rules) == 0 {
		return Rules{}, errors.New("check: rules: no rules")
	}
	if err := r.Validate(); err != nil {
		return Rules{}, err
	}
	return r, nil
}
