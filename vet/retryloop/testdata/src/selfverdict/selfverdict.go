// Package selfverdict holds, written anew, loops whose attempt helper
// decides for itself whether to go round (retry, err := s.send(ctx)),
// polls that also wait out a server error on a path of their own, a
// default schedule copied from a package-level client, and a waiting
// helper whose bool says whether attempts remain.
package selfverdict

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"strconv"
	"time"
)

// sender posts batches to an ingest endpoint.
type sender struct {
	hc      *http.Client
	url     string
	timeout time.Duration
}

// send makes one request and says whether it is worth another: every
// transport error, and the statuses retryable names.
func (s *sender) send(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, nil)
	if err != nil {
		return false, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		return false, nil
	}
	if retryable(resp.StatusCode) {
		return true, fmt.Errorf("ingest: %d", resp.StatusCode)
	}
	return false, fmt.Errorf("ingest: %d", resp.StatusCode)
}

func retryable(code int) bool {
	switch code {
	case 500, 503, 504:
		return true
	}
	return false
}

// sendQuiet is send for statuses that never ask for a later try: only a
// 500 and a 502 go round.
func (s *sender) sendQuiet(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, nil)
	if err != nil {
		return false, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == 500 || resp.StatusCode == 502 {
		return true, fmt.Errorf("ingest: %d", resp.StatusCode)
	}
	if resp.StatusCode >= 300 {
		return false, fmt.Errorf("ingest: %d", resp.StatusCode)
	}
	return false, nil
}

// flush tries once, then goes round while send says retry, with full
// jitter, until the timeout: send retries a 503 and nothing reads
// Retry-After.
//
// case: flag retryafter
func (s *sender) flush(ctx context.Context) error {
	retry, err := s.send(ctx)
	if !retry {
		return err
	}
	start := time.Now()
	for err != nil {
		if time.Since(start) > s.timeout {
			return err
		}
		select {
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second)))): // want `retryafter: retry loop retries 503 without reading Retry-After`
		case <-ctx.Done():
			return ctx.Err()
		}
		retry, err = s.send(ctx)
		if !retry {
			return err
		}
	}
	return err
}

// flushQuiet is flush over sendQuiet, which never retries a 429 or a 503.
//
// case: clean
func (s *sender) flushQuiet(ctx context.Context) error {
	retry, err := s.sendQuiet(ctx)
	if !retry {
		return err
	}
	start := time.Now()
	for err != nil {
		if time.Since(start) > s.timeout {
			return err
		}
		select {
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second)))):
		case <-ctx.Done():
			return ctx.Err()
		}
		retry, err = s.sendQuiet(ctx)
		if !retry {
			return err
		}
	}
	return err
}

// pollToken is a device-flow poll: "pending" answers poll on, and a 5xx
// is waited out on a jittered path of its own, without reading
// Retry-After.
//
// case: flag retryafter
func pollToken(ctx context.Context, hc *http.Client, url string) (string, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		state := resp.Header.Get("X-State")
		resp.Body.Close()
		if resp.StatusCode >= http.StatusInternalServerError {
			select {
			case <-time.After(time.Duration(rand.Int63n(int64(10 * time.Second)))): // want `retryafter: retry loop retries 503 without reading Retry-After`
			case <-ctx.Done():
				return "", ctx.Err()
			}
			continue
		}
		if state == "pending" {
			select {
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			continue
		}
		return state, nil
	}
	return "", errors.New("device code expired")
}

// pollTokenHeard is pollToken reading the server's Retry-After on a 5xx.
//
// case: clean
func pollTokenHeard(ctx context.Context, hc *http.Client, url string) (string, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		state := resp.Header.Get("X-State")
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		resp.Body.Close()
		if resp.StatusCode >= http.StatusInternalServerError {
			select {
			case <-time.After(time.Duration(rand.Int63n(int64(10*time.Second))) + time.Duration(after)*time.Second):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			continue
		}
		if state == "pending" {
			select {
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			continue
		}
		return state, nil
	}
	return "", errors.New("device code expired")
}

// watchState polls every 5 s whatever the answer, until it reads "done":
// a schedule, with no wait of a failure's own.
//
// case: clean
func watchState(ctx context.Context, hc *http.Client, url string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			done := resp.Header.Get("X-State") == "done"
			resp.Body.Close()
			if done {
				return nil
			}
		}
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
