package breaker

// The breaker open and half-open: expiry, probes and their outcomes, the
// hook.

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestOpenExpiry(t *testing.T) {
	const open = 7 * time.Second
	tests := []struct {
		d         time.Duration // after the trip
		wantState State
		wantAllow bool
	}{
		{0, Open, false},
		{open - time.Nanosecond, Open, false},
		{open, HalfOpen, true},
		{open + time.Hour, HalfOpen, true},
	}
	for _, tt := range tests {
		trip := at(time.Minute)
		for _, method := range []string{"StateAt", "AllowAt"} {
			b := Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: open}))
			feed(b, trip, F)
			now := trip.Add(tt.d)
			switch method {
			case "StateAt":
				if got := b.StateAt(now); got != tt.wantState {
					t.Errorf("StateAt(trip+%v) = %v, want %v", tt.d, got, tt.wantState)
				}
			case "AllowAt":
				if got := b.AllowAt(now); got != tt.wantAllow {
					t.Errorf("AllowAt(trip+%v) = %v, want %v", tt.d, got, tt.wantAllow)
				}
			}
		}
	}
}

func TestOpenDropsOutcomes(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: 1}))
	feed(b, t0, F)
	// Attempts admitted before the trip report late: dropped.
	for _, o := range []Outcome{S, S, F, I} {
		b.RecordAt(at(time.Second), o)
	}
	c := b.CountsAt(at(time.Second))
	if c.State != Open || !c.OpenUntil.Equal(at(DefaultOpenDuration)) {
		t.Errorf("counts = %+v, want open until %v", c, at(DefaultOpenDuration))
	}
}

// halfOpen returns a breaker tripped at t0 and half-open at at(time.Second).
func halfOpen(t *testing.T, s Settings) *Breaker {
	t.Helper()
	s.ConsecutiveFailures = 1
	s.OpenDuration = time.Second
	b := Must(New(s))
	feed(b, t0, F)
	if got := b.StateAt(at(time.Second)); got != HalfOpen {
		t.Fatalf("setup: state = %v, want half-open", got)
	}
	return b
}

func TestBoundedProbes(t *testing.T) {
	for _, probes := range []int{0, 1, 2, 5} {
		b := halfOpen(t, Settings{MaxProbes: probes, SuccessThreshold: 100})
		want := max(probes, DefaultMaxProbes)
		now := at(time.Second)
		for i := range want {
			if !b.AllowAt(now) {
				t.Fatalf("MaxProbes %d: probe %d refused", probes, i+1)
			}
		}
		if b.AllowAt(now) {
			t.Errorf("MaxProbes %d: probe %d admitted, want refused", probes, want+1)
		}
		if got := b.CountsAt(now).Probes; got != want {
			t.Errorf("MaxProbes %d: Probes = %d, want %d", probes, got, want)
		}
		b.RecordAt(now, S) // frees one slot
		if !b.AllowAt(now) {
			t.Errorf("MaxProbes %d: after a probe reported, AllowAt = false, want true", probes)
		}
		if b.AllowAt(now) {
			t.Errorf("MaxProbes %d: slots full again, AllowAt = true, want false", probes)
		}
	}
}

func TestProbeOutcomes(t *testing.T) {
	probeAt := at(time.Second)
	tests := []struct {
		name      string
		s         Settings
		outcomes  []Outcome // each admitted then recorded, in turn
		wantState State
		wantOK    int // ProbeSuccesses, if half-open
	}{
		{"one success closes", Settings{}, []Outcome{S}, Closed, 0},
		{"failure reopens", Settings{}, []Outcome{F}, Open, 0},
		{"threshold 3: two successes", Settings{SuccessThreshold: 3}, []Outcome{S, S}, HalfOpen, 2},
		{"threshold 3: three successes", Settings{SuccessThreshold: 3}, []Outcome{S, S, S}, Closed, 0},
		{"threshold 3: failure after successes", Settings{SuccessThreshold: 3}, []Outcome{S, S, F}, Open, 0},
		{"ignored counts nothing", Settings{SuccessThreshold: 2}, []Outcome{I, S, I, I}, HalfOpen, 1},
		{"ignored then success", Settings{}, []Outcome{I, I, S}, Closed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := halfOpen(t, tt.s)
			for i, o := range tt.outcomes {
				if !b.AllowAt(probeAt) {
					t.Fatalf("probe %d refused", i+1)
				}
				b.RecordAt(probeAt, o)
			}
			c := b.CountsAt(probeAt)
			if c.State != tt.wantState {
				t.Errorf("state = %v, want %v", c.State, tt.wantState)
			}
			if c.ProbeSuccesses != tt.wantOK {
				t.Errorf("ProbeSuccesses = %d, want %d", c.ProbeSuccesses, tt.wantOK)
			}
			if c.State == HalfOpen && c.Probes != 0 {
				t.Errorf("Probes = %d, want 0 (all reported)", c.Probes)
			}
		})
	}
}

