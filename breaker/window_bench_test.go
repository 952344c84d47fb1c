package breaker

import (
	"testing"
	"time"
)

// The failure-rate benchmarks above read the clock on every outcome, which
// costs more than the window on most machines; these pass explicit
// instants, a millisecond apart (a bucket change every thousand outcomes),
// so what they measure is the window.

// BenchmarkRateRecordAt records successes only: one bucket write each.
func BenchmarkRateRecordAt(b *testing.B) {
	br := Must(New(Settings{FailureRate: 0.5}))
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		br.RecordAt(now, Success)
	}
}

// BenchmarkRateRecordAtMixed records one failure in eight (below the rate
// and the consecutive trip): each failure also sums the window.
func BenchmarkRateRecordAtMixed(b *testing.B) {
	br := Must(New(Settings{FailureRate: 0.5}))
	now := t0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		o := Success
		if i++; i%8 == 0 {
			o = Failure
		}
		br.RecordAt(now, o)
	}
}

func BenchmarkRateRecordAtMixedParallel(b *testing.B) {
	br := Must(New(Settings{FailureRate: 0.5}))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		now := t0
		i := 0
		for pb.Next() {
			now = now.Add(time.Millisecond)
			o := Success
			if i++; i%8 == 0 {
				o = Failure
			}
			br.RecordAt(now, o)
		}
	})
}

// BenchmarkWindowAdd is the window alone, as a failure-rate breaker uses it:
// one failure in eight, a bucket change every thousand outcomes, and a
// MinRequests no run reaches, so it never trips.
func BenchmarkWindowAdd(b *testing.B) {
	w := newWindow(10*time.Second, 0.5, 0, 1<<30)
	var t int64
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		t += int64(time.Millisecond)
		i++
		w.add(t, i%8 == 0, false)
	}
}

func BenchmarkWindowAddParallel(b *testing.B) {
	w := newWindow(10*time.Second, 0.5, 0, 1<<30)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var t int64
		i := 0
		for pb.Next() {
			t += int64(time.Millisecond)
			i++
			w.add(t, i%8 == 0, false)
		}
	})
}

// BenchmarkSlowRecordLatencyAt records successes with a slow-call rate,
// one slow call in eight (below the rate): each slow call also writes the
// slow ring and sums the window. Set against BenchmarkRateRecordAtMixed.
func BenchmarkSlowRecordLatencyAt(b *testing.B) {
	br := Must(New(Settings{SlowCallRate: 0.5, SlowCallThreshold: time.Second}))
	now := t0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		lat := time.Duration(0)
		if i++; i%8 == 0 {
			lat = 2 * time.Second
		}
		br.RecordLatencyAt(now, Success, lat)
	}
}

func BenchmarkSlowRecordLatencyAtParallel(b *testing.B) {
	br := Must(New(Settings{SlowCallRate: 0.5, SlowCallThreshold: time.Second}))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		now := t0
		i := 0
		for pb.Next() {
			now = now.Add(time.Millisecond)
			lat := time.Duration(0)
			if i++; i%8 == 0 {
				lat = 2 * time.Second
			}
			br.RecordLatencyAt(now, Success, lat)
		}
	})
}
