package mock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// OpenAI Batch, as the mock answers it (docs/summaries.md, "OpenAI Batch"):
// [Server.RunBatch] turns a Batch input file into its output and error
// files, each request answered as the chat.completions route would answer
// it (script, random faults, context limit, API key aside); and the server
// speaks the Files and Batches routes that upload an input file, run a
// batch (at once: the mock's batches complete when created) and download
// the results:
//
//	POST /v1/files (multipart: purpose=batch, file)   → {"id": "file-1", …}
//	POST /v1/batches {"input_file_id", "endpoint", "completion_window"}
//	GET  /v1/batches/{id}                             → {"status": "completed", "output_file_id", "error_file_id", …}
//	GET  /v1/files/{id}/content                       → the file's bytes

// batchHeader marks a request RunBatch makes: Config.Latency is not added.
const batchHeader = "X-Mock-Batch"

// BatchCounts says how a batch went.
type BatchCounts struct {
	Total, Completed, Failed int
}

// batchRequest is one line of a Batch input file.
type batchRequest struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// RunBatch answers every request of a Batch input file in and writes each
// answer, in input order, to out when it is a 200 with a JSON body, else to
// errs: {"id", "custom_id", "response": {"status_code", "request_id",
// "body"}, "error"}, or with "error": {"code", "message"} and no response
// for a line that is not a request, a request that is not POST to
// /v1/chat/completions, or an answer that never came or broke off. Lines
// are answered one at a time; Config.Latency is not added.
func (s *Server) RunBatch(in io.Reader, out, errs io.Writer) (BatchCounts, error) {
	var counts BatchCounts
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 256<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		counts.Total++
		res := map[string]any{"id": fmt.Sprintf("batch_req_%d", n), "custom_id": nil, "response": nil, "error": nil}
		var req batchRequest
		switch err := json.Unmarshal(line, &req); {
		case err != nil:
			res["error"] = map[string]any{"code": "invalid_json", "message": fmt.Sprintf("line %d: %v", n, err)}
		case req.Method != http.MethodPost || req.URL != "/v1/chat/completions":
			res["custom_id"] = req.CustomID
			res["error"] = map[string]any{"code": "invalid_url", "message": fmt.Sprintf("line %d: %s %s is not POST /v1/chat/completions", n, req.Method, req.URL)}
		default:
			res["custom_id"] = req.CustomID
			status, body := s.answerOne(req.Body)
			switch {
			case status == 0:
				res["error"] = map[string]any{"code": "server_error", "message": "the request got no complete answer"}
			case json.Valid(body):
				res["response"] = map[string]any{"status_code": status, "request_id": fmt.Sprintf("req_%d", n), "body": json.RawMessage(body)}
			default:
				res["error"] = map[string]any{"code": "server_error", "message": fmt.Sprintf("status %d with a body that is not JSON", status)}
			}
		}
		b, _ := json.Marshal(res)
		w := errs
		if r, ok := res["response"].(map[string]any); ok && r["status_code"] == http.StatusOK {
			w = out
			counts.Completed++
		} else {
			counts.Failed++
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return counts, err
		}
	}
	return counts, sc.Err()
}

// answerOne answers one chat.completions body as the route would; status 0
// when no complete answer came (a hang or a dropped connection).
func (s *Server) answerOne(body []byte) (status int, resp []byte) {
	defer func() {
		if recover() != nil { // a dropped connection: http.ErrAbortHandler
			status, resp = 0, nil
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	if s.cfg.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	}
	r.Header.Set(batchHeader, "1")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if ctx.Err() != nil {
		return 0, nil
	}
	return w.Code, w.Body.Bytes()
}

// files and batches kept by the Files and Batches routes.
type batchStore struct {
	files   map[string][]byte
	batches map[string]map[string]any
}

// serveBatchAPI answers the Files and Batches routes; false when the
// request is for another route.
func (s *Server) serveBatchAPI(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/files") && r.Method == http.MethodPost:
		s.uploadFile(w, r)
	case strings.Contains(p, "/files/") && strings.HasSuffix(p, "/content") && r.Method == http.MethodGet:
		id := p[strings.LastIndex(p, "/files/")+len("/files/") : len(p)-len("/content")]
		if b, ok := stored(s, s.store.files, w, "file", id); ok {
			w.Header().Set("Content-Type", "application/jsonl")
			w.Write(b)
		}
	case strings.HasSuffix(p, "/batches") && r.Method == http.MethodPost:
		s.createBatch(w, r)
	case strings.Contains(p, "/batches/") && r.Method == http.MethodGet:
		if b, ok := stored(s, s.store.batches, w, "batch", p[strings.LastIndex(p, "/batches/")+len("/batches/"):]); ok {
			writeJSON(w, b)
		}
	default:
		return false
	}
	return true
}

// stored looks id up in m (a file or a batch), answering 404 when absent.
func stored[T any](s *Server, m map[string]T, w http.ResponseWriter, what, id string) (T, bool) {
	s.mu.Lock()
	v, ok := m[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "invalid_request_error", "no "+what+" "+id)
	}
	return v, ok
}

func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(256 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "multipart form: "+err.Error())
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "no file: "+err.Error())
		return
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	id := s.addFile(b)
	writeJSON(w, map[string]any{"id": id, "object": "file", "bytes": len(b), "filename": hdr.Filename, "purpose": r.FormValue("purpose")})
}

func (s *Server) addFile(b []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store.files == nil {
		s.store.files = map[string][]byte{}
	}
	id := fmt.Sprintf("file-%d", len(s.store.files)+1)
	s.store.files[id] = b
	return id
}

func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InputFileID      string `json:"input_file_id"`
		Endpoint         string `json:"endpoint"`
		CompletionWindow string `json:"completion_window"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	s.mu.Lock()
	in, ok := s.store.files[req.InputFileID]
	s.mu.Unlock()
	if !ok || req.Endpoint != "/v1/chat/completions" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "unknown input_file_id or endpoint")
		return
	}
	var out, errs bytes.Buffer
	counts, err := s.RunBatch(bytes.NewReader(in), &out, &errs)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	b := map[string]any{"object": "batch", "endpoint": req.Endpoint, "input_file_id": req.InputFileID,
		"completion_window": req.CompletionWindow, "status": "completed",
		"output_file_id": s.addFile(out.Bytes()), "error_file_id": nil,
		"request_counts": map[string]int{"total": counts.Total, "completed": counts.Completed, "failed": counts.Failed}}
	if errs.Len() > 0 {
		b["error_file_id"] = s.addFile(errs.Bytes())
	}
	s.mu.Lock()
	if s.store.batches == nil {
		s.store.batches = map[string]map[string]any{}
	}
	b["id"] = fmt.Sprintf("batch_%d", len(s.store.batches)+1)
	s.store.batches[b["id"].(string)] = b
	s.mu.Unlock()
	writeJSON(w, b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
