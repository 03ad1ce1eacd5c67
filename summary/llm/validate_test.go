package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/summary"
)

func TestValidateSummary(t *testing.T) {
	ok := summary.Prefix + " " + strings.Repeat("abcd", 20) + "\n" + summary.EndMarker // 124 bytes: 31 tokens under quarter
	tests := []struct {
		name           string
		text           string
		target, region int
		want           string // "" accepted, else part of the violation
	}{
		{"accepted", ok, 100, 1000, ""},
		{"at 1.5 × target", ok, 21, 1000, ""}, // limit ⌊31.5⌋
		{"over 1.5 × target", ok, 20, 1000, "31 tokens long; it must be at most 30 tokens"},
		{"shorter than the region", ok, 100, 32, ""},
		{"as long as the region", ok, 100, 31, "not shorter than the 31 tokens"},
		{"empty", summary.Prefix + " \n" + summary.EndMarker, 100, 1000, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.text, tt.target, tt.region, quarter{})
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// long is a reply far over 1.5 × the target of region(…) requests (100).
var long = summary.Prefix + " " + strings.Repeat("word ", 400)

func TestRejectedReplyRetriedWithViolation(t *testing.T) {
	srv, url := serve(t, mock.Config{Record: true})
	c := client(t, url, nil)
	srv.Push(mock.Fault{Kind: mock.KindOK, Body: long})
	req := region(4, 400)
	res, err := c.Summarize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 2 || res.APICalls != 2 || res.APIErrors != 1 || res.Retries[CauseInvalid] != 1 {
		t.Fatalf("%d requests, result %+v", len(got), res)
	}
	retry := got[1].Request.Messages
	if len(retry) != 3 || retry[1].Role != "assistant" || retry[1].Content != strings.TrimSpace(long)+"\n"+summary.EndMarker ||
		!strings.Contains(retry[2].Content, "rejected: the summary is") || !strings.Contains(retry[2].Content, "at most 150 tokens") {
		t.Fatalf("retry messages: %+v", retry)
	}
	if Validate(res.Text, 100, 1000, quarter{}) != nil {
		t.Fatalf("accepted an invalid summary: %q", res.Text)
	}
	// The accepted summary was cached under the original request.
	again, err := c.Summarize(context.Background(), req)
	if err != nil || !again.CacheHit || again.Text != res.Text || len(srv.Received()) != 2 {
		t.Fatalf("rerun: %+v, %v, %d requests", again, err, len(srv.Received()))
	}
}

func TestRejectedTwiceFailsAndIsNotCached(t *testing.T) {
	srv, url := serve(t, mock.Config{Reply: func(mock.ChatRequest) string { return long }})
	c := client(t, url, nil)
	req := region(4, 400)
	_, err := c.Summarize(context.Background(), req)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Cause != CauseInvalid || errors.Is(err, summary.ErrFatal) || srv.Requests() != 2 {
		t.Fatalf("error %v after %d requests; want a non-fatal %s after 2", err, srv.Requests(), CauseInvalid)
	}
	if _, err := c.Summarize(context.Background(), req); err == nil || srv.Requests() != 4 {
		t.Fatalf("rerun: %v after %d requests; a rejected reply must not be cached", err, srv.Requests())
	}
	if s := c.Stats(); s.Failed != 2 || s.ErrorsByCause[CauseInvalid] != 4 || s.Retries[CauseInvalid] != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCacheKeyHasPromptVersionAndModel(t *testing.T) {
	base := keyMaterial{Model: "a", Messages: []message{{Role: "user", Content: "x"}}}
	other := base
	other.Model = "b"
	if cacheKey(base) == cacheKey(other) {
		t.Fatal("the model is not in the key")
	}
	k := base
	k.Prompt = "something else" // cacheKey sets PromptVersion itself
	if cacheKey(k) != cacheKey(base) {
		t.Fatal("cacheKey does not set the prompt version")
	}
}

func TestPromptHandoffShape(t *testing.T) {
	req := region(3, 100)
	p := RegionPrompt(req.Turns, req.Start, req.TargetTokens)
	for _, want := range []string{"Goal:", "Constraints:", "Completed actions:", "Current state:", "Open questions:",
		"Relevant files:", "Remaining work:", "reference material only", "never more than 150",
		`starting with "[CONTEXT SUMMARY]:"`, `ending with the line "` + summary.EndMarker + `"`, "[Turn 3 - GPT]:"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "EARLIER SUMMARY") {
		t.Error("an earlier-summary note without an earlier summary")
	}
	// Re-compressing our own output: the earlier summary is shown by its
	// body, and the model is told to fold it in.
	req.Turns[0].Text = summary.Prefix + " the agent read a.txt\n" + summary.EndMarker
	p = RegionPrompt(req.Turns, req.Start, req.TargetTokens)
	if !strings.Contains(p, "[Turn 3 - GPT - EARLIER SUMMARY]:\nthe agent read a.txt\n") || !strings.Contains(p, "fold its content into your summary") ||
		strings.Count(p, summary.EndMarker) != 1 {
		t.Errorf("earlier summary not rendered as its body:\n%s", p)
	}
}
