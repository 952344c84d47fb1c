package members

import (
	"math/rand"
	"net/http"
	"time"
)

// retryable is how often each status may be tried again.
var retryable = map[int]int{http.StatusTooManyRequests: 5, http.StatusServiceUnavailable: 5}

// sendCounted counts its tries per status in a map: the wait grows with
// that count alone, the same on every client.
//
// case: flag nojitter deafwait retryafter
func sendCounted(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	tries := make(map[int]int)
	for {
		resp, err := rt.RoundTrip(req.Clone(req.Context()))
		if err != nil {
			return nil, err
		}
		limit, again := retryable[resp.StatusCode]
		if !again || tries[resp.StatusCode] >= limit {
			return resp, nil
		}
		resp.Body.Close()
		tries[resp.StatusCode]++
		time.Sleep(time.Duration(2*tries[resp.StatusCode]+5) * time.Second) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores req.Context\(\)` `retryafter: retry loop retries 429 and 503`
	}
}

// sendDrawn keeps a map of the same shape, but draws each entry at
// random: not a count, so not a jitterless wait.
//
// case: flag deafwait retryafter
func sendDrawn(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	spread := make(map[int]int)
	for try := 0; try < 5; try++ {
		resp, err := rt.RoundTrip(req.Clone(req.Context()))
		if err != nil {
			return nil, err
		}
		if _, again := retryable[resp.StatusCode]; !again {
			return resp, nil
		}
		resp.Body.Close()
		spread[resp.StatusCode] = rand.Intn(10 << try)
		time.Sleep(time.Duration(spread[resp.StatusCode]) * time.Second) // want `deafwait: time.Sleep ignores req.Context\(\)` `retryafter: retry loop retries 429 and 503`
	}
	return nil, http.ErrHandlerTimeout
}
