package selfverdict

import (
	"fmt"
	"math/rand"
	"net/http"
	"strconv"
	"time"
)

// answer is what one post got: its status, the server's Retry-After
// text, and an error for anything but a 200.
type answer struct {
	statusCode int
	retryAfter string
	err        error
}

// steps are the waits before each retry, in seconds.
var steps = []int{0, 1, 2, 4, 8, 16}

// post makes one request and keeps what came back.
func post(hc *http.Client, req *http.Request) answer {
	resp, err := hc.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	a := answer{statusCode: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode != http.StatusOK {
		a.err = fmt.Errorf("post: %d", resp.StatusCode)
	}
	return a
}

// again says whether the answer is worth another try, and after how
// long: a 429's Retry-After when it is longer than the step, else the
// step. Every status but 200, 400, 403, 404 and 413 goes round.
func (a answer) again(n int) (bool, time.Duration) {
	wait := time.Duration(steps[min(n, len(steps)-1)]) * time.Second
	switch a.statusCode {
	case 200, 400, 403, 404, 413:
		return false, 0
	case 429:
		if a.retryAfter != "" {
			if s, err := strconv.Atoi(a.retryAfter); err == nil && time.Duration(s)*time.Second > wait {
				return true, time.Duration(s) * time.Second
			}
		}
		return true, wait
	default:
		return true, wait
	}
}

// againJittered is again for the statuses that may change, with full
// jitter over the step.
func (a answer) againJittered(n int) (bool, time.Duration) {
	wait := time.Duration(rand.Int63n(int64(steps[min(n, len(steps)-1)])*int64(time.Second) + 1))
	switch a.statusCode {
	case 429, 500, 502, 503, 504:
		if a.retryAfter != "" {
			if s, err := strconv.Atoi(a.retryAfter); err == nil {
				return true, time.Duration(s) * time.Second
			}
		}
		return true, wait
	}
	return false, 0
}

// harvest posts until again says stop, waiting its step on a timer that
// hears the request's context: again goes round on a 401 and a 422, and
// its steps are constants.
//
// case: flag unclassified nojitter
func harvest(hc *http.Client, req *http.Request) {
	n := 0
	for { // want `unclassified: retry loop around post retries on 401, 422`
		a := post(hc, req)
		retry, wait := a.again(n)
		if !retry {
			return
		}
		t := time.NewTimer(wait) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
		n++
	}
}

// harvestJittered is harvest over againJittered.
//
// case: clean
func harvestJittered(hc *http.Client, req *http.Request) {
	n := 0
	for {
		a := post(hc, req)
		retry, wait := a.againJittered(n)
		if !retry {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
		n++
	}
}
