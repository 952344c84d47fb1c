// Package clonebackoff is a stand-in for a backoff type whose settings
// its user fills in and whose Clone copies them: the copy gives the
// fields no value of their own.
package clonebackoff

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Exponential grows from Min by Factor up to Max, with no jitter.
type Exponential struct {
	Min, Max time.Duration
	Factor   float64
	tries    int64
}

// Clone returns a copy with the same settings.
func (b *Exponential) Clone() *Exponential {
	return &Exponential{Min: b.Min, Max: b.Max, Factor: b.Factor, tries: atomic.LoadInt64(&b.tries)}
}

// Next returns the next wait.
func (b *Exponential) Next() time.Duration {
	n := atomic.AddInt64(&b.tries, 1)
	d := time.Duration(float64(b.Min) * math.Pow(b.Factor, float64(n)))
	if d > b.Max {
		return b.Max
	}
	return d
}

// Reset starts again from Min.
func (b *Exponential) Reset() { atomic.StoreInt64(&b.tries, 0) }

// Jittered is Exponential with a random part.
type Jittered struct {
	Min, Max time.Duration
	tries    int64
}

// Clone returns a copy with the same settings.
func (b *Jittered) Clone() *Jittered { return &Jittered{Min: b.Min, Max: b.Max} }

// Next returns a random wait up to the next exponential step.
func (b *Jittered) Next() time.Duration {
	n := atomic.AddInt64(&b.tries, 1)
	d := min(b.Min<<n, b.Max)
	return rand.N(d + 1)
}
