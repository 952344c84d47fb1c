package breaker

import (
	"testing"
	"time"
)

// The retry loop calls the breaker through the recoil.Breaker interface with
// a zero now on the healthy path; these benchmarks do the same, through
// opaque so the compiler cannot devirtualize and inline the calls.

//go:noinline
func opaque(b *Breaker) iface { return b }

// BenchmarkClosedAllowRecordDirect calls the concrete type, inlined.
func BenchmarkClosedAllowRecordDirect(b *testing.B) {
	br := Must(New(Settings{}))
	b.ReportAllocs()
	for b.Loop() {
		if br.AllowAt(time.Time{}) {
			br.RecordAt(time.Time{}, Success)
		}
	}
}

func BenchmarkClosedAllowRecord(b *testing.B) {
	br := opaque(Must(New(Settings{})))
	b.ReportAllocs()
	for b.Loop() {
		if br.AllowAt(time.Time{}) {
			br.RecordAt(time.Time{}, Success)
		}
	}
}

func BenchmarkClosedAllowRecordParallel(b *testing.B) {
	br := opaque(Must(New(Settings{})))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if br.AllowAt(time.Time{}) {
				br.RecordAt(time.Time{}, Success)
			}
		}
	})
}

// BenchmarkClosedFailSucceed is a failure followed by a success: two CAS
// writes of the failure run, no clock.
func BenchmarkClosedFailSucceed(b *testing.B) {
	br := opaque(Must(New(Settings{})))
	b.ReportAllocs()
	for b.Loop() {
		br.AllowAt(time.Time{})
		br.RecordAt(time.Time{}, Failure)
		br.AllowAt(time.Time{})
		br.RecordAt(time.Time{}, Success)
	}
}

// BenchmarkRateAllowRecord has a failure-rate window: every outcome reads
// the clock (zero now) and CASes a shared bucket.
func BenchmarkRateAllowRecord(b *testing.B) {
	br := opaque(Must(New(Settings{FailureRate: 0.5})))
	b.ReportAllocs()
	for b.Loop() {
		if br.AllowAt(time.Time{}) {
			br.RecordAt(time.Time{}, Success)
		}
	}
}

func BenchmarkRateAllowRecordParallel(b *testing.B) {
	br := opaque(Must(New(Settings{FailureRate: 0.5})))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if br.AllowAt(time.Time{}) {
				br.RecordAt(time.Time{}, Success)
			}
		}
	})
}

// BenchmarkOpenAllow is the fail-fast path: a clock read and two loads.
func BenchmarkOpenAllow(b *testing.B) {
	br := Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Hour}))
	br.Record(Failure)
	bi := opaque(br)
	b.ReportAllocs()
	for b.Loop() {
		if bi.AllowAt(time.Time{}) {
			b.Fatal("open breaker admitted an attempt")
		}
	}
}

func BenchmarkOpenAllowParallel(b *testing.B) {
	br := Must(New(Settings{ConsecutiveFailures: 1, OpenDuration: time.Hour}))
	br.Record(Failure)
	bi := opaque(br)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bi.AllowAt(time.Time{})
		}
	})
}
