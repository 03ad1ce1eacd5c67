package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/trajcompress/trajcompress/internal/readfile"
)

// LoadRules reads a YAML rules file (see the package documentation for the
// layout). Unknown keys, a second YAML document, and invalid rules are
// errors naming the file (and the line, where YAML reports one).
func LoadRules(path string) (Rules, error) {
	b, err := readfile.Read(path, "rules file", readfile.SmallLimit)
	if err != nil {
		return Rules{}, fmt.Errorf("check: rules: %w", err)
	}
	r, err := ParseRules(b)
	if err != nil {
		return Rules{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ParseRules is [LoadRules] on bytes already in memory.
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
