package breaker

import (
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

// model is a sequential reference for a Breaker with a fixed run of
// failures as its only trip (the rate trips out of reach, MinRequests
// 2^30): the state machine as the documentation states it, with none of the
// atomics. With slow set, the breaker has a slow-call rate it never reaches
// while closed (MinRequests out of reach), so that slowness shows only in
// the half-open state: a slow probe, or a slow report, opens it again.
type model struct {
	limit     int           // 0: disabled
	slow      time.Duration // SlowCallThreshold; 0: no slow-call rate
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

// recordLatency is RecordLatencyAt.
func (m *model) recordLatency(now time.Time, o Outcome, latency time.Duration) {
	if m.slow > 0 && latency > m.slow && m.state == HalfOpen && o != Ignored {
		o = Failure
	}
	m.record(now, o)
}

// recordSlow is RecordSlowAt.
func (m *model) recordSlow(now time.Time) {
	if m.slow > 0 && m.state == HalfOpen {
		m.set(Open, now)
	}
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

// maxSteps bounds the operations one input drives.
const maxSteps = 2000

// TestPropertyMatchesModel drives a Breaker and the model with the same
// random sequence of AllowAt, RecordAt, RecordLatencyAt, RecordSlowAt,
// StateAt and time advances (including
// to exactly the end of an open period) and requires the same answers, the
// same state after every step and the same hook calls, on 300 generated
// cases; FuzzMatchesModel explores further.
func TestPropertyMatchesModel(t *testing.T) {
	fuzzgen.ForRandomInputs(t, 300, 600, checkMatchesModel)
}

func FuzzMatchesModel(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 600)
	f.Fuzz(func(t *testing.T, data []byte) { checkMatchesModel(t, fuzzgen.New(data)) })
}

func checkMatchesModel(t testing.TB, g *fuzzgen.Gen) {
	s := Settings{
		ConsecutiveFailures: fuzzgen.Pick(g, -1, 1, 2, 3, 4, 5, 6), // a fixed run, or none
		OpenDuration:        time.Duration(g.IntRange(0, 60)) * time.Second,
		MaxProbes:           g.IntRange(0, 3),
		SuccessThreshold:    g.IntRange(0, 4),
		MinRequests:         1 << 30, // the default rate trip out of reach
	}
	if g.IntRange(0, 1) == 1 {
		s.SlowCallRate, s.SlowCallThreshold = 0.5, 2*time.Second
	}
	r := &recorder{}
	s.OnStateChange = r.hook
	b := Must(New(s))
	m := newModel(s)
	m.slow = s.SlowCallThreshold
	now := t0
	check := func() {
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
	}
	check()
	for step := 0; g.More() && step < maxSteps; step++ {
		switch g.Choose(7) {
		case 5:
			o := fuzzgen.Pick(g, outcomes...)
			lat := time.Duration(g.IntRange(1, 3)) * time.Second
			b.RecordLatencyAt(now, o, lat)
			m.recordLatency(now, o, lat)
		case 6:
			b.RecordSlowAt(now)
			m.recordSlow(now)
		case 0: // advance
			now = now.Add(time.Duration(g.Int64Range(0, int64(70*time.Second))))
		case 1: // advance to the end of the open period, or just before it
			early := time.Duration(g.IntRange(0, 1))
			if m.state == Open && m.openUntil.After(now) {
				now = m.openUntil.Add(-early)
			}
		case 2:
			if got, want := b.AllowAt(now), m.allow(now); got != want {
				t.Fatalf("AllowAt(+%v) = %v, want %v", now.Sub(t0), got, want)
			}
		case 3:
			o := fuzzgen.Pick(g, outcomes...)
			b.RecordAt(now, o)
			m.record(now, o)
		case 4:
			m.expire(now)
			if got, want := b.StateAt(now), m.state; got != want {
				t.Fatalf("StateAt(+%v) = %v, want %v", now.Sub(t0), got, want)
			}
		}
		check()
	}
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

// TestPropertyLegalEdges: under any sequence of AllowAt, RecordAt,
// RecordLatencyAt, RecordSlowAt, StateAt, CountsAt and time advances, with
// any trip (consecutive, failure rate, slow-call rate), the state moves only along
// closed→open, open→half-open, half-open→open and half-open→closed; the
// hook sees every move once, in order, at non-decreasing instants; and a
// half-open breaker never has more than MaxProbes probes out. 300 generated
// cases; FuzzLegalEdges explores further.
func TestPropertyLegalEdges(t *testing.T) {
	fuzzgen.ForRandomInputs(t, 300, 600, checkLegalEdges)
}

func FuzzLegalEdges(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 600)
	f.Fuzz(func(t *testing.T, data []byte) { checkLegalEdges(t, fuzzgen.New(data)) })
}

func checkLegalEdges(t testing.TB, g *fuzzgen.Gen) {
	s := Settings{
		ConsecutiveFailures: g.IntRange(-1, 4),
		FailureRate:         fuzzgen.Pick(g, 0, 0.2, 0.5, 1),
		SlowCallRate:        fuzzgen.Pick(g, 0, 0.2, 0.5, 1),
		Window:              time.Duration(g.IntRange(0, 20)) * time.Second,
		MinRequests:         g.IntRange(0, 8),
		OpenDuration:        time.Duration(g.IntRange(0, 30)) * time.Second,
		MaxProbes:           g.IntRange(0, 3),
		SuccessThreshold:    g.IntRange(0, 3),
	}
	if s.SlowCallRate > 0 {
		s.SlowCallThreshold = time.Duration(g.IntRange(0, 2)) * time.Second
	}
	r := &recorder{}
	s.OnStateChange = r.hook
	b := Must(New(s))
	now := t0
	check := func() {
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
	}
	check()
	for step := 0; g.More() && step < maxSteps; step++ {
		switch g.Choose(7) {
		case 5:
			b.RecordLatencyAt(now, fuzzgen.Pick(g, outcomes...), time.Duration(g.IntRange(0, 3))*time.Second)
		case 6:
			b.RecordSlowAt(now)
		case 0:
			now = now.Add(time.Duration(g.Int64Range(0, int64(40*time.Second))))
		case 1:
			b.AllowAt(now)
		case 2:
			b.RecordAt(now, fuzzgen.Pick(g, outcomes...))
		case 3:
			b.StateAt(now)
		case 4:
			b.CountsAt(now)
		}
		check()
	}
}
