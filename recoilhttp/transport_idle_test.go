package recoilhttp_test

// The Transport and a response body that stalls: the reads the cut-off
// governs, the idle limit by default.

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
)

// The Transport's own reads of a response (the error body it holds, the
// stream prefix it inspects) obey the attempt's cut-off and the call's
// Timeout: a 503 whose body trickles in, or a stream that sends its headers
// and then a byte at a time, ends the call near its bound, not when the
// server stops.
func TestTransportReadsObeyTheCutOff(t *testing.T) {
	const trickle = 30 * time.Second // how long the server would go on
	tests := []struct {
		name                    string
		attemptTimeout, timeout time.Duration
		bound                   time.Duration
	}{
		{"AttemptTimeout alone", time.Second, 0, time.Second},
		{"Timeout alone", 0, 2 * time.Second, 2 * time.Second},
		{"both", time.Second, 2 * time.Second, time.Second},
	}
	bodies := []struct {
		name        string
		status      int
		contentType string
		first       string
	}{
		{"trickling error body", http.StatusServiceUnavailable, "application/json", `{"error":{"type":"overloaded_error","message":"`},
		{"trickling stream prefix", http.StatusOK, "text/event-stream", ": "},
	}
	for _, b := range bodies {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", b.contentType)
					w.WriteHeader(b.status)
					io.WriteString(w, b.first)
					w.(http.Flusher).Flush()
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					end := time.After(trickle)
					for {
						select {
						case <-r.Context().Done():
							return
						case <-end:
							return
						case <-tick.C:
							io.WriteString(w, " ")
							w.(http.Flusher).Flush()
						}
					}
				}))
				defer srv.Close()
				base := &http.Transport{}
				defer base.CloseIdleConnections()
				p := &recoil.Policy{MaxAttempts: 1, AttemptTimeout: tt.attemptTimeout, Timeout: tt.timeout}
				tr := &recoilhttp.Transport{Base: base, Policy: p}
				req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				elapsed := time.Since(start)
				// Generous slack for a loaded machine, far below the
				// server's 30 s.
				if elapsed > tt.bound+3*time.Second {
					t.Errorf("the call took %v, want about %v", elapsed, tt.bound)
				}
				t.Logf("returned after %v (bound %v; the server would trickle for %v)", elapsed.Round(time.Millisecond), tt.bound, trickle)
			})
		}
	}
}

// stalledRT answers with headers and a body that never sends a byte, as a
// peer that stopped mid-response.
type stalledRT struct{ contentType string }

func (s stalledRT) RoundTrip(*http.Request) (*http.Response, error) {
	r, _ := io.Pipe() // nothing is ever written
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {s.contentType}}, Body: r}, nil
}

// TestTransportIdleTimeoutByDefault: a body whose peer stopped sending
// fails after DefaultIdleTimeout when IdleTimeout is zero, after the limit
// set when it is set, and only when the caller gives up under
// NoIdleTimeout. A read with no deadline is not the default.
func TestTransportIdleTimeoutByDefault(t *testing.T) {
	for _, tt := range []struct {
		name        string
		idle        time.Duration
		contentType string
		want        time.Duration // 0: the read blocks until the caller's own bound (an hour here)
	}{
		{"zero means the default", 0, "application/json", recoilhttp.DefaultIdleTimeout},
		{"zero means the default, on a stream", 0, "text/event-stream", recoilhttp.DefaultIdleTimeout},
		{"set", 30 * time.Second, "application/json", 30 * time.Second},
		{"NoIdleTimeout", recoilhttp.NoIdleTimeout, "application/json", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &recoilhttp.Transport{Base: stalledRT{tt.contentType}, IdleTimeout: tt.idle, NoStreamCheck: true}
				req, _ := http.NewRequest(http.MethodGet, "http://api.example/v1/models", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				done := make(chan error, 1)
				go func() {
					_, err := resp.Body.Read(make([]byte, 8))
					done <- err
				}()
				var readErr error
				select {
				case readErr = <-done:
				case <-time.After(time.Hour):
					resp.Body.Close() // the caller's own bound
					readErr = <-done
				}
				took := time.Since(start)
				var idle *recoilhttp.IdleError
				switch {
				case tt.want > 0 && (!errors.As(readErr, &idle) || took != tt.want):
					t.Fatalf("read = %v after %v; want an *IdleError after %v", readErr, took, tt.want)
				case tt.want == 0 && (errors.As(readErr, &idle) || took != time.Hour):
					t.Fatalf("read = %v after %v; want no idle limit (the caller's hour)", readErr, took)
				}
			})
		})
	}
}
