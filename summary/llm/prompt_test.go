package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

func TestElide(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		elided    bool
		head      string
		tail      string
		omitted   string
		totalText string
	}{
		{"short", "hello", false, "", "", "", ""},
		{"exactly 3000", strings.Repeat("a", 3000), false, "", "", "", ""},
		{"3001 ascii", strings.Repeat("a", 1500) + strings.Repeat("b", 1001) + strings.Repeat("c", 500),
			true, strings.Repeat("a", 1500), strings.Repeat("c", 500), "1,001", "3,001"},
		{"multibyte", strings.Repeat("ü", 1500) + strings.Repeat("中", 8000) + strings.Repeat("é", 500),
			true, strings.Repeat("ü", 1500), strings.Repeat("é", 500), "8,000", "10,000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Elide(tt.in)
			if !tt.elided {
				if got != tt.in {
					t.Errorf("Elide changed a short value")
				}
				return
			}
			if !utf8.ValidString(got) {
				t.Fatalf("Elide split a UTF-8 sequence")
			}
			if !strings.HasPrefix(got, tt.head+"\n⟪") || !strings.HasSuffix(got, "⟫\n"+tt.tail) {
				t.Errorf("Elide = %.80q…, want head %d + marker + tail %d chars", got, ElideHead, ElideTail)
			}
			marker := "⟪" + tt.omitted + " of " + tt.totalText + " chars omitted"
			if !strings.Contains(got, marker) {
				t.Errorf("Elide lacks %q", marker)
			}
		})
	}
}

