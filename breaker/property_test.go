package breaker

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// model is a sequential reference for a Breaker with the consecutive trip
// only: the state machine as the documentation states it, with none of the
// atomics.
type model struct {
	limit     int // 0: disabled
	openFor   time.Duration
	maxProbes int
	needOK    int

	state     State
	fails     int
	openUntil time.Time
	probes    int
	ok        int
	changes   []change
}

func newModel(s Settings) *model {
	m := &model{limit: s.ConsecutiveFailures, openFor: s.OpenDuration, maxProbes: s.MaxProbes, needOK: s.SuccessThreshold}
	if m.limit == 0 {
		m.limit = DefaultConsecutiveFailures
	}
	if m.limit < 0 {
		m.limit = 0
	}
	if m.openFor <= 0 {
		m.openFor = DefaultOpenDuration
	}
	if m.maxProbes <= 0 {
		m.maxProbes = DefaultMaxProbes
	}
	if m.needOK <= 0 {
		m.needOK = DefaultSuccessThreshold
	}
	return m
}

func (m *model) set(to State, now time.Time) {
	m.changes = append(m.changes, change{m.state, to, now})
	m.state, m.fails, m.probes, m.ok = to, 0, 0, 0
	if to == Open {
		m.openUntil = now.Add(m.openFor)
	}
}

func (m *model) expire(now time.Time) {
	if m.state == Open && !now.Before(m.openUntil) {
		m.set(HalfOpen, now)
	}
}

func (m *model) allow(now time.Time) bool {
	m.expire(now)
	switch m.state {
	case Closed:
		return true
	case HalfOpen:
		if m.probes < m.maxProbes {
			m.probes++
			return true
		}
	}
	return false
}

func (m *model) record(now time.Time, o Outcome) {
	switch m.state {
	case Closed:
		switch o {
		case Success:
			m.fails = 0
		case Failure:
			m.fails++
			if m.limit > 0 && m.fails >= m.limit {
				m.set(Open, now)
			}
		}
	case HalfOpen:
		if m.probes == 0 {
			return
		}
		m.probes--
		switch o {
		case Success:
			m.ok++
			if m.ok >= m.needOK {
				m.set(Closed, now)
			}
		case Failure:
			m.set(Open, now)
		}
	}
}

var outcomes = []Outcome{Success, Failure, Ignored}

// TestPropertyMatchesModel drives a Breaker and the model with the same
// random sequence of AllowAt, RecordAt, StateAt and time advances (including
// to exactly the end of an open period) and requires the same answers, the
// same state after every step and the same hook calls.
func TestPropertyMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Settings{
			ConsecutiveFailures: rapid.IntRange(-1, 6).Draw(t, "consecutive"),
			OpenDuration:        time.Duration(rapid.IntRange(0, 60).Draw(t, "openSeconds")) * time.Second,
			MaxProbes:           rapid.IntRange(0, 3).Draw(t, "maxProbes"),
			SuccessThreshold:    rapid.IntRange(0, 4).Draw(t, "successThreshold"),
		}
		r := &recorder{}
		s.OnStateChange = r.hook
		b := Must(New(s))
		m := newModel(s)
		now := t0
		t.Repeat(map[string]func(*rapid.T){
			"advance": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.Int64Range(0, int64(70*time.Second)).Draw(t, "d")))
			},
			"advanceToOpenEnd": func(t *rapid.T) {
				if m.state != Open || !m.openUntil.After(now) {
					t.Skip("not open")
				}
				now = m.openUntil.Add(-time.Duration(rapid.IntRange(0, 1).Draw(t, "early")))
			},
			"allow": func(t *rapid.T) {
				if got, want := b.AllowAt(now), m.allow(now); got != want {
					t.Fatalf("AllowAt(+%v) = %v, want %v", now.Sub(t0), got, want)
				}
			},
			"record": func(t *rapid.T) {
				o := rapid.SampledFrom(outcomes).Draw(t, "outcome")
				b.RecordAt(now, o)
				m.record(now, o)
			},
			"state": func(t *rapid.T) {
				m.expire(now)
				if got, want := b.StateAt(now), m.state; got != want {
					t.Fatalf("StateAt(+%v) = %v, want %v", now.Sub(t0), got, want)
				}
			},
			"": func(t *rapid.T) {
				w := b.word.Load()
				if got, want := stateOf(w), m.state; got != want {
					t.Fatalf("state = %v, want %v", got, want)
				}
				if m.state == Closed {
					if got, want := int(w&failMask), m.fails; got != want {
						t.Fatalf("consecutive failures = %d, want %d", got, want)
					}
				}
				if b.probes != m.probes || b.probeOK != m.ok {
					t.Fatalf("probes, successes = %d, %d, want %d, %d", b.probes, b.probeOK, m.probes, m.ok)
				}
				got := r.get()
				if len(got) != len(m.changes) {
					t.Fatalf("hook calls = %v, want %v", got, m.changes)
				}
				for i := range got {
					if got[i].from != m.changes[i].from || got[i].to != m.changes[i].to || !got[i].at.Equal(m.changes[i].at) {
						t.Fatalf("hook call %d = %v, want %v", i, got[i], m.changes[i])
					}
				}
			},
		})
	})
}

