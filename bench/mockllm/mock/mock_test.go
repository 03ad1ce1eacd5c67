package mock

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s := New(cfg)
	hs := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); hs.Close() })
	return s, hs.URL + "/v1/chat/completions"
}

func chatBody(prompt string) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": "m", "max_tokens": 100, "temperature": 0.2, "top_k": 5,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	})
	return b
}

func post(t *testing.T, url string, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

type completion struct {
	Choices []struct {
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name        string
		fault       Fault
		status      int
		retryAfter  string
		bodyErr     bool   // reading the body fails
		invalidJSON bool   // the body is not JSON
		finish      string // for 200 answers
		content     string // substring of the content
		reasoning   bool
		errText     string // substring of error.message / error.code
	}{
		{"ok", Fault{Kind: KindOK}, 200, "", false, false, "stop", "[CONTEXT SUMMARY]: mock summary of turns 2-3", false, ""},
		{"ok with body", Fault{Kind: KindOK, Body: "custom"}, 200, "", false, false, "stop", "custom", false, ""},
		{"rate limit", Fault{Kind: KindRateLimit, RetryAfter: "2"}, 429, "2", false, false, "", "", false, "Rate limit"},
		{"quota", Fault{Kind: KindQuota}, 429, "", false, false, "", "", false, "insufficient_quota"},
		{"server error default", Fault{Kind: KindServerError}, 500, "", false, false, "", "", false, "server had an error"},
		{"503", Fault{Kind: KindServerError, Status: 503}, 503, "", false, false, "", "", false, "server had an error"},
		{"status", Fault{Kind: KindStatus, Status: 418, Body: `{"error":{"message":"teapot"}}`}, 418, "", false, false, "", "", false, "teapot"},
		{"truncated", Fault{Kind: KindTruncated}, 200, "", true, false, "", "", false, ""},
		{"malformed", Fault{Kind: KindMalformed}, 200, "", false, true, "", "", false, ""},
		{"length", Fault{Kind: KindLength}, 200, "", false, false, "length", "[CONTEXT SUMMARY]", false, ""},
		{"empty", Fault{Kind: KindEmpty}, 200, "", false, false, "stop", "", true, ""},
		{"401", Fault{Kind: KindUnauthorized}, 401, "", false, false, "", "", false, "invalid_api_key"},
		{"403", Fault{Kind: KindForbidden}, 403, "", false, false, "", "", false, "may not use"},
		{"402", Fault{Kind: KindPayment}, 402, "", false, false, "", "", false, "Insufficient credits"},
		{"context too long", Fault{Kind: KindContextTooLong}, 400, "", false, false, "", "", false, "maximum context length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := start(t, Config{})
			s.Push(tt.fault)
			resp, body, err := post(t, url, chatBody("[Turn 2 - GPT]:\na\n\n[Turn 3 - TOOL]:\nb"), nil)
			if tt.bodyErr {
				if err == nil {
					t.Fatalf("truncated body read without error: %s", body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			var c completion
			err = json.Unmarshal(body, &c)
			if tt.invalidJSON {
				if err == nil {
					t.Errorf("malformed body parses: %s", body)
				}
				return
			}
			if err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if tt.errText != "" {
				if c.Error == nil || !strings.Contains(string(body), tt.errText) {
					t.Errorf("body %s lacks error %q", body, tt.errText)
				}
				return
			}
			if len(c.Choices) != 1 {
				t.Fatalf("choices = %d", len(c.Choices))
			}
			ch := c.Choices[0]
			if ch.FinishReason != tt.finish || !strings.Contains(ch.Message.Content, tt.content) ||
				(ch.Message.ReasoningContent != "") != tt.reasoning {
				t.Errorf("choice = %+v", ch)
			}
			if tt.content == "" && ch.Message.Content != "" {
				t.Errorf("content = %q, want empty", ch.Message.Content)
			}
			if c.Usage == nil || c.Usage.PromptTokens == 0 {
				t.Errorf("usage = %+v", c.Usage)
			}
		})
	}
}

func TestDropAndHang(t *testing.T) {
	s, url := start(t, Config{})
	s.Push(Fault{Kind: KindDrop})
	if _, _, err := post(t, url, chatBody("x"), nil); err == nil {
		t.Errorf("dropped connection answered")
	}
	s.Push(Fault{Kind: KindHang})
	c := &http.Client{Timeout: 50 * time.Millisecond}
	if _, err := c.Post(url, "application/json", bytes.NewReader(chatBody("x"))); err == nil {
		t.Errorf("hanging request answered")
	}
	// Close releases a hang.
	s2, url2 := start(t, Config{})
	s2.Push(Fault{Kind: KindHang})
	done := make(chan error, 1)
	go func() {
		_, _, err := post(t, url2, chatBody("x"), nil)
		done <- err
	}()
	for s2.Requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	s2.Close()
	<-done // returns (with an empty 200) instead of hanging
}

func TestContextLimit(t *testing.T) {
	for style, want := range map[string]string{
		"vllm":     "maximum context length is 10 tokens",
		"llamacpp": "exceeds the available context size (10 tokens)",
	} {
		t.Run(style, func(t *testing.T) {
			_, url := start(t, Config{ContextLimit: 10, ContextStyle: style})
			resp, body, err := post(t, url, chatBody(strings.Repeat("x", 41)), nil)
			if err != nil || resp.StatusCode != 400 || !strings.Contains(string(body), want) {
				t.Errorf("over the limit: %v %v %s", resp.StatusCode, err, body)
			}
			resp, _, err = post(t, url, chatBody(strings.Repeat("x", 40)), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("at the limit: %v %v", resp.StatusCode, err)
			}
		})
	}
}

func TestAPIKeyAndRecord(t *testing.T) {
	s, url := start(t, Config{APIKey: "k1", Record: true, OmitUsage: true})
	resp, _, err := post(t, url, chatBody("x"), map[string]string{"Authorization": "Bearer wrong"})
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("wrong key: %v %v", resp.StatusCode, err)
	}
	resp, body, err := post(t, url, chatBody("x"), map[string]string{"Authorization": "Bearer k1"})
	if err != nil || resp.StatusCode != 200 || strings.Contains(string(body), "usage") {
		t.Errorf("right key: %v %v %s", resp.StatusCode, err, body)
	}
	got := s.Received()
	if len(got) != 2 || got[1].Authorization != "Bearer k1" || got[1].Request.Model != "m" ||
		got[1].Request.MaxTokens != 100 || got[1].Request.Extra["top_k"] != 5.0 || got[0].Fault != KindUnauthorized {
		t.Errorf("received = %+v", got)
	}
	if s.Requests() != 2 || s.MaxInFlight() != 1 {
		t.Errorf("requests %d, peak %d", s.Requests(), s.MaxInFlight())
	}
}

func TestRoutes(t *testing.T) {
	_, url := start(t, Config{})
	base := strings.TrimSuffix(url, "/v1/chat/completions")
	resp, _, err := post(t, base+"/v1/models", chatBody("x"), nil)
	if err != nil || resp.StatusCode != 404 {
		t.Errorf("unknown route: %v %v", resp.StatusCode, err)
	}
	r, err := http.Get(url)
	if err != nil || r.StatusCode != 405 {
		t.Errorf("GET: %v", err)
	}
	r.Body.Close()
	resp, _, err = post(t, url, []byte("{"), nil)
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("bad JSON: %v %v", resp.StatusCode, err)
	}
	resp, _, err = post(t, base+"/chat/completions", chatBody("x"), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("route without /v1: %v %v", resp.StatusCode, err)
	}
}

func TestErrorRateIsSeeded(t *testing.T) {
	run := func(seed uint64) map[Kind]int64 {
		s, url := start(t, Config{ErrorRate: 0.3, Seed: seed, RetryAfter: "0"})
		for range 200 {
			post(t, url, chatBody("x"), nil) // some fail by design
		}
		return s.Answered()
	}
	a, b := run(3), run(3)
	if len(a) != len(b) {
		t.Fatalf("same seed, different mixes: %v vs %v", a, b)
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("same seed, different mixes: %v vs %v", a, b)
		}
	}
	faults := 200 - a[KindOK]
	if faults < 30 || faults > 95 { // 60 expected; binomial sd ≈ 6.5
		t.Errorf("%d faults in 200 at rate 0.3: %v", faults, a)
	}
	if a[KindHang] != 0 {
		t.Errorf("random mix hangs")
	}
}

