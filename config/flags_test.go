package config

import (
	"flag"
	"io"
	"reflect"
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