var legal = map[[2]State]bool{
	{Closed, Open}:     true,
	{Open, HalfOpen}:   true,
	{HalfOpen, Open}:   true,
	{HalfOpen, Closed}: true,
}

// checkWalk fails unless changes is a walk along legal edges starting
// from Closed and ending in final.
func checkWalk(t interface{ Fatalf(string, ...any) }, changes []change, final State) {
	prev := Closed
	for i, c := range changes {
		if c.from != prev {
			t.Fatalf("hook call %d from %v, want from %v (the previous to)", i, c.from, prev)
		}
		if !legal[[2]State{c.from, c.to}] {
			t.Fatalf("hook call %d: illegal edge %v -> %v", i, c.from, c.to)
		}
		prev = c.to
	}
	if prev != final {
		t.Fatalf("state = %v, want %v (the last hook call's to)", final, prev)
	}
}

// TestPropertyLegalEdges: under any sequence of AllowAt, RecordAt, StateAt,
// CountsAt and time advances, with either trip, the state moves only along
// closed→open, open→half-open, half-open→open and half-open→closed; the
// hook sees every move once, in order, at non-decreasing instants; and a
// half-open breaker never has more than MaxProbes probes out.
func TestPropertyLegalEdges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Settings{
			ConsecutiveFailures: rapid.IntRange(-1, 4).Draw(t, "consecutive"),
			FailureRate:         rapid.SampledFrom([]float64{0, 0.2, 0.5, 1}).Draw(t, "rate"),
			Window:              time.Duration(rapid.IntRange(0, 20).Draw(t, "windowSeconds")) * time.Second,
			MinRequests:         rapid.IntRange(0, 8).Draw(t, "minRequests"),
			OpenDuration:        time.Duration(rapid.IntRange(0, 30).Draw(t, "openSeconds")) * time.Second,
			MaxProbes:           rapid.IntRange(0, 3).Draw(t, "maxProbes"),
			SuccessThreshold:    rapid.IntRange(0, 3).Draw(t, "successThreshold"),
		}
		r := &recorder{}
		s.OnStateChange = r.hook
		b := Must(New(s))
		now := t0
		t.Repeat(map[string]func(*rapid.T){
			"advance": func(t *rapid.T) {
				now = now.Add(time.Duration(rapid.Int64Range(0, int64(40*time.Second)).Draw(t, "d")))
			},
			"allow":  func(t *rapid.T) { b.AllowAt(now) },
			"record": func(t *rapid.T) { b.RecordAt(now, rapid.SampledFrom(outcomes).Draw(t, "outcome")) },
			"state":  func(t *rapid.T) { b.StateAt(now) },
			"counts": func(t *rapid.T) { b.CountsAt(now) },
			"": func(t *rapid.T) {
				changes := r.get()
				checkWalk(t, changes, stateOf(b.word.Load()))
				for i := 1; i < len(changes); i++ {
					if changes[i].at.Before(changes[i-1].at) {
						t.Fatalf("hook call %d at %v, before call %d at %v", i, changes[i].at, i-1, changes[i-1].at)
					}
				}
				if b.probes > b.probeLimit() {
					t.Fatalf("probes out = %d, more than %d", b.probes, b.probeLimit())
				}
			},
		})
	})
}
