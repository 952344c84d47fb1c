package budget

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestRateConfig(t *testing.T) {
	tests := []struct {
		cfg   RateConfig
		field string // "" for none
		want  RateState
	}{
		{RateConfig{Limit: 600}, "", RateState{Limit: 600, Window: time.Minute, Burst: 600, Available: 600}},
		{RateConfig{Limit: 10, Window: time.Second, Burst: 3}, "", RateState{Limit: 10, Window: time.Second, Burst: 3, Available: 3}},
		{RateConfig{}, "RateConfig.Limit", RateState{}},
		{RateConfig{Limit: -1}, "RateConfig.Limit", RateState{}},
		{RateConfig{Limit: 1<<53 + 1}, "RateConfig.Limit", RateState{}},
		{RateConfig{Limit: 5, Window: -time.Second}, "RateConfig.Window", RateState{}},
		{RateConfig{Limit: 5, Burst: -1}, "RateConfig.Burst", RateState{}},
	}
	for _, tt := range tests {
		r, err := NewRate(tt.cfg)
		var ce *ConfigError
		switch {
		case tt.field != "":
			if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != tt.field {
				t.Errorf("NewRate(%+v) = %v, want a ConfigError for %s", tt.cfg, err, tt.field)
			}
		case err != nil:
			t.Errorf("NewRate(%+v): %v", tt.cfg, err)
		default:
			if got := r.StateAt(t0); got != tt.want {
				t.Errorf("NewRate(%+v).StateAt = %+v, want %+v", tt.cfg, got, tt.want)
			}
		}
	}
}

