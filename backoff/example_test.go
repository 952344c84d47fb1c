package backoff_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/recoil-go/recoil/backoff"
)

// waits returns the waits a schedule gives before retries 1…n, passing each
// wait on as the next one's prev, as the retry loop does.
func waits(s backoff.Schedule, n int, rnd backoff.Source) []time.Duration {
	var out []time.Duration
	var prev time.Duration
	for retry := 1; retry <= n; retry++ {
		prev = s.Delay(retry, prev, rnd)
		out = append(out, prev)
	}
	return out
}

// The wrapper most services ship: five attempts, doubling from a second.
// Its four waits add up to fifteen seconds of sleeping.
func ExampleExponential() {
	w := waits(backoff.Exponential{Base: time.Second}, 4, nil)
	var total time.Duration
	for _, d := range w {
		total += d
	}
	fmt.Println(w, total)
	// Output: [1s 2s 4s 8s] 15s
}

// A cap keeps a long run of retries from waiting for ever: each wait is
// at most Max.
func ExampleExponential_max() {
	fmt.Println(waits(backoff.Exponential{Base: 100 * time.Millisecond, Multiplier: 3, Max: 2 * time.Second}, 5, nil))
	// Output: [100ms 300ms 900ms 2s 2s]
}

// Clients that failed together do not retry together: each draws its wait
// anywhere below the ceiling, so a crowd is spread over the whole window.
func ExampleFullJitter() {
	s := backoff.FullJitter{Base: time.Second, Max: 30 * time.Second}
	for client := range 3 {
		rnd := rand.New(rand.NewPCG(1, uint64(client)))
		fmt.Println("client", client, "first wait", s.Delay(1, 0, rnd).Round(time.Millisecond))
	}
	// Output:
	// client 0 first wait 598ms
	// client 1 first wait 997ms
	// client 2 first wait 769ms
}

// EqualJitter never waits less than half the ceiling: here at least
// 500 ms before the first retry, whatever the draw.
func ExampleEqualJitter() {
	s := backoff.EqualJitter{Base: time.Second}
	rnd := rand.New(rand.NewPCG(1, 1))
	lo, hi := time.Hour, time.Duration(0)
	for range 1000 {
		d := s.Delay(1, 0, rnd)
		lo, hi = min(lo, d), max(hi, d)
	}
	fmt.Println(lo >= 500*time.Millisecond, hi <= time.Second)
	// Output: true true
}

// Decorrelated jitter grows each wait from the one before, within
// [Base, Max]; the retry loop passes the previous wait in.
func ExampleDecorrelated() {
	rnd := rand.New(rand.NewPCG(1, 1))
	w := waits(backoff.Decorrelated{Base: 100 * time.Millisecond, Max: 5 * time.Second}, 5, rnd)
	for i := range w {
		w[i] = w[i].Round(time.Millisecond)
	}
	fmt.Println(w)
	// Output: [299ms 182ms 485ms 1.336s 1.216s]
}

// gRPC's connection backoff: each ceiling, ×1.6 a retry, moved by up to
// 20 % either way.
func ExampleProportional() {
	rnd := rand.New(rand.NewPCG(1, 1))
	for retry := 1; retry <= 3; retry++ {
		lo, hi := time.Hour, time.Duration(0)
		for range 1000 {
			d := backoff.GRPC().Delay(retry, 0, rnd)
			lo, hi = min(lo, d), max(hi, d)
		}
		fmt.Printf("retry %d: between %v and %v\n", retry, lo.Round(100*time.Millisecond), hi.Round(100*time.Millisecond))
	}
	// Output:
	// retry 1: between 800ms and 1.2s
	// retry 2: between 1.3s and 1.9s
	// retry 3: between 2.1s and 3.1s
}

// A poller that checks a job's status every two seconds, however many
// times it has checked.
func ExampleConstant() {
	fmt.Println(waits(backoff.Constant(2*time.Second), 3, nil))
	// Output: [2s 2s 2s]
}

// None retries at once: for tests and benchmarks, where a wait would only
// slow the run.
func ExampleNone() {
	fmt.Println(waits(backoff.None{}, 3, nil))
	// Output: [0s 0s 0s]
}

// steps is a schedule of one's own: a fixed list of waits, the last one
// repeated. A Schedule keeps no state; the retry number says where it is.
type steps []time.Duration

func (s steps) Delay(retry int, _ time.Duration, _ backoff.Source) time.Duration {
	return s[min(retry, len(s))-1]
}

// A nightly export that tries again after a minute, then ten, then every
// hour.
func ExampleSchedule() {
	var s backoff.Schedule = steps{time.Minute, 10 * time.Minute, time.Hour}
	fmt.Println(waits(s, 5, nil))
	// Output: [1m0s 10m0s 1h0m0s 1h0m0s 1h0m0s]
}
