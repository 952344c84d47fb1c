package recoilhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/recoilhttp"
)

// pipeServer serves h over an in-memory connection inside the caller's
// synctest bubble, and returns its base transport; both are closed when
// the test ends.
func pipeServer(t *testing.T, h http.Handler) *http.Transport {
	t.Helper()
	pl := testsvc.NewPipeListener()
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close()
	srv.Listener = pl
	srv.Start()
	base := &http.Transport{DialContext: pl.DialContext}
	t.Cleanup(func() {
		base.CloseIdleConnections()
		srv.Close()
	})
	return base
}

// TestTransportHedgesStreamsOnFirstContent: a hedged stream is decided on
// its first content event, not on its headers. The first attempt's
// headers come at once but its first token takes 2 s; the hedge's comes
// at once, and the caller reads the hedge's stream, whose later events
// arrive after the call has returned. The loser's request is cancelled,
// and the winner's once the caller closes the body.
func TestTransportHedgesStreamsOnFirstContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			n       atomic.Int32
			mu      sync.Mutex
			stopped []int // attempts whose request context ended, in order
		)
		base := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			me := int(n.Add(1))
			defer func() {
				<-r.Context().Done()
				mu.Lock()
				stopped = append(stopped, me)
				mu.Unlock()
			}()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush() // headers at once, for both
			if me == 1 {
				tm := time.NewTimer(2 * time.Second) // a slow first token
				select {
				case <-tm.C:
				case <-r.Context().Done():
					return
				}
			}
			io.WriteString(w, "data: token-1 from "+string(rune('0'+me))+"\n\n")
			w.(http.Flusher).Flush()
			tm := time.NewTimer(time.Second) // the rest comes after the call returns
			select {
			case <-tm.C:
				io.WriteString(w, "data: token-2\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
			}
		}))
		var sum recoil.Summary
		tr := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{Budget: recoil.NoBudget,
			Hedge:   &recoil.Hedge{Delay: 300 * time.Millisecond},
			Observe: func(_ context.Context, s recoil.Summary) { sum = s }}}
		start := time.Now()
		resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, "http://models.test/v1/stream", ""))
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 300*time.Millisecond {
			t.Errorf("the call took %v, want the hedge delay (300ms): decided on the hedge's first token", took)
		}
		want := "data: token-1 from 2\n\ndata: token-2\n\n"
		body := make([]byte, len(want))
		if _, err := io.ReadFull(resp.Body, body); err != nil || string(body) != want {
			t.Errorf("body %q (%v), want the hedge's stream %q", body, err, want)
		}
		mu.Lock()
		before := append([]int(nil), stopped...)
		mu.Unlock()
		resp.Body.Close()
		synctest.Wait()
		mu.Lock()
		after := append([]int(nil), stopped...)
		mu.Unlock()
		if len(before) != 1 || before[0] != 1 || len(after) != 2 {
			t.Errorf("requests ended %v before the body was closed and %v after, want [1] then both", before, after)
		}
		if sum.Attempts != 2 || sum.Hedges != 1 || sum.Wasted != 1 {
			t.Errorf("Summary: %d attempts, %d hedges, %d wasted; want 2, 1, 1", sum.Attempts, sum.Hedges, sum.Wasted)
		}
	})
}

// TestTransportHedgesOnlyWhatMayRepeat: a POST without an idempotency key
// is never hedged, however slow; with a key (the Transport's own), it is.
func TestTransportHedgesOnlyWhatMayRepeat(t *testing.T) {
	tests := []struct {
		name     string
		keyed    bool
		attempts int32
	}{
		{"a POST without a key runs once", false, 1},
		{"a POST under an idempotency key is hedged", true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				keys := make(chan string, 2)
				base := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					keys <- r.Header.Get("Idempotency-Key")
					if n.Add(1) == 1 {
						tm := time.NewTimer(time.Second)
						select {
						case <-tm.C:
						case <-r.Context().Done():
							return
						}
					}
					io.WriteString(w, "charged")
				}))
				tr := &recoilhttp.Transport{Base: base, IdempotencyKey: tt.keyed, Policy: &recoil.Policy{Budget: recoil.NoBudget,
					Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}}
				resp, err := tr.RoundTrip(mustRequest(t, http.MethodPost, "http://payments.test/v1/charges", `{"amount":1}`))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if got := n.Load(); got != tt.attempts {
					t.Errorf("the server saw %d attempts, want %d", got, tt.attempts)
				}
				if tt.keyed {
					if a, b := <-keys, <-keys; a == "" || a != b {
						t.Errorf("the hedge carried key %q, the first attempt %q: want the same key", b, a)
					}
				}
			})
		})
	}
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