// TestRateCharge: 600 a minute is a unit every 100 ms, with a bucket of
// Burst units.
func TestRateCharge(t *testing.T) {
	type step struct {
		at   time.Duration // after t0
		n    int64
		want bool
	}
	tests := []struct {
		name  string
		cfg   RateConfig
		steps []step
	}{
		{"whole bucket, then one a refill", RateConfig{Limit: 600}, []step{
			{0, 600, true}, {0, 1, false}, {99 * time.Millisecond, 1, false}, {100 * time.Millisecond, 1, true},
			{100 * time.Millisecond, 1, false}, {time.Second, 9, true}, {time.Second, 1, false}}},
		{"more than Burst never goes", RateConfig{Limit: 600, Burst: 10}, []step{
			{0, 11, false}, {time.Hour, 11, false}, {time.Hour, 10, true}, {time.Hour, 1, false}}},
		{"nothing costs nothing", RateConfig{Limit: 1, Burst: 1}, []step{
			{0, 1, true}, {0, 0, true}, {0, -5, true}, {0, 1, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Must(NewRate(tt.cfg))
			for i, s := range tt.steps {
				if got := r.AdmitNAt(t0.Add(s.at), s.n); got != s.want {
					t.Errorf("step %d: AdmitNAt(+%v, %d) = %v, want %v", i, s.at, s.n, got, s.want)
				}
			}
		})
	}
}

func TestRateShorthands(t *testing.T) {
	r := Must(NewRate(RateConfig{Limit: 2, Burst: 2}))
	if !r.AdmitAt(t0) || !r.RetryAt(t0, CauseTimeout) || r.RetryNAt(t0, CauseError, 1) {
		t.Error("two units: AdmitAt and RetryAt should go, a third unit not")
	}
	r.RecordAt(t0, Outcome{Result: Failure}) // counts nothing
	if got := r.StateAt(t0).Available; got != 0 {
		t.Errorf("Available = %d after RecordAt, want 0", got)
	}
	var zero Rate
	for range 1000 {
		if !zero.AdmitNAt(t0, 1<<40) {
			t.Fatal("the zero Rate refused")
		}
	}
}

// TestRateSettle: a charge is corrected by what the attempt cost; a refund
// never exceeds the charge.
func TestRateSettle(t *testing.T) {
	tests := []struct {
		name            string
		charged, actual int64
		want            int64 // Available after, of 600
	}{
		{"less: refunded", 500, 200, 400},
		{"more: charged", 100, 250, 350},
		{"same", 300, 300, 300},
		{"more than the bucket: a debt", 600, 1000, -400},
		{"refund capped at the charge", 100, 0, 600},
		{"debt capped at a window beyond empty", 10, 1 << 60, -600},
		{"negative actual: nothing", 100, -1, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Must(NewRate(RateConfig{Limit: 600}))
			if !r.AdmitNAt(t0, 100) {
				t.Fatal("refused")
			}
			r.AdmitNAt(t0, tt.charged-100)
			r.SettleAt(t0, tt.charged, tt.actual)
			if got := r.StateAt(t0).Available; got != tt.want {
				t.Errorf("Available = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestRateLearn: the headers lower the bucket, never raise it, and teach a
// limit.
func TestRateLearn(t *testing.T) {
	tests := []struct {
		name                  string
		spent                 int64 // charged before LearnAt
		limit, remaining      int64
		reset                 time.Duration
		want                  RateState
		wantPaced, wantUnpace bool
	}{
		{name: "remaining lowers", remaining: 400, reset: -1,
			want: RateState{Limit: 600, Window: time.Minute, Burst: 600, Available: 400}},
		{name: "remaining never raises", spent: 500, remaining: 400, reset: -1,
			want: RateState{Limit: 600, Window: time.Minute, Burst: 600, Available: 100}},
		{name: "reset: whole no sooner", remaining: -1, reset: 30 * time.Second,
			want: RateState{Limit: 600, Window: time.Minute, Burst: 600, Available: 300}},
		{name: "a limit is learned", limit: 1200, remaining: -1, reset: -1,
			want: RateState{Limit: 1200, Window: time.Minute, Burst: 1200, Available: 1200}},
		{name: "remaining above the burst", remaining: 1 << 50, reset: -1,
			want: RateState{Limit: 600, Window: time.Minute, Burst: 600, Available: 600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Must(NewRate(RateConfig{Limit: 600}))
			r.AdmitNAt(t0, tt.spent)
			r.LearnAt(t0, tt.limit, tt.remaining, tt.reset)
			if got := r.StateAt(t0); got != tt.want {
				t.Errorf("StateAt = %+v, want %+v", got, tt.want)
			}
		})
	}
	var zero Rate
	zero.LearnAt(t0, 90, 45, -1)
	if got, want := zero.StateAt(t0), (RateState{Limit: 90, Window: time.Minute, Burst: 90, Available: 45}); got != want {
		t.Errorf("a zero Rate that learned: %+v, want %+v", got, want)
	}
}

// TestRatePacing pins the pacing rule. 6000 tokens a minute refill 100 a
// second; a provider that says 100 remain until a reset 30 s away (100 ·
// 1 min < 6000 · 30 s) has the Rate spread the 100 over the 30 s: 10-token
// attempts tried every 100 ms go every 3 s, ten of them, where the bucket
// alone (its 100 and its refill of 100 a second) would let all 300 go.
func TestRatePacing(t *testing.T) {
	tests := []struct {
		name      string
		remaining int64
		reset     time.Duration
		wantGone  int           // 10-token attempts in the first 30 s
		wantFirst time.Duration // when the second one went
		paced     bool
	}{
		{"paced", 100, 30 * time.Second, 10, 3 * time.Second, true},
		{"nothing left: nothing until the reset", 0, 30 * time.Second, 0, -1, true},
		{"enough left: no pacing", 3100, 30 * time.Second, 300, 100 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Must(NewRate(RateConfig{Limit: 6000}))
			r.LearnAt(t0, 0, tt.remaining, tt.reset)
			if got := !r.StateAt(t0).PacedUntil.IsZero(); got != tt.paced {
				t.Fatalf("paced = %v, want %v", got, tt.paced)
			}
			gone, second := 0, time.Duration(-1)
			for at := time.Duration(0); at < 30*time.Second; at += 100 * time.Millisecond {
				if r.AdmitNAt(t0.Add(at), 10) {
					if gone++; gone == 2 {
						second = at
					}
				}
			}
			if gone != tt.wantGone || second != tt.wantFirst {
				t.Errorf("%d attempts went, the second at %v; want %d, at %v", gone, second, tt.wantGone, tt.wantFirst)
			}
			// At the reset the pacing ends.
			if !r.StateAt(t0.Add(30 * time.Second)).PacedUntil.IsZero() {
				t.Error("still paced at the reset")
			}
		})
	}
}

// TestRatePacingEnds: a response that says enough remains ends the pacing;
// a settlement's refund gives back pace as well.
func TestRatePacingEnds(t *testing.T) {
	r := Must(NewRate(RateConfig{Limit: 6000}))
	r.LearnAt(t0, 0, 100, 30*time.Second)
	if !r.AdmitNAt(t0, 10) || r.AdmitNAt(t0, 10) {
		t.Fatal("paced: one 10-token attempt, then none")
	}
	r.SettleAt(t0, 10, 0) // the attempt cost nothing: its pace is given back
	if !r.AdmitNAt(t0, 10) {
		t.Error("the refund did not give the pace back")
	}
	r.LearnAt(t0.Add(time.Second), 0, 5000, 10*time.Second)
	if !r.StateAt(t0.Add(time.Second)).PacedUntil.IsZero() {
		t.Error("still paced with 5000 left")
	}
	for i := range 2 {
		if !r.AdmitNAt(t0.Add(time.Second), 10) {
			t.Errorf("unpaced, attempt %d of two at once was refused", i+1)
		}
	}
}

// TestRateClock: the zero now is the current time.
func TestRateClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := Must(NewRate(RateConfig{Limit: 60, Burst: 1})) // one a second
		if !r.Admit() || r.Admit() {
			t.Fatal("one unit, then none")
		}
		<-time.After(time.Second)
		if !r.Admit() {
			t.Error("refused a second later")
		}
		r.LearnAt(time.Time{}, 0, 0, 5*time.Second)
		if got := r.State().PacedUntil; !got.Equal(time.Now().Add(5 * time.Second)) {
			t.Errorf("PacedUntil = %v, want five seconds from now", got)
		}
	})
}

func BenchmarkRate(b *testing.B) {
	b.Run("admitN", func(b *testing.B) {
		b.ReportAllocs()
		r := Must(NewRate(RateConfig{Limit: maxRateUnits, Window: time.Nanosecond}))
		for b.Loop() {
			r.AdmitNAt(t0, 1500)
		}
	})
	b.Run("admitN-parallel", func(b *testing.B) {
		b.ReportAllocs()
		r := Must(NewRate(RateConfig{Limit: maxRateUnits, Window: time.Nanosecond}))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.AdmitNAt(t0, 1500)
			}
		})
	})
}
