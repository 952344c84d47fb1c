package tally_test

import (
	"fmt"
	"time"

	"github.com/recoil-go/recoil/tools/tally"
)

// Window counts on its own: here, the receiving side's question — how many
// landed within the same 200 ms — for attempts at known instants. Fixed windows
// from 0 would count 6 and 3; the burst straddles their boundary, and the
// sliding window finds all 8 of it.
func ExampleWindow() {
	w := tally.NewWindow(200 * time.Millisecond)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ms := range []int{0, 150, 160, 170, 180, 190, 210, 220, 230} {
		w.AddAt(start.Add(time.Duration(ms) * time.Millisecond))
	}
	n, at := w.Peak()
	fmt.Println("attempts:", w.Total())
	fmt.Printf("peak: %d, in the span from %v\n", n, at)
	// Output:
	// attempts: 9
	// peak: 8, in the span from 31ms
}

// NewWindow keeps its span in whole milliseconds: zero means the default,
// a fraction is rounded down, and a millisecond is the least.
func ExampleNewWindow() {
	for _, span := range []time.Duration{0, time.Second, 1500 * time.Microsecond, time.Microsecond} {
		fmt.Println(span, "->", tally.NewWindow(span).Span())
	}
	// Output:
	// 0s -> 200ms
	// 1s -> 1s
	// 1.5ms -> 1ms
	// 1µs -> 1ms
}

// Buckets is Window without a clock or a lock: events are placed by
// bucket (millisecond) index.
func ExampleBuckets() {
	b := tally.NewBuckets(10) // a 10 ms window
	for _, ms := range []int64{0, 1, 2, 3} {
		b.Add(ms)
	}
	n, start := b.Peak()
	fmt.Println("peak", n, "from bucket", start)
	fmt.Println("fewer than 3 in the window from bucket", b.CoolFrom(3))
	// Output:
	// peak 4 from bucket 0
	// fewer than 3 in the window from bucket 11
}
