// Package priority is the one priority type the engine (package recoil)
// and the limiters (package limit) share: recoil.Priority and
// limit.Priority are aliases of it, so a limiter's methods taking one
// satisfy the engine's optional interface without either package importing
// the other.
package priority

import "strconv"

// Priority is how much a caller is waiting on a call. The zero value is
// Interactive: a call nobody classified is treated as one somebody waits on.
type Priority uint8

const (
	// Interactive is a call a person (or a caller with a short deadline) is
	// waiting on.
	Interactive Priority = iota
	// Background is work nobody is waiting on: it yields to Interactive
	// work in a limiter's queue and is shed first.
	Background
)

// String returns "interactive" or "background" (or "priority(N)").
func (p Priority) String() string {
	switch p {
	case Interactive:
		return "interactive"
	case Background:
		return "background"
	}
	return "priority(" + strconv.Itoa(int(p)) + ")"
}

// Rank orders an attempt for a limiter: 0 is served first and shed last.
// A retry ranks below a first attempt of its priority, and every
// background attempt below every interactive one, so a background call's
// retry is the first thing shed. Priorities above Background rank as
// Background.
func Rank(p Priority, retry bool) int {
	r := 0
	if p >= Background {
		r = 2
	}
	if retry {
		r++
	}
	return r
}

// Ranks is the number of distinct ranks Rank returns.
const Ranks = 4
