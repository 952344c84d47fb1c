package policyspec

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
)

// FuzzParse: whatever the input, Parse returns a valid Spec or an *Error
// naming the file, never panics; and a Spec it accepts builds a policy
// whose decisions do not panic either.
func FuzzParse(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("name: careful\npreset: full-jitter\nmax_attempts: 4\nbackoff: {kind: full-jitter, base: 100ms, max: 5s}\n"))
	f.Add([]byte("budget: {kind: quota, capacity: 10, retry_cost: 5}\nbreaker: {consecutive_failures: -1, failure_rate: 50%, window: 1s}\nlimit: 2\n"))
	f.Add([]byte("backoff: {kind: proportional, base: 1s, multiplier: 1.6, jitter: 0.2, max: 2m}\nclassify: timeouts\nhop: 3\n"))
	f.Add([]byte("attempts: 3\nbackoff: {kind: full, base: 1s, cap: 2s}\n"))
	f.Add([]byte("fallback:\n  targets:\n    - primary\n    - {name: b, upstream: p-b, max_context: 8000, breaker: {open: 1s}}\n  cooldown: 5s\n"))
	f.Add([]byte("fallback: {targets: [a, b], retries: per-target}\nhedge: {delay: 100ms, quantile: 0.95, max_hedges: 2}\n"))
	f.Add([]byte("limiter: {kind: adaptive, initial: 10, min: 2, max: 200, window: 500ms, long_window: 2m, tolerance: 1.5, reserve: 0.1}\npriority: background\n"))
	f.Add([]byte("limiter: {capacity: 8, max_queue: 16, max_wait: 2s}\n"))
	f.Add([]byte("limiter: adaptive\n"))
	for _, name := range Presets() {
		f.Add([]byte("preset: " + name + "\n"))
	}
	if b, err := os.ReadFile(filepath.Join("..", "load", "testdata", "patient.yaml")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "f.yaml" || e.Line < 0 {
				t.Fatalf("Parse error %v (%T) is not an *Error naming f.yaml", err, err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a spec Validate rejects: %v", err)
		}
		p := s.Policy(rand.New(rand.NewPCG(1, 2)))
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var prev time.Duration
		for attempt := 1; attempt <= 4; attempt++ {
			for _, c := range []recoil.Class{recoil.ClassTransient, recoil.ClassOverloaded} {
				d := p.Decide(recoil.Failure{Attempt: attempt, Verdict: recoil.Verdict{Class: c}, Now: now, PrevWait: prev})
				if d.Wait < 0 {
					t.Fatalf("attempt %d, %v: a negative wait %v", attempt, c, d.Wait)
				}
				prev = d.Wait
			}
		}
	})
}
