package breaker

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// call is one attempt for the slow-call tests: its outcome and latency,
// or a slow report (RecordSlowAt) with no outcome.
type call struct {
	o       Outcome
	latency time.Duration
	report  bool // RecordSlowAt instead of an attempt
}

func calls(c call, n int) []call {
	s := make([]call, n)
	for i := range s {
		s[i] = c
	}
	return s
}

func cats(parts ...[]call) []call {
	var s []call
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

// play admits and records each call at instant now.
func play(b *Breaker, now time.Time, cs ...call) {
	for _, c := range cs {
		if c.report {
			b.RecordSlowAt(now)
			continue
		}
		if b.AllowAt(now) {
			b.RecordLatencyAt(now, c.o, c.latency)
		}
	}
}

var (
	fast     = call{o: Success, latency: time.Second}
	slow     = call{o: Success, latency: 3 * time.Second}
	edge     = call{o: Success, latency: 2 * time.Second} // exactly the threshold: not slow
	slowFail = call{o: Failure, latency: 3 * time.Second}
	fastFail = call{o: Failure, latency: time.Second}
	slowIgn  = call{o: Ignored, latency: time.Hour}
	report   = call{report: true}
)

func TestSlowCallTrip(t *testing.T) {
	slowRate := Settings{
		ConsecutiveFailures: -1,
		SlowCallRate:        0.5,
		SlowCallThreshold:   2 * time.Second,
		Window:              10 * time.Second,
		MinRequests:         20,
	}
	both := slowRate
	both.FailureRate = 0.5
	reportsOnly := slowRate
	reportsOnly.SlowCallThreshold = 0
	type step struct {
		d     time.Duration
		calls []call
	}
	tests := []struct {
		name      string
		s         Settings
		steps     []step
		want      State
		wantSlow  int // slow calls in the window at the end, if closed
		wantCount int // outcomes in the window at the end, if closed
	}{
		{"below volume, all slow", slowRate, []step{{0, calls(slow, 19)}}, Closed, 19, 19},
		{"volume reached", slowRate, []step{{0, calls(slow, 20)}}, Open, 0, 0},
		{"exactly the rate", slowRate, []step{{0, cats(calls(fast, 10), calls(slow, 10))}}, Open, 0, 0},
		{"just under the rate", slowRate, []step{{0, cats(calls(fast, 11), calls(slow, 9))}}, Closed, 9, 20},
		{"the threshold itself is not slow", slowRate, []step{{0, calls(edge, 40)}}, Closed, 0, 40},
		{"slow failures count as slow", slowRate, []step{{0, cats(calls(fast, 10), calls(slowFail, 10))}}, Open, 0, 0},
		{"fast failures do not trip a slow rate", slowRate, []step{{0, calls(fastFail, 40)}}, Closed, 0, 40},
		{"ignored is neither an outcome nor slow", slowRate, []step{{0, cats(calls(slow, 19), calls(slowIgn, 50))}}, Closed, 19, 19},
		{"a fast success completes the volume, does not trip", slowRate, []step{{0, cats(calls(slow, 19), []call{fast})}}, Closed, 19, 20},
		{"the next slow call trips", slowRate, []step{{0, cats(calls(slow, 19), []call{fast, slow})}}, Open, 0, 0},
		{"old slow calls leave the window", slowRate, []step{
			{0, calls(slow, 19)}, {10 * time.Second, []call{slow}},
		}, Closed, 1, 1},
		{"spread across buckets", slowRate, []step{
			{0, calls(slow, 5)}, {3 * time.Second, calls(slow, 5)},
			{6 * time.Second, calls(slow, 5)}, {9 * time.Second, calls(slow, 5)},
		}, Open, 0, 0},
		{"failure rate or slow rate: the failures trip", both, []step{{0, cats(calls(fast, 10), calls(fastFail, 10))}}, Open, 0, 0},
		{"failure rate or slow rate: the slow calls trip", both, []step{{0, cats(calls(fast, 10), calls(slow, 10))}}, Open, 0, 0},
		{"neither rate reached", both, []step{{0, cats(calls(slow, 9), calls(fastFail, 9), calls(fast, 2))}}, Closed, 9, 20},
		{"reports mark outcomes slow", slowRate, []step{{0, cats(calls(fast, 20), calls(report, 10))}}, Open, 0, 0},
		{"reports below the rate", slowRate, []step{{0, cats(calls(fast, 20), calls(report, 9))}}, Closed, 9, 20},
		{"reports without volume", slowRate, []step{{0, calls(report, 100)}}, Closed, 100, 0},
		{"reports count at most the outcomes", slowRate, []step{{0, cats(calls(report, 100), calls(fast, 19))}, {time.Second, []call{fast}}}, Closed, 100, 20},
		{"reports need no threshold", reportsOnly, []step{{0, cats(calls(fast, 20), calls(report, 10))}}, Open, 0, 0},
		{"latency without a threshold is not slow", reportsOnly, []step{{0, calls(call{o: Success, latency: time.Hour}, 40)}}, Closed, 0, 40},
		{"a run of failures still trips", Settings{SlowCallRate: 0.5, SlowCallThreshold: time.Second}, []step{{0, calls(fastFail, failuresToTripAlone)}}, Open, 0, 0},
		{"slow successes end a failure run", Settings{SlowCallRate: 1, SlowCallThreshold: time.Second}, []step{{0, cats(calls(fastFail, 4), []call{slow}, calls(fastFail, 4))}}, Closed, 1, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Must(New(tt.s))
			var last time.Time
			for _, st := range tt.steps {
				last = at(st.d)
				play(b, last, st.calls...)
			}
			c := b.CountsAt(last)
			if c.State != tt.want {
				t.Fatalf("state = %v, want %v (counts %+v)", c.State, tt.want, c)
			}
			if c.State == Closed && (c.SlowCalls != tt.wantSlow || c.Requests != tt.wantCount) {
				t.Errorf("slow calls, requests = %d, %d; want %d, %d", c.SlowCalls, c.Requests, tt.wantSlow, tt.wantCount)
			}
		})
	}
}

