package breaker

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// t0 is an explicit instant; tests never read the clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// iface is the recoil.Breaker interface, restated so this package need not
// import recoil.
type iface interface {
	AllowAt(now time.Time) bool
	RecordAt(now time.Time, o Outcome)
}

var _ iface = (*Breaker)(nil)

// latencyIface is the recoil.LatencyBreaker interface (a Breaker told each
// attempt's latency), restated likewise.
type latencyIface interface {
	iface
	RecordLatencyAt(now time.Time, o Outcome, latency time.Duration)
}

var _ latencyIface = (*Breaker)(nil)

// recorder collects hook calls.
type recorder struct {
	mu      sync.Mutex
	changes []change
}

func (r *recorder) hook(from, to State, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, change{from, to, at})
}

func (r *recorder) get() []change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]change(nil), r.changes...)
}

// feed admits and records each outcome at instant now.
func feed(b *Breaker, now time.Time, outcomes ...Outcome) {
	for _, o := range outcomes {
		if b.AllowAt(now) {
			b.RecordAt(now, o)
		}
	}
}

func repeat(o Outcome, n int) []Outcome {
	s := make([]Outcome, n)
	for i := range s {
		s[i] = o
	}
	return s
}

func cat(parts ...[]Outcome) []Outcome {
	var s []Outcome
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

const (
	S = Success
	F = Failure
	I = Ignored
)

func TestStateString(t *testing.T) {
	tests := []struct {
		s    State
		want string
	}{
		{Closed, "closed"},
		{Open, "open"},
		{HalfOpen, "half-open"},
		{State(7), "State(7)"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("State(%d).String() = %q, want %q", uint8(tt.s), got, tt.want)
		}
	}
}

func TestConsecutiveTrip(t *testing.T) {
	tests := []struct {
		name     string
		s        Settings
		outcomes []Outcome
		want     State
		wantRun  int // consecutive failures, if closed
	}{
		{"default trips on a run of 14 alone", Settings{}, repeat(F, failuresToTripAlone), Open, 0},
		{"default holds at 13", Settings{}, repeat(F, failuresToTripAlone-1), Closed, 13},
		{"success ends the run", Settings{}, cat(repeat(F, 13), []Outcome{S}, repeat(F, 13)), Closed, 13},
		{"ignored neither ends nor extends", Settings{}, []Outcome{F, F, I, F, I, I, F}, Closed, 4},
		{"ignored then the fourteenth", Settings{}, cat(repeat(F, 7), []Outcome{I}, repeat(F, 7)), Open, 0},
		{"the run scales with the volume: 19 after 1,000 outcomes, a tenth failing", Settings{}, cat(tenthFailing(1000), repeat(F, 19)), Closed, 19},
		{"the run scales with the volume: 20 after 1,000 outcomes, a tenth failing", Settings{}, cat(tenthFailing(1000), repeat(F, 20)), Open, 0},
		{"after a window without failures the volume counts from the first", Settings{}, cat(repeat(S, 1000), repeat(F, failuresToTripAlone)), Open, 0},
		{"a fixed run of five is an explicit choice", Settings{ConsecutiveFailures: 5}, repeat(F, 5), Open, 0},
		{"custom three", Settings{ConsecutiveFailures: 3}, repeat(F, 3), Open, 0},
		{"custom one", Settings{ConsecutiveFailures: 1}, []Outcome{S, S, F}, Open, 0},
		{"disabled, the rate out of reach", Settings{ConsecutiveFailures: -1, MinRequests: 1 << 30}, repeat(F, 1000), Closed, 1000},
		{"disabled, the default rate still trips", Settings{ConsecutiveFailures: -1}, repeat(F, DefaultMinRequests), Open, 0},
		{"unknown outcome is ignored", Settings{ConsecutiveFailures: 2}, []Outcome{F, Outcome(9), F}, Open, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Must(New(tt.s))
			feed(b, t0, tt.outcomes...)
			c := b.CountsAt(t0)
			if c.State != tt.want {
				t.Errorf("state = %v, want %v", c.State, tt.want)
			}
			if c.ConsecutiveFailures != tt.wantRun {
				t.Errorf("ConsecutiveFailures = %d, want %d", c.ConsecutiveFailures, tt.wantRun)
			}
		})
	}
}

// failuresToTripAlone is the run that trips a default breaker whose window
// holds only the run: the first n with n ≥ bits.Len(n) + DefaultRunMargin.
const failuresToTripAlone = 14

