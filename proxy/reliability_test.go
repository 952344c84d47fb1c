package proxy

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestHostileRetryAfter: a provider's Retry-After that no loop can act on
// (a month, a date long past, not a number) is treated as absent; one
// longer than the policy's max_server_wait stops the call at once with the
// wait reported; neither holds the client.
func TestHostileRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		attempts    int64
		refused     bool // Recoil-Refused-Wait set: the wait was refused
	}{
		{"a month", strconv.Itoa(30 * 24 * 3600), 3, false},
		{"a date long past", "Mon, 01 Jan 1990 00:00:00 GMT", 3, false},
		{"not a number", "NaN", 3, false},
		{"negative", "-5", 3, false},
		{"past max_server_wait", "120", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newProvider(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", tc.value)
				w.WriteHeader(http.StatusTooManyRequests)
			})
			spec := fast()
			spec.MaxServerWait = time.Minute
			_, url := start(t, oneRoute(OpenAI, up.URL, spec))
			resp, _ := post(t, url+"/v1/chat/completions", nil, `{}`)
			if resp.StatusCode != 429 || resp.Header.Get(HeaderShouldRetry) != "false" {
				t.Errorf("answer %d, x-should-retry %q", resp.StatusCode, resp.Header.Get(HeaderShouldRetry))
			}
			if n := up.hits.Load(); n != tc.attempts {
				t.Errorf("attempts = %d, want %d", n, tc.attempts)
			}
			if got := resp.Header.Get("Recoil-Refused-Wait") != ""; got != tc.refused {
				t.Errorf("Recoil-Refused-Wait set = %v, want %v", got, tc.refused)
			}
		})
	}
}

// TestTrickleIsNotCutOff: a stream that keeps delivering, however slowly,
// is never failed by the idle timeout, which counts silence, not time.
func TestTrickleIsNotCutOff(t *testing.T) {
	tick := make(chan struct{})
	up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			sse(w, `{"choices":[{"delta":{"content":"."}}]}`)
			<-tick
		}
		sse(w, "[DONE]")
	})
	spec := fast()
	spec.IdleTimeout = time.Minute
	_, url := start(t, oneRoute(OpenAI, up.URL, spec))
	done := make(chan string)
	go func() {
		_, body := post(t, url+"/v1/chat/completions", nil, `{"stream":true}`)
		done <- body
	}()
	for i := 0; i < 5; i++ {
		tick <- struct{}{}
	}
	if body := <-done; len(body) == 0 || body[len(body)-8:] != "[DONE]\n\n" {
		t.Errorf("trickled stream ended %q", body)
	}
}
