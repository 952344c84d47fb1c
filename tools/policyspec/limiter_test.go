package policyspec

import (
	"fmt"
	"testing"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/limit"
)

// TestLimiterBuilds: each limiter spec builds the limiter it names, with
// its settings, and the priority reaches the policy.
func TestLimiterBuilds(t *testing.T) {
	for _, tt := range []struct {
		src      string
		check    func(recoil.Limiter) string // "" when the limiter is right
		priority recoil.Priority
	}{
		{"limiter: adaptive\n", func(l recoil.Limiter) string {
			a, ok := l.(*limit.Adaptive)
			if !ok || a.Limit() != limit.DefaultAdaptiveInitial {
				return fmt.Sprintf("%T, want a *limit.Adaptive at %d", l, limit.DefaultAdaptiveInitial)
			}
			return ""
		}, recoil.PriorityInteractive},
		{"limiter: {kind: adaptive, initial: 7, max: 9}\npriority: background\n", func(l recoil.Limiter) string {
			if a, ok := l.(*limit.Adaptive); !ok || a.Limit() != 7 {
				return fmt.Sprintf("%T, want a *limit.Adaptive at 7", l)
			}
			return ""
		}, recoil.PriorityBackground},
		{"limiter: {capacity: 3}\n", func(l recoil.Limiter) string {
			f, ok := l.(*limit.Limiter)
			if !ok {
				return fmt.Sprintf("%T, want a *limit.Limiter", l)
			}
			n := 0
			for f.TryAcquire() {
				n++
			}
			if n != 3 {
				return fmt.Sprintf("%d slots, want 3", n)
			}
			return ""
		}, recoil.PriorityInteractive},
		{"limit: 2\npriority: interactive\n", func(l recoil.Limiter) string {
			if _, ok := l.(*limit.Limiter); !ok {
				return fmt.Sprintf("%T, want a *limit.Limiter", l)
			}
			return ""
		}, recoil.PriorityInteractive},
	} {
		s, err := Parse("p.yaml", []byte(tt.src))
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		p := s.Policy(nil)
		if msg := tt.check(p.Limiter); msg != "" {
			t.Errorf("%q: %s", tt.src, msg)
		}
		if p.Priority != tt.priority {
			t.Errorf("%q: priority %v, want %v", tt.src, p.Priority, tt.priority)
		}
	}
}

func ExampleLimiter() {
	s, err := Parse("policy.yaml", []byte(`
attempt_timeout: 10s
limiter: {kind: adaptive, min: 2, max: 200}
priority: background
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := s.Policy(nil)
	a := p.Limiter.(*limit.Adaptive)
	fmt.Println(s.Limiter.Kind, a.Limit(), p.Priority)

	_, err = Parse("policy.yaml", []byte("limiter: {kind: adaptive, min: 50, max: 10}\n"))
	fmt.Println(err)
	// Output:
	// adaptive 20 background
	// policy.yaml:1: limiter.min: is 50: must be at most Max
}
