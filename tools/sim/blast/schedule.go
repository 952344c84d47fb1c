package blast

import (
	"math"
	"time"
)

// Ceiling returns c_k = min(max, base·multiplier^(k−1)), the longest wait
// before retry k (1 is the first retry). It is the ceiling package backoff
// computes and the wait of a hand-written loop, BASE_DELAY * (2 ** attempt).
// A zero multiplier means DefaultMultiplier, a multiplier below 1 means 1
// (no growth) and a zero max means no cap; the result saturates at the
// largest Duration.
func Ceiling(k int, base time.Duration, multiplier float64, max time.Duration) time.Duration {
	return seconds(ceiling(k, base, multiplier, max))
}

// ceiling is Ceiling in seconds.
func ceiling(k int, base time.Duration, multiplier float64, max time.Duration) float64 {
	if base <= 0 {
		return 0
	}
	if multiplier == 0 {
		multiplier = DefaultMultiplier
	}
	multiplier = math.Max(multiplier, 1)
	c := base.Seconds() * math.Pow(multiplier, float64(max0(k-1)))
	if max > 0 {
		c = math.Min(c, max.Seconds())
	}
	return c
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// Sleeping returns the expected total sleep of a call that fails all of its
// attempts — the mean waits before retries 1…attempts−1 added up — and the
// longest it can be (the ceilings added up). docs/why.md §1: 5 attempts, 1 s
// doubling, no jitter: 1+2+4+8 = 15 s both ways; with full jitter the mean
// halves to 7.5 s. Arguments are read as by Ceiling.
func Sleeping(attempts int, base time.Duration, multiplier float64, max time.Duration, j Jitter) (mean, longest time.Duration) {
	m, l := sleeping(attempts, base, multiplier, max, j)
	return seconds(m), seconds(l)
}

// sleeping is Sleeping in seconds.
func sleeping(attempts int, base time.Duration, multiplier float64, max time.Duration, j Jitter) (mean, longest float64) {
	for k := 1; k < attempts; k++ {
		c := ceiling(k, base, multiplier, max)
		longest += c
		mean += c * j.mean()
	}
	return mean, longest
}

// Held returns the time a failing call holds a worker as docs/why.md §1 counts it:
// the sleeping plus one failure's time ("Each failing call adds about a
// fifth of a second more": 15 s + 0.21 s, carried as 15.2 s; one retry,
// 1 s + 0.21 s, "about 1.2 seconds"). HeldEveryAttempt is the hold when
// every attempt takes the failure's time.
func Held(sleeping, failTime time.Duration) time.Duration { return sleeping + failTime }

// HeldEveryAttempt returns sleeping + attempts·failTime: the hold of a call
// whose every attempt takes failTime (the wrapper of docs/why.md §1: 15 s + 5·0.21 s =
// 16.05 s, what "recoil demo" measures on a virtual clock).
func HeldEveryAttempt(sleeping time.Duration, attempts int, failTime time.Duration) time.Duration {
	return sleeping + time.Duration(attempts)*failTime
}

// Workers returns the workers a stream of calls occupies by Little's law:
// arrival rate × time held, with the rate in requests a minute (docs/why.md §1:
// 140/min = 2.33/s; × 0.21 s = 0.49 workers; × 15.21 s = 35.49). It is a
// demand: above the pool there is no steady state and the queue grows.
// Source: J. D. C. Little, "A Proof for the Queuing Formula L = λW",
// Operations Research 9(3), 1961; derived from first principles in docs/why.md §1.
func Workers(perMinute float64, held time.Duration) float64 {
	return perMinute / 60 * held.Seconds()
}

// Reach returns attempts^layers, the attempts that reach the bottom of a
// path on which each of layers retrying layers makes attempts attempts
// (docs/why.md §2: 3×3×3 = 27). Retries compose by multiplication, with the
// number of retrying layers as the exponent.
func Reach(attempts, layers int) float64 {
	return math.Pow(float64(attempts), float64(max0(layers)))
}