// TestSlowOffIsRecordAt: without a slow-call rate, RecordLatencyAt is
// RecordAt and RecordSlowAt does nothing, whatever the latency.
func TestSlowOffIsRecordAt(t *testing.T) {
	for _, s := range []Settings{{}, {FailureRate: 0.5, MinRequests: 5}} {
		a, b := Must(New(s)), Must(New(s))
		seq := cats(calls(fast, 3), calls(slow, 10), calls(slowFail, 2), calls(report, 20), calls(fastFail, 2), calls(slow, 3))
		for i, c := range seq {
			now := at(time.Duration(i) * 100 * time.Millisecond)
			play(a, now, c)
			if !c.report && b.AllowAt(now) {
				b.RecordAt(now, c.o)
			}
			if ca, cb := a.CountsAt(now), b.CountsAt(now); ca != cb {
				t.Fatalf("%+v, step %d: counts %+v, want RecordAt's %+v", s, i, ca, cb)
			}
		}
	}
}

func TestSlowProbe(t *testing.T) {
	s := Settings{ConsecutiveFailures: 1, OpenDuration: time.Second, MaxProbes: 2, SuccessThreshold: 2, SlowCallRate: 0.5, SlowCallThreshold: 2 * time.Second}
	tests := []struct {
		name  string
		probe func(b *Breaker, now time.Time)
		want  State
	}{
		{"fast probe success", func(b *Breaker, now time.Time) { b.RecordLatencyAt(now, S, time.Second) }, HalfOpen},
		{"slow probe success reopens", func(b *Breaker, now time.Time) { b.RecordLatencyAt(now, S, 3*time.Second) }, Open},
		{"slow probe failure reopens", func(b *Breaker, now time.Time) { b.RecordLatencyAt(now, F, 3*time.Second) }, Open},
		{"slow ignored probe frees the slot", func(b *Breaker, now time.Time) { b.RecordLatencyAt(now, I, time.Hour) }, HalfOpen},
		{"a slow report reopens", func(b *Breaker, now time.Time) { b.RecordSlowAt(now) }, Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Must(New(s))
			play(b, t0, fastFail) // trips
			now := at(time.Second)
			if !b.AllowAt(now) {
				t.Fatal("no probe admitted")
			}
			tt.probe(b, now)
			c := b.CountsAt(now)
			if c.State != tt.want {
				t.Fatalf("state = %v, want %v", c.State, tt.want)
			}
			if c.State == HalfOpen && c.Probes != 0 {
				t.Errorf("probes outstanding = %d, want 0 (the slot is freed)", c.Probes)
			}
			if c.State == Open && !c.OpenUntil.Equal(now.Add(time.Second)) {
				t.Errorf("open until %v, want a fresh period to %v", c.OpenUntil, now.Add(time.Second))
			}
		})
	}
}

// TestSlowOpenDrops: open, neither slow outcomes nor slow reports change
// anything.
func TestSlowOpenDrops(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Minute, SlowCallRate: 0.5, SlowCallThreshold: time.Second}))
	play(b, t0, fastFail)
	before := b.CountsAt(at(time.Second))
	b.RecordLatencyAt(at(time.Second), S, time.Hour)
	b.RecordSlowAt(at(time.Second))
	if after := b.CountsAt(at(time.Second)); after != before {
		t.Errorf("counts = %+v, want %+v", after, before)
	}
}