func TestCommas(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := commas(in); got != want {
			t.Errorf("commas(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderTurns(t *testing.T) {
	turns := []traj.Turn{
		{Role: traj.RoleUser, Name: "human", Text: "hi"},
		{Role: traj.RoleTool, Text: "result"},
		{Text: "??"},
	}
	want := "[Turn 7 - HUMAN]:\nhi\n\n[Turn 8 - TOOL]:\nresult\n\n[Turn 9 - UNKNOWN]:\n??"
	if got := RenderTurns(turns, 7); got != want {
		t.Errorf("RenderTurns = %q, want %q", got, want)
	}
}

func TestNormalize(t *testing.T) {
	p := summary.Prefix
	e := "\n" + summary.EndMarker
	tests := []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{"prefixed", p + " The agent ran ls.", p + " The agent ran ls." + e, true},
		{"no prefix", "The agent ran ls.", p + " The agent ran ls." + e, true},
		{"no space", p + "The agent ran ls.", p + " The agent ran ls." + e, true},
		{"duplicated", p + " " + p + " The agent ran ls.", p + " The agent ran ls." + e, true},
		{"duplicated on lines", p + "\n" + p + "\nThe agent ran ls.", p + " The agent ran ls." + e, true},
		{"bold", "**[CONTEXT SUMMARY]:** The agent ran ls.", p + " The agent ran ls." + e, true},
		{"surrounding space", "\n  The agent ran ls.  \n", p + " The agent ran ls." + e, true},
		{"prefix inside kept", "Before. " + p + " after.", p + " Before. " + p + " after." + e, true},
		{"think block dropped", "<think>plan</think>\n" + p + " Done.", p + " Done." + e, true},
		{"multilingual", "代理运行了 ls 命令。", p + " 代理运行了 ls 命令。" + e, true},
		{"empty", "", "", false},
		{"blank", " \n ", "", false},
		{"only prefix", p, "", false},
		{"only prefixes", p + " " + p, "", false},
		{"unclosed think", "<think>planning forever", "", false},
		{"think reopened, nothing after", "</think><think>", "", false},
		{"think reopened after the answer", "<think>a</think>The agent ran ls. <think>more", p + " The agent ran ls." + e, true},
		{"answer then unclosed think", "The agent ran ls.\n<think>hmm", p + " The agent ran ls." + e, true},
		{"end marker kept once", p + " The agent ran ls.\n" + summary.EndMarker, p + " The agent ran ls." + e, true},
		{"after the end marker dropped", "The agent ran ls. " + summary.EndMarker + "\nAnything else?", p + " The agent ran ls." + e, true},
		{"two end markers", "The agent ran ls.\n" + summary.EndMarker + summary.EndMarker, p + " The agent ran ls." + e, true},
		{"only an end marker", p + "\n" + summary.EndMarker, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Normalize(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestIsContextLength(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"vllm", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens","type":"BadRequestError"}}`, CauseContextLength},
		{"llama.cpp", 400, `{"error":{"code":400,"type":"exceed_context_size_error","message":"request (13392 tokens) exceeds the available context size (8192 tokens), try increasing it","n_prompt_tokens":13392,"n_ctx":8192}}`, CauseContextLength},
		{"openai code", 400, `{"error":{"message":"too long","code":"context_length_exceeded"}}`, CauseContextLength},
		{"plain 400", 400, `{"error":{"message":"bad"}}`, CauseBadRequest},
		{"non-JSON 502", 502, `<html>Bad gateway</html>`, CauseServerError},
		{"504", 504, ``, CauseTimeout},
		{"plain 429", 429, `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`, CauseRateLimit},
		{"quota 429 in code", 429, `{"error":{"message":"x","code":"insufficient_quota"}}`, CauseQuota},
		{"402", 402, `{"error":{"message":"Insufficient credits","code":402}}`, CauseQuota},
		{"403", 403, ``, CauseAuth},
		{"404", 404, ``, CauseNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := statusError(tt.status, []byte(tt.body), nil, time.Now())
			if e.Cause != tt.want {
				t.Errorf("cause = %s, want %s", e.Cause, tt.want)
			}
		})
	}
}

func TestPerMinute(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newPerMinute(60) // one per second, burst 60
	b.now = func() time.Time { return now }
	delay := func(n int) time.Duration { return b.reserve(n).DelayFrom(now) }
	for i := range 60 {
		if d := delay(1); d != 0 {
			t.Fatalf("reservation %d within the burst waits %v", i, d)
		}
	}
	if d := delay(1); d != time.Second {
		t.Errorf("61st reservation waits %v, want 1s", d)
	}
	if d := delay(1); d != 2*time.Second {
		t.Errorf("62nd reservation waits %v, want 2s (queued)", d)
	}
	now = now.Add(2 * time.Second)
	if d := delay(1); d != time.Second {
		t.Errorf("after 2s the next reservation waits %v, want 1s", d)
	}
	if d := delay(1000); d > 62*time.Second || d < 60*time.Second {
		t.Errorf("an oversized reservation waits %v, want about one full bucket", d)
	}
	if newPerMinute(0) != nil {
		t.Errorf("a zero limit makes a limiter")
	}
	var off *perMinute
	if err := off.wait(context.Background(), 1e9); err != nil {
		t.Errorf("a nil limiter waits: %v", err)
	}
}

func TestPerMinuteWaitCancelled(t *testing.T) {
	b := newPerMinute(1)
	if err := b.wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.wait(ctx, 1); err != context.Canceled {
		t.Errorf("wait on a cancelled ctx = %v", err)
	}
}

func TestRPMLimitsRequests(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	c := client(t, url, func(c *Config) { c.RPM = 2 })
	// Two requests fit the burst; the third would wait 30 s for its token.
	// Only that one has a deadline, so a slow machine cannot fail the first two.
	for i := range 2 {
		if _, err := c.Summarize(context.Background(), region(2+i, 10)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Summarize(ctx, region(4, 10))
	if srv.Requests() != 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("requests = %d, third error %v; want 2 requests and a deadline", srv.Requests(), err)
	}
}

func TestTPMLimitsRequests(t *testing.T) {
	srv, url := serve(t, mock.Config{})
	// Each request charges its prompt (~250 tokens) plus max_tokens (200).
	c := client(t, url, func(c *Config) { c.TPM = 600 })
	_, err1 := c.Summarize(context.Background(), region(2, 10))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err2 := c.Summarize(ctx, region(3, 10))
	if err1 != nil || !errors.Is(err2, context.DeadlineExceeded) || srv.Requests() != 1 {
		t.Errorf("errors %v, %v; %d requests; want the second to wait for tokens", err1, err2, srv.Requests())
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "x", summary.Prefix, summary.Prefix + " a", "**[CONTEXT SUMMARY]:** b", "<think>a</think>c", "<think>",
		"</think><think>", "a\n" + summary.EndMarker + "b", summary.EndMarker, summary.Prefix + summary.EndMarker + summary.Prefix + " x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := Normalize(in)
		if !ok {
			if got != "" {
				t.Fatalf("Normalize(%q) failed with text %q", in, got)
			}
			return
		}
		rest, found := strings.CutPrefix(got, summary.Prefix+" ")
		body, ended := strings.CutSuffix(rest, "\n"+summary.EndMarker)
		if !found || !ended || body == "" || stripPrefix(body) != body || strings.Contains(body, summary.EndMarker) {
			t.Fatalf("Normalize(%q) = %q: not one prefix, text, one end marker", in, got)
		}
		if again, _ := Normalize(got); again != got {
			t.Fatalf("Normalize is not idempotent: %q → %q", got, again)
		}
	})
}
