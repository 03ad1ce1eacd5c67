package config

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

// A flag given overrides the file's setting; a flag not given leaves it,
// even where the flag's zero value differs from the file's.
func TestFlagsApplyOnlyGiven(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs, CompressGroups...)
	if err := fs.Parse([]string{"--target-max-tokens", "100", "--prepass", "--tokenizer", "cl100k_base"}); err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("compression:\n  summary_target_tokens: 300\noutput:\n  alternation: true\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.Apply(&c)
	if c.Compression.TargetMaxTokens != 100 || !c.Compression.Prepass || c.Tokenizer.Name != "cl100k_base" {
		t.Errorf("flags given not applied: %+v %+v", c.Compression, c.Tokenizer)
	}
	if c.Compression.SummaryTargetTokens != 300 || !c.Output.Alternation || c.ProtectedTurns.LastNTurns != 4 {
		t.Errorf("a flag not given changed the config: %+v %+v", c.Compression, c.Output)
	}
	if !f.Set("prepass") || f.Set("alternation") {
		t.Errorf("Set: prepass %v, alternation %v", f.Set("prepass"), f.Set("alternation"))
	}
}

// Every option sets a setting of its own: no two flags (in any groups)
// share a name or a config field, so that registering any groups together
// cannot panic or let one flag silently override another.
func TestOptionsDistinct(t *testing.T) {
	names := map[string]string{}
	fields := map[uintptr]string{}
	var c Config
	base := reflect.ValueOf(&c).Pointer()
	for _, g := range CompressGroups {
		if len(g.Options) == 0 {
			t.Errorf("group %s has no option", g.Name)
		}
		for _, o := range g.Options {
			if prev, ok := names[o.Name]; ok {
				t.Errorf("--%s is in groups %s and %s", o.Name, prev, g.Name)
			}
			names[o.Name] = g.Name
			off := reflect.ValueOf(o.field(&c)).Pointer() - base
			if prev, ok := fields[off]; ok {
				t.Errorf("--%s and --%s set the same setting", o.Name, prev)
			}
			fields[off] = o.Name
			if o.Usage == "" {
				t.Errorf("--%s has no text", o.Name)
			}
		}
	}
	// validate's groups are among compress's.
	for _, g := range ValidateGroups {
		for _, o := range g.Options {
			if _, ok := names[o.Name]; !ok {
				t.Errorf("validate's --%s is not a compress flag", o.Name)
			}
		}
	}
}

// validate's flag texts say only what applies to validate: it fits
// nothing (no target, no --target-max-tokens), places no summary (no
// --alternation) and reads no config file (no config keys); compress's
// texts do not speak of validate. Every validate-only text is of a flag
// validate registers.
func TestValidateTexts(t *testing.T) {
	compressOnly := []string{"fit", "target", "--alternation"}
	names := map[string]bool{}
	for _, g := range ValidateGroups {
		for _, o := range g.Options {
			names[o.Name] = true
			for _, w := range compressOnly {
				if strings.Contains(o.Usage, w) {
					t.Errorf("validate --%s speaks of %q: %s", o.Name, w, o.Usage)
				}
			}
			if configKey.MatchString(o.Usage) || strings.Contains(o.Usage, "config tokenizer.") || strings.Contains(o.Usage, "config input.") {
				t.Errorf("validate --%s names a config key: %s", o.Name, o.Usage)
			}
			if strings.Contains(o.Usage, "()") || strings.Contains(o.Usage, "( ") {
				t.Errorf("validate --%s: an empty parenthesis left: %s", o.Name, o.Usage)
			}
		}
	}
	for name := range validateUsage {
		if !names[name] {
			t.Errorf("validateUsage has --%s, which validate does not register", name)
		}
	}
	for _, g := range CompressGroups {
		for _, o := range g.Options {
			if strings.Contains(o.Usage, "validate:") {
				t.Errorf("compress --%s speaks of validate: %s", o.Name, o.Usage)
			}
		}
	}
}
