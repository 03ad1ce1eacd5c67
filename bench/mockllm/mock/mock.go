package mock

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind names one way the server answers a request.
type Kind string

// The fault kinds. [KindOK] is a normal answer.
const (
	KindOK             Kind = "ok"               // 200 with a summary, finish_reason "stop"
	KindRateLimit      Kind = "rate_limit"       // 429 with Retry-After ([Fault.RetryAfter])
	KindQuota          Kind = "quota"            // 429 whose body says insufficient_quota
	KindServerError    Kind = "server_error"     // [Fault.Status] (default 500) with an error body
	KindStatus         Kind = "status"           // [Fault.Status] with [Fault.Body] verbatim
	KindHang           Kind = "hang"             // never answers (until the client gives up)
	KindDrop           Kind = "drop"             // closes the connection without answering
	KindTruncated      Kind = "truncated"        // 200 whose body stops short of its Content-Length
	KindMalformed      Kind = "malformed"        // 200 with a complete but invalid JSON body
	KindLength         Kind = "length"           // 200, finish_reason "length", partial content
	KindEmpty          Kind = "empty"            // 200, empty content, reasoning_content filled
	KindUnauthorized   Kind = "unauthorized"     // 401
	KindForbidden      Kind = "forbidden"        // 403
	KindPayment        Kind = "payment_required" // 402 (OpenRouter credits exhausted)
	KindContextTooLong Kind = "context_too_long" // 400 in the [Config.ContextStyle] wording
)

// Fault is one scripted answer.
type Fault struct {
	Kind       Kind
	Status     int           // KindServerError, KindStatus: the status code
	RetryAfter string        // KindRateLimit: the Retry-After header value ("" omits it)
	Body       string        // KindStatus: the body; KindOK: the content, if set
	Delay      time.Duration // extra latency before answering
}

// Config sets the server's behaviour. The zero value answers every request
// at once with a summary.
type Config struct {
	Latency   time.Duration // added before every answer
	ErrorRate float64       // fraction of unscripted requests given a random transient fault
	Seed      uint64        // seeds the random fault mix

	// RetryAfter is the Retry-After header of random 429s ("1" if empty).
	RetryAfter string

	// ContextLimit, if > 0, is the largest prompt (in chars/4 tokens) the
	// server accepts; larger prompts get a 400 context-too-long error.
	ContextLimit int
	ContextStyle string // "vllm" (default) or "llamacpp"

	OmitUsage bool // answer without a usage object
	Record    bool // keep every request for [Server.Received]

	// APIKey, if set, is required as "Authorization: Bearer <APIKey>";
	// other requests get 401.
	APIKey string

	// HangMax bounds a hanging answer (default 10 minutes).
	HangMax time.Duration

	// Reply, if set, makes the content of a successful answer.
	Reply func(req ChatRequest) string
}

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is the part of a chat.completions request the server reads.
type ChatRequest struct {
	Model               string         `json:"model"`
	Messages            []Message      `json:"messages"`
	MaxTokens           int            `json:"max_tokens"`
	MaxCompletionTokens int            `json:"max_completion_tokens"`
	Temperature         *float64       `json:"temperature"`
	Seed                *int           `json:"seed"`
	Extra               map[string]any `json:"-"`
	// Authorization is the request's Authorization header (an endpoint
	// that echoes the key it was sent).
	Authorization string `json:"-"`
}

// Received is one request as the server saw it (with [Config.Record]).
type Received struct {
	Path          string
	Authorization string
	Request       ChatRequest
	Raw           []byte // the request body
	Fault         Kind   // how it was answered
}

// Server is the mock endpoint. Create it with [New].
type Server struct {
	cfg  Config
	stop chan struct{}

	mu       sync.Mutex
	rng      *rand.Rand
	script   []Fault
	received []Received
	requests int64
	inFlight int
	peak     int
	byKind   map[Kind]int64
	closed   bool
	store    batchStore // the Files and Batches routes' files and batches
}

// New returns a server with the given configuration.
func New(cfg Config) *Server {
	if cfg.RetryAfter == "" {
		cfg.RetryAfter = "1"
	}
	if cfg.HangMax <= 0 {
		cfg.HangMax = 10 * time.Minute
	}
	return &Server{
		cfg:    cfg,
		stop:   make(chan struct{}),
		rng:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		byKind: make(map[Kind]int64),
	}
}