func TestDefaultReply(t *testing.T) {
	tests := []struct {
		name, prompt, want string
	}{
		{"turns", "[Turn 4 - GPT]:\na\n[Turn 9 - TOOL]:\nb", "[CONTEXT SUMMARY]: mock summary of turns 4-9 ("},
		{"parts", "[Part 1 - Turns 1-2]:\na\n[Part 2 - Turns 3-4]:\nb", "[CONTEXT SUMMARY]: mock summary (merged 2 parts) ("},
		{"neither", "hello", "[CONTEXT SUMMARY]: mock summary (5 prompt chars)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultReply(ChatRequest{Messages: []Message{{Role: "user", Content: tt.prompt}}})
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("DefaultReply = %q, want prefix %q", got, tt.want)
			}
		})
	}
}

func TestRunBatch(t *testing.T) {
	s := New(Config{})
	s.Push(Fault{Kind: KindOK}, Fault{Kind: KindServerError, Status: 503}, Fault{Kind: KindDrop}, Fault{Kind: KindLength})
	in := strings.Join([]string{
		`{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "[Turn 3 - USER]: hi"}]}}`,
		`{"custom_id": "b", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": []}}`,
		`not json`,
		`{"custom_id": "c", "method": "GET", "url": "/v1/embeddings", "body": {}}`,
		`{"custom_id": "d", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": []}}`,
		`{"custom_id": "e", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": []}}`,
	}, "\n")
	var out, errs bytes.Buffer
	c, err := s.RunBatch(strings.NewReader(in), &out, &errs)
	if err != nil || c.Total != 6 || c.Completed != 2 || c.Failed != 4 {
		t.Fatalf("counts %+v, %v\nout:\n%s\nerrs:\n%s", c, err, out.String(), errs.String())
	}
	var first struct {
		CustomID string `json:"custom_id"`
		Response struct {
			StatusCode int `json:"status_code"`
			Body       struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
			} `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(strings.Split(out.String(), "\n")[0]), &first); err != nil || first.CustomID != "a" ||
		first.Response.StatusCode != 200 || !strings.Contains(first.Response.Body.Choices[0].Message.Content, "of turns 3-3") {
		t.Errorf("first output line %+v %v", first, err)
	}
	for _, want := range []string{`"custom_id":"b"`, `"status_code":503`, `"code":"invalid_json"`, `"code":"invalid_url"`, `"custom_id":"d"`, `"code":"server_error"`} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("error file lacks %s:\n%s", want, errs.String())
		}
	}
	if !strings.Contains(out.String(), `"custom_id":"e"`) || !strings.Contains(out.String(), `"finish_reason":"length"`) {
		t.Errorf("a 200 with finish_reason length goes to the output file (the client judges it):\n%s", out.String())
	}
}

func TestBatchRoutes(t *testing.T) {
	s := New(Config{})
	hs := httptest.NewServer(s)
	defer hs.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	fw.Write([]byte(`{"custom_id": "x", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}` + "\n"))
	mw.Close()
	resp, err := http.Post(hs.URL+"/v1/files", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&file)
	resp.Body.Close()
	resp, err = http.Post(hs.URL+"/v1/batches", "application/json", strings.NewReader(`{"input_file_id": "`+file.ID+`", "endpoint": "/v1/chat/completions", "completion_window": "24h"}`))
	if err != nil {
		t.Fatal(err)
	}
	var b struct{ ID, Status, OutputFileID string }
	var raw map[string]any
	json.NewDecoder(resp.Body).Decode(&raw)
	resp.Body.Close()
	b.ID, _ = raw["id"].(string)
	b.Status, _ = raw["status"].(string)
	b.OutputFileID, _ = raw["output_file_id"].(string)
	if b.Status != "completed" || b.OutputFileID == "" {
		t.Fatalf("batch %v", raw)
	}
	resp, _ = http.Get(hs.URL + "/v1/batches/" + b.ID)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET batch: %d", resp.StatusCode)
	}
	resp, _ = http.Get(hs.URL + "/v1/files/" + b.OutputFileID + "/content")
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(out), `"custom_id":"x"`) || !strings.Contains(string(out), "mock summary") {
		t.Errorf("output file: %s", out)
	}
}