func TestProbeFailureFreshPeriod(t *testing.T) {
	b := halfOpen(t, Settings{}) // OpenDuration 1s, half-open at +1s
	failAt := at(1500 * time.Millisecond)
	if !b.AllowAt(at(time.Second)) {
		t.Fatal("probe refused")
	}
	b.RecordAt(failAt, F)
	if got, want := b.CountsAt(failAt).OpenUntil, failAt.Add(time.Second); !got.Equal(want) {
		t.Errorf("OpenUntil = %v, want %v (a fresh period from the failure)", got, want)
	}
	if b.AllowAt(failAt.Add(time.Second - 1)) {
		t.Error("AllowAt(fresh end - 1ns) = true, want false")
	}
	if !b.AllowAt(failAt.Add(time.Second)) {
		t.Error("AllowAt(fresh end) = false, want true")
	}
}

func TestIgnoredFreesProbe(t *testing.T) {
	b := halfOpen(t, Settings{})
	now := at(time.Second)
	if !b.AllowAt(now) {
		t.Fatal("first probe refused")
	}
	if b.AllowAt(now) {
		t.Fatal("second probe admitted while the first is out")
	}
	b.RecordAt(now, I)
	c := b.CountsAt(now)
	if c.State != HalfOpen || c.Probes != 0 || c.ProbeSuccesses != 0 {
		t.Errorf("after Ignored: counts = %+v, want half-open, 0 probes, 0 successes", c)
	}
	if !b.AllowAt(now) {
		t.Error("after Ignored: AllowAt = false, want true (slot freed)")
	}
}

// TestStaleProbeOutcome: with no probe outstanding, a half-open breaker
// drops outcomes (they come from attempts admitted while closed).
func TestStaleProbeOutcome(t *testing.T) {
	b := halfOpen(t, Settings{})
	now := at(time.Second)
	b.RecordAt(now, F)
	b.RecordAt(now, S)
	if got := b.StateAt(now); got != HalfOpen {
		t.Errorf("state = %v, want half-open", got)
	}
}

func TestCloseResetsCounts(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: 3, FailureRate: 0.5, MinRequests: 4, OpenDuration: time.Second}))
	feed(b, t0, S, F, F, F) // trips on the third failure (consecutive and rate)
	if got := b.StateAt(t0); got != Open {
		t.Fatalf("state = %v, want open", got)
	}
	feed(b, at(time.Second), S) // probe success closes
	c := b.CountsAt(at(time.Second))
	if c.State != Closed || c.ConsecutiveFailures != 0 || c.Requests != 0 || c.Failures != 0 {
		t.Errorf("after closing: counts = %+v, want closed and empty", c)
	}
	feed(b, at(time.Second), F, F)
	if got := b.StateAt(at(time.Second)); got != Closed {
		t.Errorf("two failures after closing: state = %v, want closed", got)
	}
}

