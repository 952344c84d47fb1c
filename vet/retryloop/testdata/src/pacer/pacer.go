// want package:"offline"

// Package pacer is a backoff type that other packages' loops use: what
// its durations are made of crosses the package boundary as a fact.
package pacer

import (
	"math/rand/v2"
	"time"
)

// Step doubles a wait from Base up to Cap; Spread, when set, adds a random
// extra of up to Spread. Zero fields take defaults.
type Step struct {
	tries  int
	Base   time.Duration // want Base:"setting kind=1 bydefault=true caller=false"
	Cap    time.Duration // want Cap:"setting kind=1 bydefault=true caller=false"
	Spread time.Duration
}

// Next returns the wait before the next try.
func (s *Step) Next() time.Duration { // want Next:`result=1 resultparams=0 resultbydefault=true gates="Spread"`
	if s.Base == 0 {
		s.Base = 50 * time.Millisecond
	}
	if s.Cap == 0 {
		s.Cap = 30 * time.Second
	}
	d := s.Base << s.tries
	if d <= 0 || d > s.Cap {
		d = s.Cap
	}
	if s.Spread > 0 {
		d += rand.N(s.Spread)
	}
	s.tries++
	return d
}

// Scaled is base times the square of the attempt, at most limit: the
// caller's arguments decide what it is made of.
func Scaled(attempt int, base, limit time.Duration) time.Duration { // want Scaled:`result=0 resultparams=6`
	return min(time.Duration(attempt*attempt)*base, limit)
}

// Fuzzed is a random time up to d.
func Fuzzed(d time.Duration) time.Duration { // want Fuzzed:`result=2`
	return rand.N(d + 1)
}
