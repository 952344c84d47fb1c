package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a log destination the handler writes while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestLogger(w *syncBuffer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// waitingLog is an slog.Handler whose every line waits until the client
// has read its whole answer, or gives up after a bound no loaded machine
// reaches; it counts the lines that had to give up.
type waitingLog struct {
	read    <-chan struct{}
	gaveUp  *atomic.Int64
	written *atomic.Int64
}

func (h waitingLog) Enabled(context.Context, slog.Level) bool { return true }
func (h waitingLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h waitingLog) WithGroup(string) slog.Handler            { return h }
func (h waitingLog) Handle(context.Context, slog.Record) error {
	select {
	case <-h.read:
	case <-time.After(10 * time.Second):
		h.gaveUp.Add(1)
	}
	h.written.Add(1)
	return nil
}

// The access log line is written after the client has its answer, not
// before: an answer of known length is flushed before the line is made,
// so the log (a write to stderr) is off the call's path.
func TestAnswerReachesClientBeforeLogLine(t *testing.T) {
	tests := []struct {
		name   string
		status int // the provider's
	}{
		{"a success", http.StatusOK},
		{"a failure passed on", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(len(benchAnswer)))
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, benchAnswer)
			}))
			defer up.Close()
			read := make(chan struct{})
			var gaveUp, written atomic.Int64
			p, err := New(oneRoute(OpenAI, up.URL, nil), Options{Logger: slog.New(waitingLog{read, &gaveUp, &written})})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			srv := httptest.NewServer(p)
			defer srv.Close()
			resp, body := post(t, srv.URL+"/v1/chat/completions", nil, benchBody)
			close(read)
			if resp.StatusCode != tt.status || body != benchAnswer {
				t.Fatalf("%d %q, want %d and the provider's answer", resp.StatusCode, body, tt.status)
			}
			srv.Close() // waits for the handler, and its log line
			if written.Load() != 1 || gaveUp.Load() != 0 {
				t.Errorf("%d lines, %d of them written before the client had its answer", written.Load(), gaveUp.Load())
			}
		})
	}
}
