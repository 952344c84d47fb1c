package demo

import (
	"net/http"
	"sync"
	"time"
)

// startGate holds the first attempts of a run until every caller has sent
// one, then lets them all go at once, and every later attempt straight
// through: callers that all begin at the same instant, as in a spike.
//
// Without it the demo races: the callers' goroutines start one after
// another, and how many first attempts are on the wire before the first
// refusals come back depends on how busy the machine is. A policy with a
// circuit breaker shared by the callers (the recoil default's) then makes
// either one attempt per caller before the breaker opens, or only the few
// sent before it opened — 400 or about 205 attempts at 200 callers, from
// run to run. With the gate every caller's first attempt is sent before any
// answer can come back, so every run is the first case, which the simulator
// models by starting all callers at the same instant.
type startGate struct {
	base http.RoundTripper
	mu   sync.Mutex
	left int           // first attempts still to arrive
	open chan struct{} // closed when the last arrives

	// sent counts the attempts sent, the first after the gate opened
	// and the last at the instants first and last.
	sent        int64
	first, last time.Time
	// counted is closed once paceAttempts have been sent: enough to
	// measure a pace from, however slowly a busy machine sends them.
	counted chan struct{}
}

// paceAttempts is how many attempts a calibration run sends at least
// before it may end (see endAfterOpen): two make one interval, the third
// one more.
const paceAttempts = 3

// pace returns the time between the first attempt sent after the gate
// opened and the last, over the attempts in between; zero if fewer than
// two were sent.
func (g *startGate) pace() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sent < 2 {
		return 0
	}
	return g.last.Sub(g.first) / time.Duration(g.sent-1)
}

func newStartGate(base http.RoundTripper, callers int) *startGate {
	return &startGate{base: base, left: callers, open: make(chan struct{}), counted: make(chan struct{})}
}

// RoundTrip waits, while the gate is shut, for it to open or the request's
// context to end, then sends req.
func (g *startGate) RoundTrip(req *http.Request) (*http.Response, error) {
	g.mu.Lock()
	if g.left > 0 {
		g.left--
		if g.left == 0 {
			close(g.open)
		}
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-req.Context().Done():
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, req.Context().Err()
	}
	now := time.Now()
	g.mu.Lock()
	if g.sent == 0 {
		g.first = now
	}
	g.sent++
	g.last = now
	if g.sent == paceAttempts {
		close(g.counted)
	}
	g.mu.Unlock()
	return g.base.RoundTrip(req)
}