// TestSlowCloseResets: closing empties the slow calls with the outcomes.
func TestSlowCloseResets(t *testing.T) {
	b := Must(New(Settings{OpenDuration: time.Second, SlowCallRate: 0.5, SlowCallThreshold: time.Second, MinRequests: 4}))
	play(b, t0, slow, slow, fast, fast) // 2 of 4, but below the volume at the last slow call
	play(b, t0, slow)                   // 3 of 5: trips
	if got := b.StateAt(t0); got != Open {
		t.Fatalf("state = %v, want open", got)
	}
	now := at(time.Second)
	if !b.AllowAt(now) {
		t.Fatal("no probe admitted")
	}
	b.RecordLatencyAt(now, S, 0)
	if c := b.CountsAt(now); c.State != Closed || c.Requests != 0 || c.SlowCalls != 0 {
		t.Errorf("counts after closing = %+v, want closed and empty", c)
	}
}

// TestSlowZeroNowReadsClock: with zero instants the slow-call window runs
// on the clock, here synctest's.
func TestSlowZeroNowReadsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		b := Must(New(Settings{ConsecutiveFailures: -1, SlowCallRate: 0.5, SlowCallThreshold: time.Second, MinRequests: 4, Window: 10 * time.Second, OnStateChange: r.hook}))
		for range 3 {
			b.RecordLatencyAt(time.Time{}, S, 2*time.Second)
		}
		time.Sleep(10 * time.Second) // the three leave the window
		b.RecordLatencyAt(time.Time{}, S, 0)
		b.RecordSlowAt(time.Time{})
		if c := b.Counts(); c.State != Closed || c.Requests != 1 || c.SlowCalls != 1 {
			t.Fatalf("counts = %+v, want closed with 1 request, 1 slow", c)
		}
		b.RecordLatencyAt(time.Time{}, S, 0)
		b.RecordLatencyAt(time.Time{}, S, 0)
		start := time.Now()
		b.RecordSlowAt(time.Time{}) // 2 slow of 3 outcomes: below volume
		b.RecordLatencyAt(time.Time{}, S, 2*time.Second)
		if got := b.State(); got != Open {
			t.Fatalf("state = %v, want open (3 slow of 4)", got)
		}
		checkChanges(t, r.get(), []change{{Closed, Open, start}})
	})
}

func TestSlowZeroAllocs(t *testing.T) {
	b := Must(New(Settings{ConsecutiveFailures: -1, SlowCallRate: 0.9, SlowCallThreshold: time.Second, MinRequests: 1 << 30}))
	tests := []struct {
		name string
		f    func()
	}{
		{"fast", func() { b.Allow(); b.RecordLatencyAt(time.Time{}, S, 0) }},
		{"slow", func() { b.Allow(); b.RecordLatencyAt(time.Time{}, S, time.Hour) }},
		{"report", func() { b.RecordSlowAt(time.Time{}) }},
		{"counts", func() { b.Counts() }},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, tt.f); got != 0 {
			t.Errorf("%s: allocs = %v, want 0", tt.name, got)
		}
	}
}

// TestSlowConcurrent: goroutines recording slow and fast calls and slow
// reports at once lose none of them, and the breaker trips once.
func TestSlowConcurrent(t *testing.T) {
	const workers, each = 8, 500
	var r recorder
	b := Must(New(Settings{ConsecutiveFailures: -1, SlowCallRate: 0.5, SlowCallThreshold: time.Second, MinRequests: workers * each * 2, OnStateChange: r.hook}))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				now := at(time.Duration(i) * time.Microsecond)
				lat := time.Duration(0)
				if (w+i)%2 == 0 {
					lat = time.Hour
				}
				b.RecordLatencyAt(now, S, lat)
				if i%5 == 0 {
					b.RecordSlowAt(now)
				}
			}
		})
	}
	wg.Wait()
	c := b.CountsAt(at(time.Millisecond))
	wantSlow := workers*each/2 + workers*each/5
	if c.State != Closed || c.Requests != workers*each || c.SlowCalls != wantSlow {
		t.Fatalf("counts = %+v, want closed, %d requests, %d slow", c, workers*each, wantSlow)
	}
	// Now past the volume: concurrent slow calls trip it, once.
	var wg2 sync.WaitGroup
	for range workers {
		wg2.Go(func() {
			for range each {
				b.RecordLatencyAt(at(time.Millisecond), S, time.Hour)
			}
		})
	}
	wg2.Wait()
	if got := r.get(); len(got) != 1 || got[0].from != Closed || got[0].to != Open {
		t.Errorf("changes = %v, want one closed -> open", got)
	}
}
