// Package memberfield holds, written anew, retrying transports whose
// statuses to retry are a configuration field tested through a small
// helper of the package: a helper handed the configuration, a helper
// handed the codes before the status, and a verdict helper answering
// with a result and whether to go round.
package memberfield

import (
	"math/rand"
	"net/http"
	"time"
)

// Config says how a transport retries.
type Config struct {
	MaxRetries    int
	Base          time.Duration // want Base:"setting kind=1 bydefault=true caller=false"
	RetryOnStatus []int
}

// DefaultConfig retries rate limits and an unavailable server.
func DefaultConfig() *Config {
	return &Config{MaxRetries: 3, Base: 100 * time.Millisecond, RetryOnStatus: []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}}
}

// GatewayConfig retries only a gateway's failures.
type GatewayConfig struct {
	MaxRetries int
	Codes      []int
}

// DefaultGatewayConfig retries 502 and 504.
func DefaultGatewayConfig() *GatewayConfig {
	return &GatewayConfig{MaxRetries: 3, Codes: []int{http.StatusBadGateway, http.StatusGatewayTimeout}}
}

func retryableStatus(status int, cfg *Config) bool {
	for _, code := range cfg.RetryOnStatus {
		if status == code {
			return true
		}
	}
	return false
}

func contains(codes []int, status int) bool {
	for _, c := range codes {
		if c == status {
			return true
		}
	}
	return false
}

func pause(req *http.Request, attempt int, base time.Duration) error {
	t := time.NewTimer(time.Duration(rand.Int63n(int64(base << attempt))))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-req.Context().Done():
		return req.Context().Err()
	}
}

type transport struct {
	next http.RoundTripper
	cfg  *Config
}

// roundTrip goes round on the configured statuses, 429 and 503 by
// default, on a jittered schedule of its own.
//
// case: flag retryafter
func (t *transport) roundTrip(req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt <= t.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := pause(req, attempt, t.cfg.Base); err != nil { // want `retryafter: retry loop retries 429 and 503`
				return nil, err
			}
		}
		resp, err = t.next.RoundTrip(req)
		if err == nil && !retryableStatus(resp.StatusCode, t.cfg) {
			return resp, nil
		}
	}
	return resp, err
}

type result struct {
	resp *http.Response
	err  error
}

// verdict says what one attempt's answer leaves the loop with, and
// whether to go round.
func (t *transport) verdict(resp *http.Response, err error) (result, bool) {
	if err != nil {
		return result{err: err}, false
	}
	if !retryableStatus(resp.StatusCode, t.cfg) {
		return result{resp: resp}, false
	}
	resp.Body.Close()
	return result{}, true
}

// roundTripVerdict is the same loop deciding through verdict.
//
// case: flag retryafter
func (t *transport) roundTripVerdict(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := pause(req, attempt, t.cfg.Base); err != nil { // want `retryafter: retry loop retries 429 and 503`
				return nil, err
			}
		}
		resp, err := t.next.RoundTrip(req)
		res, again := t.verdict(resp, err)
		if !again || attempt == t.cfg.MaxRetries {
			return res.resp, res.err
		}
	}
}

type gateway struct {
	next http.RoundTripper
	cfg  *GatewayConfig
}

// roundTrip retries only 502 and 504 by default, tested codes first:
// nothing a server asks to wait for.
//
// case: clean
func (g *gateway) roundTrip(req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt <= g.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			if err := pause(req, attempt, 100*time.Millisecond); err != nil {
				return nil, err
			}
		}
		resp, err = g.next.RoundTrip(req)
		if err == nil && !contains(g.cfg.Codes, resp.StatusCode) {
			return resp, nil
		}
	}
	return resp, err
}
