package breaker

import "time"

// State is shorthand for StateAt(time.Time{}).
func (b *Breaker) State() State { return b.StateAt(time.Time{}) }

// StateAt returns the breaker's state at now. Like AllowAt, it turns an
// open breaker whose open period has ended half-open (calling the hook),
// so the states it reports are the states the breaker goes through. A zero
// now means the current time, read only when the breaker is open.
func (b *Breaker) StateAt(now time.Time) State {
	s := stateOf(b.word.Load())
	if s != Open {
		return s
	}
	now, t := instant(now)
	if t < b.openUntil.Load() {
		return Open
	}
	b.mu.Lock()
	b.expireLocked(now, t)
	s = stateOf(b.word.Load())
	b.unlock()
	return s
}

func (b *Breaker) expireLocked(now time.Time, t int64) {
	if stateOf(b.word.Load()) == Open && t >= b.openUntil.Load() {
		b.setLocked(HalfOpen, now, t)
	}
}

// Counts is a snapshot of a Breaker for metrics. Fields that do not apply
// to State are zero.
type Counts struct {
	// State is the breaker's state.
	State State
	// ConsecutiveFailures is the current run of failures (closed only).
	ConsecutiveFailures int
	// Requests and Failures are the Success and Failure outcomes in the
	// rate window ending now (zero for a breaker with only a fixed run;
	// kept while open, emptied when the breaker closes).
	Requests, Failures int
	// SlowCalls is the slow calls in the same window (zero without a
	// SlowCallRate): RecordLatencyAt's attempts slower than
	// SlowCallThreshold and RecordSlowAt's reports. It may exceed
	// Requests when slow reports outlive their calls' outcomes in the
	// window; the slow-call rate counts at most Requests.
	SlowCalls int
	// OpenUntil is when the open period ends (open only).
	OpenUntil time.Time
	// Probes is the number of admitted probes not yet reported, and
	// ProbeSuccesses the probe successes so far (half-open only).
	Probes, ProbeSuccesses int
}

// Counts is shorthand for CountsAt(time.Time{}).
func (b *Breaker) Counts() Counts { return b.CountsAt(time.Time{}) }

// CountsAt returns a snapshot of the breaker at now. Like StateAt, it turns
// an open breaker whose period has ended half-open. The window's counters
// are read one at a time without the lock, so under concurrent use they
// may be a few outcomes apart. A zero now means the current time, read
// only when the breaker is open or has a FailureRate.
func (b *Breaker) CountsAt(now time.Time) Counts {
	var t int64
	timed := false
	win := b.window()
	if win != nil || stateOf(b.word.Load()) == Open {
		now, t = instant(now)
		timed = true
	}
	b.mu.Lock()
	if stateOf(b.word.Load()) == Open {
		if !timed { // opened since the check above
			now, t = instant(now)
		}
		b.expireLocked(now, t)
	}
	w := b.word.Load()
	c := Counts{State: stateOf(w)}
	switch c.State {
	case Closed:
		c.ConsecutiveFailures = int(w & failMask)
	case Open:
		c.OpenUntil = epoch.Add(time.Duration(b.openUntil.Load()))
	case HalfOpen:
		c.Probes, c.ProbeSuccesses = b.probes, b.probeOK
	}
	b.unlock()
	if win != nil {
		c.Requests, c.Failures, c.SlowCalls = win.sum(win.bucket(t))
	}
	return c
}
