package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// guard bounds a test that would otherwise hang on a proxy that buffers:
// a failure, not a measurement.
const guard = 20 * time.Second

func sse(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func streamReq(t *testing.T, ctx context.Context, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvent reads one event's data line.
func readEvent(br *bufio.Reader) (string, error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			return d, nil
		}
	}
}

func TestStreamsEventByEvent(t *testing.T) {
	next := make(chan struct{})
	up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 3; i++ {
			sse(w, fmt.Sprintf(`{"i":%d}`, i))
			select {
			case <-next: // the client has read it: the proxy did not hold it
			case <-r.Context().Done():
				return
			}
		}
		sse(w, "[DONE]")
	})
	_, url := start(t, oneRoute(OpenAI, up.URL, nil))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	resp := streamReq(t, ctx, url)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := 1; i <= 3; i++ {
		d, err := readEvent(br)
		if err != nil {
			t.Fatalf("event %d: %v (a proxy that buffers holds it until the stream ends)", i, err)
		}
		if want := fmt.Sprintf(`{"i":%d}`, i); d != want {
			t.Fatalf("event %d = %q, want %q", i, d, want)
		}
		next <- struct{}{}
	}
	if d, err := readEvent(br); err != nil || d != "[DONE]" {
		t.Fatalf("last event = %q, %v", d, err)
	}
}

func TestStreamBrokenAfterContent(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
		cut  func(w http.ResponseWriter, r *http.Request)
	}{
		{"reset", 0, func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}},
		{"stalled", 100 * time.Millisecond, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				sse(w, `{"choices":[{"delta":{"content":"Hel"}}]}`)
				tc.cut(w, r)
			})
			spec := fast()
			spec.IdleTimeout = tc.idle
			_, url := start(t, oneRoute(OpenAI, up.URL, spec))
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			resp := streamReq(t, ctx, url)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil {
				t.Fatalf("the client read a whole answer (%q): a broken stream must look broken", b)
			}
			if !strings.Contains(string(b), "Hel") {
				t.Errorf("the content before the break did not arrive: %q", b)
			}
			if n := up.hits.Load(); n != 1 {
				t.Errorf("provider attempts = %d, want 1: no retry once content reached the client", n)
			}
		})
	}
}

func TestClientCancelReachesProvider(t *testing.T) {
	gone := make(chan struct{})
	up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, `{"i":1}`)
		<-r.Context().Done()
		close(gone)
	})
	_, url := start(t, oneRoute(OpenAI, up.URL, nil))
	ctx, cancel := context.WithCancel(context.Background())
	resp := streamReq(t, ctx, url)
	if _, err := readEvent(bufio.NewReader(resp.Body)); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-gone:
	case <-time.After(guard):
		t.Fatal("the provider's request was not cancelled when the client went away")
	}
}

func TestStreamUsageSettlesTokens(t *testing.T) {
	// 1,000 tokens a minute; each request is estimated at over 400 (its
	// max_tokens) but uses 5, as its stream's last event reports. Unsettled,
	// the third request would be refused; settled, ten go.
	up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, `{"choices":[{"delta":{"content":"hi"}}]}`)
		sse(w, `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
		sse(w, "[DONE]")
	})
	cfg := oneRoute(OpenAI, up.URL, fast())
	cfg.Routes[0].Allowance = &Allowance{Limit: 1000, Unit: "tokens"}
	_, url := start(t, cfg)
	for i := 1; i <= 10; i++ {
		resp, body := post(t, url+"/v1/chat/completions", nil, `{"model":"m","stream":true,"max_tokens":400}`)
		if resp.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
	}
}
