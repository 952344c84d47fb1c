package fleet

import (
	"time"
)

// lease is the part of a shared allowance or budget a process holds: n
// units it may spend without asking Redis, until exp. refused caches a
// refusal from Redis until that instant, so a process over its allowance
// does not ask again on every decision.
type lease struct {
	n       int64
	exp     time.Time
	refused time.Time
}

// take spends n units if the lease holds them and has not expired.
func (l *lease) take(now time.Time, n int64) bool {
	if l.n >= n && now.Before(l.exp) {
		l.n -= n
		return true
	}
	return false
}

// left is what the lease holds at now: zero once it has expired.
func (l *lease) left(now time.Time) int64 {
	if now.Before(l.exp) {
		return l.n
	}
	return 0
}

// grant adds n units, valid for ttl from now; n ≤ 0 changes nothing.
func (l *lease) grant(now time.Time, n int64, ttl time.Duration) {
	if n <= 0 {
		return
	}
	l.n = l.left(now) + n
	l.exp = now.Add(ttl)
}

// gate lets one decision at a time go to Redis for a lease, and bounds how
// long the others wait for it. A decision that finds the gate taken waits at
// most until its own deadline; if that passes, it decides from the local
// share.
type gate chan struct{}

func newGate() gate { return make(gate, 1) }

// enter takes the gate, waiting until deadline at most; false if it could
// not.
func (g gate) enter(deadline time.Time) bool {
	select {
	case g <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

func (g gate) leave() { <-g }

// gcra is the generic cell rate algorithm, a token bucket kept as one
// instant (the theoretical arrival time): the local share's limiter, and the
// Go twin of the allowance's Lua script.
type gcra struct{ tat time.Time }

// take admits n units at now if the bucket — one unit per interval, tau of
// burst tolerance — holds them.
func (g *gcra) take(now time.Time, n int64, interval, tau time.Duration) bool {
	tat := g.tat
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(time.Duration(n) * interval)
	if next.Sub(now) > tau {
		return false
	}
	g.tat = next
	return true
}

// settle moves the bucket by d units: later for a charge (d > 0), earlier
// for a refund (d < 0). A refund of a bucket already full changes nothing.
func (g *gcra) settle(now time.Time, d int64, interval time.Duration) {
	if d > 0 {
		g.tat = later(g.tat, now).Add(time.Duration(d) * interval)
	} else {
		g.tat = g.tat.Add(time.Duration(d) * interval)
	}
}

// paced is the pacing rule: what remains will not last until the reset if
// spent at the limit's rate, remaining · window < limit · reset.
func paced(remaining int64, reset time.Duration, limit int64, window time.Duration) bool {
	return reset > 0 && float64(remaining)*float64(window) < float64(limit)*float64(reset)
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