func TestZeroBreaker(t *testing.T) {
	var b Breaker
	feed(&b, t0, repeat(F, failuresToTripAlone-1)...)
	if got := b.StateAt(t0); got != Closed {
		t.Fatalf("after %d failures: state = %v, want closed", failuresToTripAlone-1, got)
	}
	feed(&b, t0, F)
	if got := b.StateAt(t0); got != Open {
		t.Fatalf("after %d failures: state = %v, want open", failuresToTripAlone, got)
	}
	if got, want := b.CountsAt(t0).OpenUntil, t0.Add(DefaultOpenDuration); !got.Equal(want) {
		t.Errorf("OpenUntil = %v, want %v", got, want)
	}
	if b.AllowAt(at(DefaultOpenDuration - 1)) {
		t.Errorf("AllowAt(open end - 1ns) = true, want false")
	}
	if !b.AllowAt(at(DefaultOpenDuration)) {
		t.Errorf("AllowAt(open end) = false, want true")
	}
	if b.AllowAt(at(DefaultOpenDuration)) {
		t.Errorf("second probe: AllowAt = true, want false (DefaultMaxProbes = 1)")
	}
	b.RecordAt(at(DefaultOpenDuration), S)
	if got := b.StateAt(at(DefaultOpenDuration)); got != Closed {
		t.Errorf("after one probe success: state = %v, want closed", got)
	}
}

// TestHealthyPathZeroNow checks the zero-now convention on a closed breaker
// with the consecutive trip: whatever its outcomes, short of a trip, it
// stays closed. (That it reads no clock meanwhile is what
// BenchmarkClosedAllowRecord measures: a clock read would be most of it.)
func TestHealthyPathZeroNow(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: 3}))
	for range 100 {
		b.Allow()
		b.Record(S)
		b.Allow()
		b.Record(F)
		b.Record(F)
		b.Record(I)
		b.Record(S)
	}
	if got := b.StateAt(time.Time{}); got != Closed {
		t.Errorf("state = %v, want closed", got)
	}
	_ = b.CountsAt(time.Time{})
}

// TestShorthandsUseClock runs on synctest's fake clock, which the
// shorthands read as time.Now.
func TestShorthandsUseClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		r := &recorder{}
		b := Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Second, OnStateChange: r.hook}))
		b.Allow()
		b.Record(F)
		if got := b.State(); got != Open {
			t.Fatalf("State() = %v, want open", got)
		}
		time.Sleep(time.Second) // on the fake clock: returns at once
		if !b.Allow() {
			t.Fatalf("Allow() at open end = false, want true")
		}
		time.Sleep(time.Second)
		b.Record(S)
		want := []change{
			{Closed, Open, start},
			{Open, HalfOpen, start.Add(time.Second)},
			{HalfOpen, Closed, start.Add(2 * time.Second)},
		}
		checkChanges(t, r.get(), want)
		if got := b.Counts(); got.State != Closed {
			t.Errorf("Counts().State = %v, want closed", got.State)
		}
	})
}