func TestHook(t *testing.T) {
	r := &recorder{}
	b := Must(New(Settings{ConsecutiveFailures: 2, OpenDuration: 10 * time.Second, SuccessThreshold: 2, OnStateChange: r.hook}))
	feed(b, at(1*time.Second), F)
	feed(b, at(2*time.Second), F) // closed -> open
	b.AllowAt(at(5 * time.Second))
	b.StateAt(at(11 * time.Second))   // still open
	b.AllowAt(at(12 * time.Second))   // open -> half-open, probe out
	b.RecordAt(at(13*time.Second), F) // half-open -> open
	b.StateAt(at(23 * time.Second))   // open -> half-open
	b.StateAt(at(24 * time.Second))   // no change
	feed(b, at(25*time.Second), S)
	feed(b, at(26*time.Second), S) // half-open -> closed
	feed(b, at(27*time.Second), S, S)
	want := []change{
		{Closed, Open, at(2 * time.Second)},
		{Open, HalfOpen, at(12 * time.Second)},
		{HalfOpen, Open, at(13 * time.Second)},
		{Open, HalfOpen, at(23 * time.Second)},
		{HalfOpen, Closed, at(26 * time.Second)},
	}
	checkChanges(t, r.get(), want)
}

// TestHookReentrant: a hook may call the breaker, even into a change; the
// changes it causes are reported after its own, in order.
func TestHookReentrant(t *testing.T) {
	var b *Breaker
	var got []change
	b = Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Second, OnStateChange: func(from, to State, at time.Time) {
		got = append(got, change{from, to, at})
		if to == Open {
			b.StateAt(at.Add(time.Second)) // turns it half-open from inside the hook
		}
	}}))
	feed(b, t0, F)
	checkChanges(t, got, []change{
		{Closed, Open, t0},
		{Open, HalfOpen, at(time.Second)},
	})
}

func TestNewRefusesBadConfig(t *testing.T) {
	tests := []struct {
		s     Settings
		field string
	}{
		{Settings{ConsecutiveFailures: math.MaxUint32 + 1}, "Settings.ConsecutiveFailures"},
		{Settings{FailureRate: -0.5}, "Settings.FailureRate"},
		{Settings{FailureRate: 1.5}, "Settings.FailureRate"},
		{Settings{FailureRate: math.NaN()}, "Settings.FailureRate"},
		{Settings{FailureRate: math.Inf(1)}, "Settings.FailureRate"},
		{Settings{Window: -time.Second}, "Settings.Window"},
		{Settings{MinRequests: -1}, "Settings.MinRequests"},
		{Settings{OpenDuration: -time.Second}, "Settings.OpenDuration"},
		{Settings{MaxProbes: -1}, "Settings.MaxProbes"},
		{Settings{SuccessThreshold: -1}, "Settings.SuccessThreshold"},
		{Settings{SlowCallRate: -0.5}, "Settings.SlowCallRate"},
		{Settings{SlowCallRate: 1.5}, "Settings.SlowCallRate"},
		{Settings{SlowCallRate: math.NaN()}, "Settings.SlowCallRate"},
		{Settings{SlowCallRate: 0.5, SlowCallThreshold: -time.Second}, "Settings.SlowCallThreshold"},
		{Settings{SlowCallThreshold: time.Second}, "Settings.SlowCallRate"},
	}
	for _, tt := range tests {
		b, err := New(tt.s)
		var ce *ConfigError
		if b != nil || !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("Must(New(%+v)) = %v, %v; want nil and a %s error wrapping ErrConfig", tt.s, b, err, tt.field)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Must(New(%+v)) did not panic", tt.s)
				}
			}()
			Must(New(tt.s))
		}()
	}
	for _, s := range []Settings{{}, {ConsecutiveFailures: -1, FailureRate: 1}, {ConsecutiveFailures: math.MaxUint32}, {SlowCallRate: 1}, {SlowCallRate: 0.5, SlowCallThreshold: time.Second}} {
		if _, err := New(s); err != nil {
			t.Errorf("Must(New(%+v)) = %v, want nil error", s, err)
		}
	}
}

func TestHookPanicDoesNotWedge(t *testing.T) {
	calls := 0
	b := Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Second, OnStateChange: func(from, to State, at time.Time) {
		calls++
		if calls == 1 {
			panic("hook")
		}
	}}))
	func() {
		defer func() { _ = recover() }()
		feed(b, t0, F)
	}()
	b.StateAt(at(time.Second)) // a later change still reaches the hook
	if calls != 2 {
		t.Errorf("hook calls = %d, want 2", calls)
	}
}