// Push appends faults to the script: the next len(f) requests get them in
// arrival order, then the server falls back to its configured behaviour.
func (s *Server) Push(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, f...)
}

// Requests reports how many requests reached the chat.completions route.
func (s *Server) Requests() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// MaxInFlight reports the largest number of requests the server was
// handling at the same time.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Answered reports how many requests were answered with each kind.
func (s *Server) Answered() map[Kind]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[Kind]int64, len(s.byKind))
	for k, v := range s.byKind {
		out[k] = v
	}
	return out
}

// Received returns a copy of the recorded requests (empty unless
// [Config.Record] is set).
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Close releases every hanging request. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
}

// transient is the random fault mix used for [Config.ErrorRate].
var transient = []Kind{KindRateLimit, KindServerError, KindServerError, KindServerError,
	KindTruncated, KindMalformed, KindLength, KindEmpty, KindDrop}

var serverErrorCodes = []int{500, 502, 503}

// ServeHTTP answers POST requests whose path ends in /chat/completions,
// and the Files and Batches routes (batch.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serveBatchAPI(w, r) {
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "not_found", "no route "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error())
		return
	}
	var req ChatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	var extra map[string]any
	if json.Unmarshal(raw, &extra) == nil {
		for _, k := range []string{"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "seed", "stream", "n", "stop"} {
			delete(extra, k)
		}
		req.Extra = extra
	}
	promptChars := 0
	for _, m := range req.Messages {
		promptChars += len(m.Content)
	}
	promptTokens := (promptChars + 3) / 4

	f := s.next(r, raw, req, promptTokens)
	// The request stops counting as in flight before the client can see its
	// end, or a client's next request could be counted alongside it.
	leave := sync.OnceFunc(func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	})
	defer leave()
	d := s.cfg.Latency + f.Delay
	if r.Header.Get(batchHeader) != "" {
		d = f.Delay
	}
	if d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		case <-s.stop:
		}
	}
	s.answer(w, r, req, f, promptTokens, leave)
}

// next picks the fault for a request and records it.
func (s *Server) next(r *http.Request, raw []byte, req ChatRequest, promptTokens int) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	var f Fault
	switch {
	case s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey:
		f = Fault{Kind: KindUnauthorized}
	case s.cfg.ContextLimit > 0 && promptTokens > s.cfg.ContextLimit:
		f = Fault{Kind: KindContextTooLong}
		if len(s.script) > 0 && s.script[0].Kind == KindContextTooLong {
			s.script = s.script[1:]
		}
	case len(s.script) > 0:
		f = s.script[0]
		s.script = s.script[1:]
	case s.cfg.ErrorRate > 0 && s.rng.Float64() < s.cfg.ErrorRate:
		f = Fault{Kind: transient[s.rng.IntN(len(transient))]}
		if f.Kind == KindServerError {
			f.Status = serverErrorCodes[s.rng.IntN(len(serverErrorCodes))]
		}
		if f.Kind == KindRateLimit {
			f.RetryAfter = s.cfg.RetryAfter
		}
	default:
		f = Fault{Kind: KindOK}
	}
	s.byKind[f.Kind]++
	if s.cfg.Record {
		s.received = append(s.received, Received{
			Path:          r.URL.Path,
			Authorization: r.Header.Get("Authorization"),
			Request:       req,
			Raw:           raw,
			Fault:         f.Kind,
		})
	}
	return f
}

// answer writes f's reply. leave is called before a dropped connection
// is closed.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req ChatRequest, f Fault, promptTokens int, leave func()) {
	switch f.Kind {
	case KindRateLimit:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached for requests")
	case KindQuota:
		writeErrorCode(w, http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota",
			"You exceeded your current quota, please check your plan and billing details.")
	case KindServerError:
		code := f.Status
		if code == 0 {
			code = http.StatusInternalServerError
		}
		writeError(w, code, "server_error", "The server had an error while processing your request.")
	case KindStatus:
		code := f.Status
		if code == 0 {
			code = http.StatusInternalServerError
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, f.Body)
	case KindUnauthorized:
		writeErrorCode(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
			"Incorrect API key provided.")
	case KindForbidden:
		writeError(w, http.StatusForbidden, "permission_denied", "Your key may not use this model.")
	case KindPayment:
		writeErrorCode(w, http.StatusPaymentRequired, "", "402",
			"Insufficient credits. Add more using https://example.invalid/credits")
	case KindContextTooLong:
		s.contextTooLong(w, req, promptTokens)
	case KindHang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		case <-time.After(s.cfg.HangMax):
		}
	case KindDrop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				leave()
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // HTTP/2: abort the stream
	case KindTruncated:
		body := s.completion(req, s.content(req, f), "stop", "", promptTokens)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
		// Returning with fewer bytes than Content-Length makes net/http
		// close the connection: the client sees an unexpected EOF.
	case KindMalformed:
		body := s.completion(req, s.content(req, f), "stop", "", promptTokens)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
	case KindLength:
		c := s.content(req, f)
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.completion(req, c[:len(c)/2], "length", "", promptTokens))
	case KindEmpty:
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.completion(req, "", "stop", "Let me think about how to summarize this carefully...", promptTokens))
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.completion(req, s.content(req, f), "stop", "", promptTokens))
	}
}