func checkChanges(t *testing.T, got, want []change) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("hook calls = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].from != want[i].from || got[i].to != want[i].to || !got[i].at.Equal(want[i].at) {
			t.Errorf("hook call %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestRateTrip(t *testing.T) {
	rate := Settings{
		ConsecutiveFailures: -1,
		FailureRate:         0.5,
		Window:              10 * time.Second,
		MinRequests:         20,
	}
	type step struct {
		d        time.Duration // offset from t0
		outcomes []Outcome
	}
	tests := []struct {
		name  string
		s     Settings
		steps []step
		want  State
	}{
		{"below volume, all failures", rate, []step{{0, repeat(F, 19)}}, Closed},
		{"volume reached", rate, []step{{0, repeat(F, 20)}}, Open},
		{"exactly the rate", rate, []step{{0, cat(repeat(S, 10), repeat(F, 10))}}, Open},
		{"just under the rate", rate, []step{{0, cat(repeat(S, 11), repeat(F, 9))}}, Closed},
		{"ignored adds no volume", rate, []step{{0, cat(repeat(F, 19), repeat(I, 50))}}, Closed},
		{"success completes the volume, does not trip", rate, []step{{0, cat(repeat(F, 19), []Outcome{S})}}, Closed},
		{"next failure trips", rate, []step{{0, cat(repeat(F, 19), []Outcome{S, F})}}, Open},
		{"spread across buckets", rate, []step{
			{0, repeat(F, 5)}, {3 * time.Second, repeat(F, 5)},
			{6 * time.Second, repeat(F, 5)}, {9 * time.Second, repeat(F, 5)},
		}, Open},
		{"old outcomes leave the window", rate, []step{
			{0, repeat(F, 19)}, {10 * time.Second, repeat(F, 1)},
		}, Closed},
		{"old successes leave, failures stay", rate, []step{
			{0, repeat(S, 100)}, {5 * time.Second, repeat(F, 15)}, {10 * time.Second, repeat(F, 5)},
		}, Open},
		{"old successes still in window", rate, []step{
			{0, repeat(S, 100)}, {5 * time.Second, repeat(F, 15)}, {9 * time.Second, repeat(F, 5)},
		}, Closed},
		{"default window and volume", Settings{ConsecutiveFailures: -1, FailureRate: 0.5, MinRequests: DefaultMinRequests}, []step{
			{0, repeat(F, DefaultMinRequests-1)}, {DefaultWindow - time.Second, repeat(F, 1)},
		}, Open},
		{"rate 1", Settings{ConsecutiveFailures: -1, FailureRate: 1, MinRequests: 3}, []step{
			{0, []Outcome{F, F, F}},
		}, Open},
		{"consecutive still trips with a rate", Settings{ConsecutiveFailures: 3, FailureRate: 0.9, MinRequests: 100}, []step{
			{0, repeat(F, 3)},
		}, Open},
		{"before epoch", rate, []step{
			{-100 * 365 * 24 * time.Hour, repeat(F, 20)},
		}, Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Must(New(tt.s))
			var last time.Time
			for _, st := range tt.steps {
				last = at(st.d)
				feed(b, last, st.outcomes...)
			}
			if got := b.StateAt(last); got != tt.want {
				t.Errorf("state = %v, want %v (counts %+v)", got, tt.want, b.CountsAt(last))
			}
		})
	}
}

// TestRateBelowVolumeNeverTrips: fewer than MinRequests outcomes never trip
// the rate, in any mix and any timing.
func TestRateBelowVolumeNeverTrips(t *testing.T) {
	for n := 1; n <= 30; n++ {
		b := Must(New(Settings{ConsecutiveFailures: -1, FailureRate: 0.01, MinRequests: n + 1}))
		for i := range n {
			feed(b, at(time.Duration(i)*time.Millisecond), F)
		}
		if got := b.StateAt(at(time.Second)); got != Closed {
			t.Errorf("MinRequests %d, %d failures: state = %v, want closed", n+1, n, got)
		}
	}
}

func TestRateWindowCounts(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: -1, FailureRate: 0.9, MinRequests: 1000}))
	feed(b, at(0), S, S, F, I)
	feed(b, at(4*time.Second), F, F)
	tests := []struct {
		d            time.Duration
		wantRequests int
		wantFailures int
	}{
		{0, 3, 1},
		{4 * time.Second, 5, 3},
		{9*time.Second + 999*time.Millisecond, 5, 3},
		{10 * time.Second, 2, 2},
		{14 * time.Second, 0, 0},
	}
	for _, tt := range tests {
		c := b.CountsAt(at(tt.d))
		if c.Requests != tt.wantRequests || c.Failures != tt.wantFailures {
			t.Errorf("CountsAt(+%v) requests, failures = %d, %d, want %d, %d",
				tt.d, c.Requests, c.Failures, tt.wantRequests, tt.wantFailures)
		}
	}
}

func TestWindowSaturation(t *testing.T) {
	w := newWindow(10*time.Second, 0.5, 0.5, 1)
	w.mask, w.stripes, w.slow = 0, w.stripes[:1], w.slow[:1] // one stripe, so it saturates
	for i := range countMax + 10 {
		w.add(0, i%4 == 0, i%5 == 0)
	}
	n, f, s := w.sum(0)
	if n > countMax || n < countMax/2 {
		t.Errorf("outcomes after saturation = %d, want in [%d, %d]", n, countMax/2, countMax)
	}
	if got := float64(f) / float64(n); math.Abs(got-0.25) > 0.01 {
		t.Errorf("rate after saturation = %.4f, want 0.25", got)
	}
	// The slow calls are halved with the outcomes they stand beside.
	if got := float64(s) / float64(n); math.Abs(got-0.2) > 0.01 {
		t.Errorf("slow-call rate after saturation = %.4f, want 0.2", got)
	}
}

