// Package pace spreads what a provider says remains of a meter over the
// time to its reset, so that a budget or an allowance paces its attempts
// instead of spending what remains at once and meeting the 429: until the
// reset, a charge goes only once the charges before it have been spread at
// an even interval per unit. Package budget's Rate and package fleet's
// local share use it; fleet's Redis scripts are its twin.
package pace

import (
	"math"
	"time"
)

// Pace is one meter's pacing. The zero Pace does not pace. It is not safe
// for concurrent use; its owner holds a lock.
type Pace struct {
	until    time.Time // when the meter resets and the pacing ends
	tat      time.Time // when the next unit may go (a GCRA's theoretical arrival time)
	interval float64   // per unit, in nanoseconds; +Inf when nothing remains
}

// Set paces remaining units over reset from now, keeping what an earlier
// pace's charges still hold back. remaining ≤ 0 lets nothing go until the
// reset.
func (p *Pace) Set(now time.Time, remaining int64, reset time.Duration) {
	p.until = now.Add(reset)
	p.tat = later(p.tat, now)
	if remaining <= 0 {
		p.interval, p.tat = math.Inf(1), p.until
		return
	}
	p.interval = float64(reset) / float64(remaining)
	if p.tat.After(p.until) {
		p.tat = p.until
	}
}

// Allow reports whether a charge may go at now: the pacing is over, or the
// charges before it have been spread.
func (p *Pace) Allow(now time.Time) bool { return !now.Before(p.until) || !p.tat.After(now) }

// Settle pushes the pace by n units at now, or for n < 0 gives n units
// back (a charge that proved too high); it never pushes past the reset.
func (p *Pace) Settle(now time.Time, n int64) {
	if !now.Before(p.until) || n == 0 {
		return
	}
	if math.IsInf(p.interval, 1) {
		p.tat = p.until
		return
	}
	d := float64(n) * p.interval
	switch {
	case d >= float64(p.until.Sub(now)):
		p.tat = p.until
	case n > 0:
		p.tat = later(p.tat, now).Add(time.Duration(d))
	default:
		p.tat = p.tat.Add(time.Duration(max(d, -math.MaxInt64/2)))
	}
	if p.tat.After(p.until) {
		p.tat = p.until
	}
}

// Until returns when the pacing ends; zero for a Pace never set.
func (p *Pace) Until() time.Time { return p.until }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