func (s *Server) contextTooLong(w http.ResponseWriter, req ChatRequest, promptTokens int) {
	limit := s.cfg.ContextLimit
	if limit <= 0 {
		limit = promptTokens - 1
	}
	maxTok := req.MaxTokens
	if s.cfg.ContextStyle == "llamacpp" {
		body, _ := json.Marshal(map[string]any{"error": map[string]any{
			"code": 400, "type": "exceed_context_size_error",
			"message": fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it",
				promptTokens, limit),
			"n_prompt_tokens": promptTokens, "n_ctx": limit,
		}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(body)
		return
	}
	writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
		"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		limit, promptTokens+maxTok, promptTokens, maxTok))
}

var (
	turnLabel = regexp.MustCompile(`\[Turn (\d+) - [^\]]*\]`)
	partLabel = regexp.MustCompile(`\[Part (\d+)[^\]]*\]`)
)

// content is the summary text of a successful answer.
func (s *Server) content(req ChatRequest, f Fault) string {
	if f.Body != "" && f.Kind == KindOK {
		return f.Body
	}
	if s.cfg.Reply != nil {
		return s.cfg.Reply(req)
	}
	return DefaultReply(req)
}

// EchoKeyReply is a [Config.Reply] for an endpoint that echoes the key it
// was sent: the key of the request's Authorization header, as written, in
// lower case and in upper case, in a short summary.
func EchoKeyReply(req ChatRequest) string {
	key := strings.TrimPrefix(req.Authorization, "Bearer ")
	return "[CONTEXT SUMMARY]: the agent authenticated with " + key + ", logged " + strings.ToLower(key) +
		" and " + strings.ToUpper(key) + "."
}

// DefaultReply is the content the server answers with when neither
// [Fault.Body] nor [Config.Reply] is set: "[CONTEXT SUMMARY]: mock summary
// of turns a-b" naming the first and last "[Turn i - ROLE]" label of the
// prompt, plus "(merged N parts)" when the prompt holds "[Part k …]" labels.
func DefaultReply(req ChatRequest) string {
	var prompt strings.Builder
	for _, m := range req.Messages {
		prompt.WriteString(m.Content)
	}
	p := prompt.String()
	var b strings.Builder
	b.WriteString("[CONTEXT SUMMARY]: mock summary")
	if parts := partLabel.FindAllString(p, -1); len(parts) > 0 {
		fmt.Fprintf(&b, " (merged %d parts)", len(parts))
	}
	if m := turnLabel.FindAllStringSubmatch(p, -1); len(m) > 0 {
		fmt.Fprintf(&b, " of turns %s-%s", m[0][1], m[len(m)-1][1])
	}
	fmt.Fprintf(&b, " (%d prompt chars).", len(p))
	return b.String()
}

func (s *Server) completion(req ChatRequest, content, finish, reasoning string, promptTokens int) []byte {
	msg := map[string]any{"role": "assistant", "content": content}
	if reasoning != "" {
		msg["reasoning_content"] = reasoning
	}
	resp := map[string]any{
		"id":      "chatcmpl-mock",
		"object":  "chat.completion",
		"created": 1730000000,
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish,
		}},
	}
	if !s.cfg.OmitUsage {
		completion := (len(content) + len(reasoning) + 3) / 4
		resp["usage"] = map[string]any{
			"prompt_tokens": promptTokens, "completion_tokens": completion,
			"total_tokens": promptTokens + completion,
		}
	}
	b, _ := json.Marshal(resp)
	return b
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeErrorCode(w, status, typ, nil, msg)
}

func writeErrorCode(w http.ResponseWriter, status int, typ string, code any, msg string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": code,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