func TestWindowDropsLateOutcome(t *testing.T) {
	w := newWindow(10*time.Second, 0.5, 0.5, 1)
	w.mask, w.stripes, w.slow = 0, w.stripes[:1], w.slow[:1] // one stripe, so both land in one bucket
	w.add(int64(15*time.Second), false, false)               // bucket 15, slot 5
	w.add(int64(5*time.Second), true, true)                  // bucket 5, same slot, a window behind
	w.addSlowSignal(int64(5 * time.Second))
	if n, f, s := w.sum(15); n != 1 || f != 0 || s != 0 {
		t.Errorf("sum = %d, %d, %d, want 1, 0, 0 (late outcome dropped)", n, f, s)
	}
}

func TestZeroAllocs(t *testing.T) {
	b := Must(New(Settings{}))
	var bi iface = b
	rb := Must(New(Settings{FailureRate: 0.5}))
	tests := []struct {
		name string
		f    func()
	}{
		{"closed allow+success", func() { bi.AllowAt(time.Time{}); bi.RecordAt(time.Time{}, S) }},
		{"closed failure+success", func() { b.Record(F); b.Record(S) }},
		{"rate allow+success", func() { rb.Allow(); rb.Record(S) }},
		{"state and counts", func() { b.State(); b.Counts() }},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, tt.f); got != 0 {
			t.Errorf("%s: allocs = %v, want 0", tt.name, got)
		}
	}
}

func TestSettingsExtremes(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: math.MaxUint32, OpenDuration: time.Duration(math.MaxInt64)}))
	if got := b.failLimit; got != math.MaxUint32 {
		t.Errorf("failLimit = %d, want %d", got, uint32(math.MaxUint32))
	}
	// Tripped after epoch, a MaxInt64 open period overflows int64 nanoseconds:
	// it must saturate, not wrap into the past.
	late := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	b = Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Duration(math.MaxInt64)}))
	feed(b, late, F)
	if b.AllowAt(late.Add(100 * 365 * 24 * time.Hour)) {
		t.Error("an open period of MaxInt64 ended")
	}
}

// TestDefaultTripsDoNoHarm pins the contract of the default trips
// (docs/why.md, "Do no harm"): a dependency failing at random at a rate a
// retry mostly recovers is never cut off, at a high call rate or a low one,
// and one that goes down after a healthy stretch is cut off within a few
// dozen failures.
func TestDefaultTripsDoNoHarm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name   string
		fail   float64
		every  time.Duration // between outcomes
		n      int
		opened bool
	}{
		{"30 % at 100 a second", 0.3, 10 * time.Millisecond, 200_000, false},
		{"50 % at 100 a second", 0.5, 10 * time.Millisecond, 200_000, false},
		{"30 % at 5 a second", 0.3, 200 * time.Millisecond, 50_000, false},
		{"50 % at 5 a second", 0.5, 200 * time.Millisecond, 50_000, false},
		{"95 % at 100 a second", 0.95, 10 * time.Millisecond, 10_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Must(New(Settings{}))
			now := t0
			for range tt.n {
				now = now.Add(tt.every)
				o := S
				if rng.Float64() < tt.fail {
					o = F
				}
				if b.AllowAt(now) {
					b.RecordAt(now, o)
				}
				if b.StateAt(now) != Closed {
					break
				}
			}
			if got := b.StateAt(now) != Closed; got != tt.opened {
				t.Errorf("opened = %v, want %v (counts %+v)", got, tt.opened, b.CountsAt(now))
			}
		})
	}
	// Down after a healthy stretch: the run trips long before the window's
	// successes age out.
	for _, every := range []time.Duration{10 * time.Millisecond, time.Second} {
		b := Must(New(Settings{}))
		now := t0
		for range 2000 {
			now = now.Add(every)
			b.RecordAt(now, S)
		}
		failures := 0
		for b.AllowAt(now) && failures < 1000 {
			now = now.Add(every)
			b.RecordAt(now, F)
			failures++
		}
		if failures > 20 {
			t.Errorf("down after 2,000 successes %v apart: open after %d failures, want at most 20", every, failures)
		}
	}
}

// tenthFailing returns n outcomes of which every tenth fails.
func tenthFailing(n int) []Outcome {
	out := make([]Outcome, n)
	for i := range out {
		out[i] = S
		if i%10 == 4 {
			out[i] = F
		}
	}
	return out
}
