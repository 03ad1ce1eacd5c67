package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPeerExampleAcceptedAsIs(t *testing.T) {
	c, err := Load("testdata/peer_example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Compression.TargetMaxTokens != 29000 || c.Metrics.PerTrajectory {
		t.Errorf("example values not read: %+v", c)
	}
	if c.Summarization.BaseURL != Default().Summarization.BaseURL {
		t.Errorf("base_url: null must keep the default, got %q", c.Summarization.BaseURL)
	}
	if c.Output.SummaryNoticeText != "\n\nSome of the conversation may be summarized to preserve context." {
		t.Errorf("notice %q", c.Output.SummaryNoticeText)
	}
	if c.Processing.NumWorkers != 4 || c.Processing.Timeout() != 300*time.Second {
		t.Errorf("processing %+v", c.Processing)
	}
	if c.Tokenizer.Name != "moonshotai/Kimi-K2-Thinking" {
		t.Errorf("tokenizer name must be kept for the caller to refuse or override, got %q", c.Tokenizer.Name)
	}
}

func TestDefaults(t *testing.T) {
	for _, in := range []string{"", "{}", "# only a comment\n", "compression: null\n"} {
		c, err := Parse([]byte(in), "x.yaml")
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if c != Default() {
			t.Errorf("%q: got %+v, want defaults", in, c)
		}
	}
	d := Default()
	if d.Compression.TargetMaxTokens != 15250 || d.Compression.SummaryTargetTokens != 750 || d.ProtectedTurns.LastNTurns != 4 || !d.Processing.SkipUnderTarget {
		t.Errorf("defaults differ from the peer's: %+v", d)
	}
}

