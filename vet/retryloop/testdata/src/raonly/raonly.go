// Package raonly holds, written anew, retry loops that read Retry-After
// on one status and retry another without it: a 429's wait is the
// server's, a 503 sent again on the client's own schedule.
package raonly

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

var errGaveUp = errors.New("gave up")

// pause waits d or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// jittered is a full-jitter wait up to 1 s << attempt.
func jittered(attempt int) time.Duration {
	return rand.N(time.Second << attempt)
}

// A case for 429 reads the server's wait; the 5xx case, a 503 among
// them, waits the client's own.
//
// case: flag retryafter
func fetchSwitch(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode < 300:
			return resp, nil
		case resp.StatusCode == http.StatusTooManyRequests:
			resp.Body.Close()
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err := pause(ctx, time.Duration(secs)*time.Second); err != nil {
				return nil, err
			}
		case resp.StatusCode >= 500:
			resp.Body.Close()
			if err := pause(ctx, jittered(attempt)); err != nil { // want `retryafter: retry loop retries 503 without reading Retry-After, which it reads only on another status`
				return nil, err
			}
		default:
			return resp, nil
		}
	}
	return nil, errGaveUp
}

// The same loop reading the header in a case that holds on 429 and 503.
//
// case: clean
func fetchBoth(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode < 300:
			return resp, nil
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
			resp.Body.Close()
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err := pause(ctx, time.Duration(secs)*time.Second); err != nil {
				return nil, err
			}
		case resp.StatusCode >= 500:
			resp.Body.Close()
			if err := pause(ctx, jittered(attempt)); err != nil {
				return nil, err
			}
		default:
			return resp, nil
		}
	}
	return nil, errGaveUp
}

// The header read before any test of the status: every status's wait
// can take it.
//
// case: clean
func fetchFirst(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 300 {
			return resp, nil
		}
		resp.Body.Close()
		wait := jittered(attempt)
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			wait = time.Duration(secs) * time.Second
		}
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
			return nil, errGaveUp
		}
		if err := pause(ctx, wait); err != nil {
			return nil, err
		}
	}
	return nil, errGaveUp
}

// A switch on the status itself: the 429 case reads the header, the
// gateway errors' case, 503 among them, does not.
//
// case: flag retryafter
func fetchTagged(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusOK:
			return resp, nil
		case http.StatusTooManyRequests:
			resp.Body.Close()
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err := pause(ctx, time.Duration(secs)*time.Second); err != nil {
				return nil, err
			}
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			resp.Body.Close()
			if err := pause(ctx, jittered(attempt)); err != nil { // want `retryafter: retry loop retries 503 without reading Retry-After, which it reads only on another status`
				return nil, err
			}
		default:
			return resp, nil
		}
	}
	return nil, errGaveUp
}

// Ifs: the 429 branch reads the header and goes round; a 5xx goes round
// after the client's own wait.
//
// case: flag retryafter
func fetchIfs(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 300 {
			return resp, nil
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err := pause(ctx, time.Duration(secs)*time.Second); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode >= 500 {
			if err := pause(ctx, jittered(attempt)); err != nil { // want `retryafter: retry loop retries 503 without reading Retry-After, which it reads only on another status`
				return nil, err
			}
			continue
		}
		return nil, errGaveUp
	}
	return nil, errGaveUp
}

// The 429 read as before, and every 5xx handed back at once: nothing
// but a 429 goes round.
//
// case: clean
func fetchOnly429(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp, nil
		}
		resp.Body.Close()
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err := pause(ctx, time.Duration(secs)*time.Second+jittered(0)); err != nil {
			return nil, err
		}
	}
	return nil, errGaveUp
}
