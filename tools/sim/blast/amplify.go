package blast

import "math"

// Window returns W_k, the window retry round k is spread over in the
// amplification model's model, relative to the first attempts' window. Without backoff every round
// lands in the same window (1). With backoff W_k = 2^(k(k+1)/2) — 1, 2, 8,
// 64…, each round spread over 2^k times the previous round's window — the
// reconstruction that reproduces the 37 % tipping point of docs/why.md §3 (see the
// package documentation for the literal reading, 1, 2, 4, and why it does
// not).
func Window(k int, backoff bool) float64 {
	if !backoff || k <= 0 {
		return 1
	}
	return math.Exp2(float64(k) * float64(k+1) / 2)
}

// spread returns W_(k−1)/W_k, computed without forming the windows.
func spread(k int, backoff bool) float64 {
	if !backoff || k <= 0 {
		return 1
	}
	return math.Exp2(-float64(k))
}

// Share returns the proportion of attempts a system of the given capacity
// takes at the given load, min(1, capacity/load): capacity is a hard
// ceiling of attempts per second, and load above it is shed
// proportionally (docs/why.md §3).
func Share(load, capacity float64) float64 {
	if load <= capacity {
		return 1
	}
	return capacity / load
}

// FailureAt returns the failure rate at the given load, 1 − (1−f)·Share:
// a request fails either from the underlying fault or from being shed
// under overload. docs/why.md §3, at 1,240/s against 1,200/s with f = 0.2:
// 1 − 0.8·0.968 = 0.226.
func FailureAt(load, capacity, underlying float64) float64 {
	// f + (1−f)·(1−share) is 1 − (1−f)·share, written so that it is
	// exactly f when nothing is shed.
	return underlying + (1-underlying)*(1-Share(load, capacity))
}

// Round is one round of the amplification model. It is plain data,
// safe to copy and to read concurrently.
type Round struct {
	// Round is the round's number: 0 is the first attempts, k the k-th
	// retries.
	Round int `json:"round"`
	// Window is W_k, the window the round is spread over.
	Window float64 `json:"window"`
	// Attempts is the round's attempts a second, a_k.
	Attempts float64 `json:"attempts_per_s"`
	// Load is the load accumulated up to and including this round, L_k.
	Load float64 `json:"load_per_s"`
	// Failure is p(L_k), the failure rate this load implies, at which the
	// next round's retries are priced.
	Failure float64 `json:"failure"`
}

// Rounds walks the amplification model round by round: a_0 = offered; round k's
// attempts are the previous round's failures, priced at the failure rate
// the accumulated load implies and spread over the round's window,
// a_k = a_(k−1)·p(L_(k−1))·W_(k−1)/W_k. It returns retries+1 rounds; the
// last one's Load is the load the system sees. docs/why.md §3 (1,000/s, 1,200/s,
// f = 0.2, 2 retries, no backoff): 1,000, 200, 40 — 1,240/s.
func Rounds(offered, capacity, underlying float64, retries int, backoff bool) []Round {
	rs := make([]Round, 0, max0(retries)+1)
	a, load := offered, offered
	rs = append(rs, Round{Round: 0, Window: 1, Attempts: a, Load: load, Failure: FailureAt(load, capacity, underlying)})
	for k := 1; k <= retries; k++ {
		a *= rs[k-1].Failure * spread(k, backoff)
		load += a
		rs = append(rs, Round{Round: k, Window: Window(k, backoff), Attempts: a, Load: load, Failure: FailureAt(load, capacity, underlying)})
	}
	return rs
}

// Load returns the load the system sees in the amplification model: the last of
// Rounds. Below capacity it is offered·Σ f^k·W_0/W_k — offered·(1 + f + f²)
// for 2 retries without backoff, offered·(1 + f/2 + f²/8) with it.
func Load(offered, capacity, underlying float64, retries int, backoff bool) float64 {
	a, load := offered, offered
	for k := 1; k <= retries; k++ {
		a *= FailureAt(load, capacity, underlying) * spread(k, backoff)
		load += a
	}
	return load
}

// Tipping is the underlying failure rate at which the amplified load reaches
// capacity. It is plain data, safe to copy and to read concurrently.
type Tipping struct {
	// Exists is false when even a 100 % underlying failure rate leaves the
	// load below capacity.
	Exists bool `json:"exists"`
	// Exact is the root of Load(f) = capacity on [0, 1] (0 if the offered
	// load alone reaches capacity; 0 when there is none).
	Exact float64 `json:"exact"`
	// Slider is the reading on a slider of step Step: the first stop at
	// which the load reaches capacity — Exact rounded up to the next step,
	// as docs/why.md §3 shows it (17.08 % reads 17.5 %, 36.64 % reads 37 %). The
	// slider's last stop is 100 %.
	Slider float64 `json:"slider"`
	// Step is the slider's step (docs/why.md §3: 0.005).
	Step float64 `json:"step"`
}

// TippingPoint returns where the amplified load of the amplification model reaches
// capacity, exactly (by bisection down to adjacent floats) and as a slider of the
// given step reads it. Below capacity Load is a polynomial in f with
// positive coefficients, so the crossing is unique. docs/why.md §3, 1,000/s
// against 1,200/s with 2 retries: (√1.8 − 1)/2 = 17.08 %, slider 17.5 %,
// without backoff; √5.6 − 2 = 36.64 %, slider 37 %, with it. A step outside
// (0, 1] means DefaultSliderStep.
func TippingPoint(offered, capacity float64, retries int, backoff bool, step float64) Tipping {
	if !(step > 0 && step <= 1) {
		step = DefaultSliderStep
	}
	t := Tipping{Step: step}
	reaches := func(f float64) bool { return Load(offered, capacity, f, retries, backoff) >= capacity }
	switch {
	case reaches(0):
		t.Exists = true
		return t
	case !reaches(1):
		return t
	}
	t.Exists = true
	lo, hi := 0.0, 1.0 // reaches(lo) is false, reaches(hi) true
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break // adjacent floats
		}
		if reaches(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	t.Exact = hi
	// The first stop at or above the crossing at which the load reaches
	// capacity; the checks absorb rounding in Exact and in k·step.
	stop := func(k int) float64 { return math.Round(float64(k)*step*1e12) / 1e12 }
	last := int(math.Floor(1/step + 1e-9))
	k := min(int(math.Ceil(t.Exact/step-1e-9)), last)
	for k > 0 && reaches(stop(k-1)) {
		k--
	}
	for k < last && !reaches(stop(k)) {
		k++
	}
	t.Slider = stop(k)
	if !reaches(t.Slider) {
		t.Slider = 1 // between the last stop and 100 %
	}
	return t
}