func TestPartialOverride(t *testing.T) {
	c, err := Parse([]byte("compression:\n  target_max_tokens: 1000\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Compression.TargetMaxTokens = 1000
	if c != want {
		t.Errorf("got %+v", c)
	}
}

func TestPrepassAndRedaction(t *testing.T) {
	d := Default()
	if d.Compression.Prepass || !d.Redaction.Enabled {
		t.Fatalf("defaults: prepass %v, redaction %v; want off and on", d.Compression.Prepass, d.Redaction.Enabled)
	}
	c, err := Parse([]byte("compression:\n  prepass: true\nredaction:\n  enabled: false\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Compression.Prepass || c.Redaction.Enabled {
		t.Errorf("got prepass %v, redaction %v", c.Compression.Prepass, c.Redaction.Enabled)
	}
	if _, err := Parse([]byte("redaction:\n  enable: false\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "unknown key redaction.enable") {
		t.Errorf("misspelt key: %v", err)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown_key", "compression:\n  target_max_tokens: 10\n  tagret: 3\n", "x.yaml: unmarshal errors:\n  line 3: unknown key compression.tagret"},
		{"unknown_section", "compresion:\n  target_max_tokens: 10\n", "line 1: unknown key compresion"},
		{"bad_type", "compression:\n  target_max_tokens: lots\n", "line 2: cannot unmarshal !!str `lots` into int"},
		{"negative_last_n", "protected_turns:\n  last_n_turns: -1\n", "protected_turns.last_n_turns must be >= 0, got -1"},
		{"zero_target", "compression:\n  target_max_tokens: 0\n", "compression.target_max_tokens must be > 0"},
		{"save_over_limit", "processing:\n  save_over_limit: false\n", "processing.save_over_limit: false is not supported"},
		{"method", "summarization:\n  method: magic\n", `summarization.method must be deterministic or llm, got "magic"`},
		{"role", "output:\n  summary_role: tool\n", "output.summary_role must be user, assistant or system"},
		{"not_yaml", "compression: [1, 2\n", "x.yaml:"},
		{"summary_not_below_target", "compression:\n  target_max_tokens: 500\n  summary_target_tokens: 500\n", "compression.summary_target_tokens (500) must be below compression.target_max_tokens (500)"},
		{"suffix_path", "output:\n  output_suffix: /../../evil\n", `output.output_suffix "/../../evil" must be a plain name suffix`},
		{"workers", "processing:\n  num_workers: 100000000\n", "processing.num_workers 100000000 is more than this program can use"},
		{"request_timeout", "summarization:\n  request_timeout: -1\n", "summarization.request_timeout must be in [0, 1e6] seconds (0: 120), got -1"},
		{"image_tokens", "tokenizer:\n  image_tokens: qwen\n", `tokenizer.image_tokens (--image-tokens) is auto or a rule: image token rule "qwen": want openai or flat:N`},
		{"image_tokens_negative", "tokenizer:\n  image_tokens: flat:-1\n", `(--image-tokens) is auto or a rule: image token rule "flat:-1": flat:N needs a whole number N from 0 to 1000000`},
		{"image_tokens_huge", "tokenizer:\n  image_tokens: flat:2000000000000000000\n", `(--image-tokens) is auto or a rule: image token rule "flat:2000000000000000000": flat:N needs a whole number N from 0 to 1000000`},
		{"turn_overhead_huge", "tokenizer:\n  turn_overhead: 9223372036854775807\n", "tokenizer.turn_overhead must be in [0, 1048576]"},
		// Durations that would overflow a time.Duration (1e300 s became a
		// negative timeout: every summary timed out at once), and NaN.
		{"retry_delay_huge", "summarization:\n  retry_delay: 1e300\n", "summarization.retry_delay must be in [0, 1e6] seconds, got 1e+300"},
		{"retry_delay_nan", "summarization:\n  retry_delay: .nan\n", "summarization.retry_delay must be in [0, 1e6] seconds, got NaN"},
		{"timeout_huge", "processing:\n  per_trajectory_timeout: 1e300\n", "processing.per_trajectory_timeout must be in [0, 1e6] seconds (0: none), got 1e+300"},
		{"timeout_inf", "processing:\n  per_trajectory_timeout: .inf\n", "processing.per_trajectory_timeout must be in [0, 1e6] seconds (0: none), got +Inf"},
		{"request_timeout_nan", "summarization:\n  request_timeout: .nan\n", "summarization.request_timeout must be in [0, 1e6] seconds (0: 120), got NaN"},
		{"retries_huge", "summarization:\n  max_retries: 9223372036854775807\n", "summarization.max_retries must be in [1, 1000], got 9223372036854775807"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "x.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "config x.yaml: ") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !os.IsNotExist(unwrapAll(err)) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestFractionalIntegerRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"compression:\n  target_max_tokens: 15250.5\n", "line 2: compression.target_max_tokens: 15250.5 is not a whole number"},
		{"protected_turns:\n  last_n_turns: 1.5\n", "protected_turns.last_n_turns: 1.5 is not a whole number"},
		{"processing:\n  num_workers: 2.25\n", "processing.num_workers: 2.25"},
	} {
		_, err := Parse([]byte(c.yaml), "c.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "c.yaml") {
			t.Errorf("%q: err = %v, want it to contain %q and the file name", c.yaml, err, c.want)
		}
	}
	// A whole number written as a float is that number.
	c, err := Parse([]byte("compression:\n  target_max_tokens: 16000.0\n"), "c.yaml")
	if err != nil || c.Compression.TargetMaxTokens != 16000 {
		t.Errorf("16000.0: %v, %d", err, c.Compression.TargetMaxTokens)
	}
}

func TestMetricsOutputFileIsAName(t *testing.T) {
	for _, v := range []string{"../evil.json", "a/b.json", `a\b.json`, ".."} {
		_, err := Parse([]byte("metrics:\n  output_file: '"+v+"'\n"), "c.yaml")
		if err == nil || !strings.Contains(err.Error(), "metrics.output_file") {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}

func TestImageTokens(t *testing.T) {
	for _, v := range []string{"auto", "openai", "flat:85", "flat:0"} {
		c, err := Parse([]byte("tokenizer:\n  image_tokens: \""+v+"\"\n"), "x.yaml")
		if err != nil || c.Tokenizer.ImageTokens != v {
			t.Errorf("image_tokens %s: %v, read %q", v, err, c.Tokenizer.ImageTokens)
		}
	}
	if Default().Tokenizer.ImageTokens != "" {
		t.Errorf("default image_tokens %q, want \"\" (auto)", Default().Tokenizer.ImageTokens)
	}
}
