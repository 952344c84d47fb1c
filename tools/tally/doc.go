// Package tally counts attempts the way the receiving side does: in all,
// and the most that landed within any window of 200 ms, wherever it starts
// (docs/why.md, section 6). The test gateway counts the attempts it
// receives with it and the load driver the attempts it sends, so the two
// counts mean the same thing; and it names the headers by which the load
// driver tells the gateway which client sent an attempt and which logical
// request it belongs to.
//
// # Usage
//
//	w := tally.NewWindow(200 * time.Millisecond) // or the zero Window
//	w.Add()                                      // once per attempt, from any goroutine
//	n, at := w.Peak()                            // the busiest 200 ms, and when it began
package tally

import "time"

// The span of a window, and the headers that identify an attempt.
const (
	// DefaultWindow is the span over which attempts are counted together:
	// "how many landed inside the same 200 milliseconds" (docs/why.md,
	// section 6).
	DefaultWindow = 200 * time.Millisecond
	// MinWindow is the shortest span a window may have: one bucket.
	MinWindow = Resolution
	// MaxWindow is the longest span a window may have.
	MaxWindow = time.Minute
	// DefaultClientHeader names the header a client identifies itself with.
	DefaultClientHeader = "X-Client-Id"
	// DefaultRequestHeader names the header that identifies a logical
	// request; the gateway reads Idempotency-Key and X-Idempotency-Key
	// after it.
	DefaultRequestHeader = "X-Request-Id"
)
