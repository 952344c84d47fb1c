package blast

import "math"

// Layer is one retrying layer on a path through a call graph: the caller of
// one edge, with its retries, its backoff and the budget that bounds them.
// A path is a list of layers from the top (the entry point) down to the
// layer that calls the failing service. The zero Layer makes one attempt
// and never retries. It is plain data, safe to copy and share.
//
// The layered model extends the amplification model of docs/why.md §3 from
// one retrying layer to a stack of them (package audit reads one off a
// mesh's configuration): the bottom layer's attempts fail at the failing
// service's rate p, and each retry round k of a layer adds its calls'
// failures to the power k, spread over Window(k) with backoff — the
// single-layer model's a_k/O = p^k/W_k. A call through a layer fails when
// every attempt it made failed, and that is the failure rate the layer above
// sees. With one uncapped layer the load is exactly Load's below capacity.
type Layer struct {
	// Retries is the attempts after the first that the layer may make.
	Retries int `json:"retries"`
	// Backoff spreads the layer's retry rounds over growing windows, as
	// in the single-layer model with backoff.
	Backoff bool `json:"backoff"`
	// RetryRatio, if positive, is a ratio budget: retries are at most
	// this share of the layer's calls, sustained (Envoy's retry_budget
	// budget_percent, a Finagle-style ratio budget). The layer's attempts
	// per call are then at most 1 + RetryRatio.
	RetryRatio float64 `json:"retry_ratio,omitempty"`
	// ThrottleRatio, if positive, is a token bucket's token ratio (gRFC
	// A6 retryThrottling, recoil's own budget): a success returns that
	// share of the token a failure takes, so once the failure rate the
	// layer sees exceeds ThrottleRatio/(1+ThrottleRatio) the bucket drains
	// and, sustained, the layer stops retrying.
	ThrottleRatio float64 `json:"throttle_ratio,omitempty"`
	// SuccessRatio, if positive, is a share budget (budget.Share, recoil's
	// default): retries are at most this share of the layer's successful
	// attempts, so the layer retries less as its failure rate rises and,
	// with every attempt failing, not at all.
	SuccessRatio float64 `json:"success_ratio,omitempty"`
}

// ThrottleAbove returns the failure rate above which a token bucket of
// the given token ratio drains and stops retries, ratio/(1+ratio): a
// failure takes one token and a success returns ratio, so the bucket holds
// only while (1−q)·ratio ≥ q. gRFC A6's example, ratio 0.1: 9.09 %. A ratio
// that is not positive means no throttle, and gives 1.
func ThrottleAbove(ratio float64) float64 {
	if !(ratio > 0) {
		return 1
	}
	return ratio / (1 + ratio)
}

// Expect returns what one call through the layer does when each of its
// attempts fails with probability q: the expected attempts it makes and
// the probability that the call fails. Uncapped, attempts are
// Σ_{k=0…R} q^k/W_k and the call fails with q^(R+1). A budget lets only a
// share s of the failing calls retry: the share that keeps the retries
// within RetryRatio, or none once a token bucket drains; the call then
// fails with (1−s)·q + s·q^(R+1).
func (l Layer) Expect(q float64) (attempts, failure float64) {
	q = math.Min(math.Max(q, 0), 1)
	r := max0(l.Retries)
	attempts, term := 1.0, 1.0
	if q == 1 && !l.Backoff {
		attempts = float64(r + 1)
	} else {
		for k := 1; k <= r; k++ {
			term *= q * spread(k, l.Backoff)
			attempts += term
			if term < 1e-17*attempts {
				break // what is left cannot change the sum
			}
		}
	}
	allFail := math.Pow(q, float64(r+1))
	s := 1.0 // the share of failing calls the budget lets retry
	if l.ThrottleRatio > 0 && q > ThrottleAbove(l.ThrottleRatio) {
		s = 0
	}
	if l.RetryRatio > 0 && attempts-1 > l.RetryRatio {
		s = math.Min(s, l.RetryRatio/(attempts-1))
	}
	if l.SuccessRatio > 0 && attempts > 1 {
		// Retries ≤ SuccessRatio × the calls that succeed, which depend on
		// how many retry: the fixed point of s, from above.
		cap := s
		for range 50 {
			next := math.Min(cap, l.SuccessRatio*(1-((1-s)*q+s*allFail))/(attempts-1))
			if math.Abs(next-s) < 1e-12 {
				break
			}
			s = next
		}
	}
	if s < 1 {
		return 1 + s*(attempts-1), (1-s)*q + s*allFail
	}
	return attempts, allFail
}

// Reaching returns the expected attempts that reach the bottom of the
// path for one call at its top, and the probability that the call fails,
// when each attempt at the bottom fails with probability p: the layers'
// expected attempts multiplied from the bottom up, each layer priced at
// the failure rate of the calls through the layer below it. With p = 1 and
// no budgets it is the product of the layers' attempts, Reach's 27 for
// three layers of three.
func Reaching(path []Layer, p float64) (attempts, failure float64) {
	attempts, failure = 1, p
	for i := len(path) - 1; i >= 0; i-- {
		a, f := path[i].Expect(failure)
		attempts *= a
		failure = f
	}
	return attempts, failure
}

// StackLoad returns the load, in attempts a second, that reaches a service
// through paths of retrying layers when offered requests a second enter
// each path's top: Σ offered·Reaching(path, p). A path with no layers is a
// direct call, one attempt. The service sheds load above capacity as in
// the single-layer model, so p = FailureAt(load, capacity, underlying), and
// the load is the least fixed point of the two, found by iterating from
// p = underlying (at most 200 steps; with a token bucket, which stops
// retrying as p rises, it stops at the first step that does not raise p). Below
// capacity nothing is shed and p is the underlying rate; with one uncapped
// layer the load is then exactly Load's.
func StackLoad(offered, capacity, underlying float64, paths [][]Layer) float64 {
	load := func(p float64) float64 {
		total := 0.0
		for _, path := range paths {
			a, _ := Reaching(path, p)
			total += offered * a
		}
		return total
	}
	p := underlying
	l := load(p)
	for range 200 {
		next := FailureAt(l, capacity, underlying)
		if next <= p {
			break
		}
		p = next
		nl := load(p)
		if math.Abs(nl-l) <= 1e-12*math.Max(1, l) {
			l = nl
			break
		}
		l = nl
	}
	return l
}

// PersistentLoad returns the load, in attempts a second, that reaches a
// service through paths of retrying layers when a share f of the requests
// meet a failure that does not go away — every attempt they make fails —
// and the rest succeed at once: Σ offered·((1−f) + f·Reaching(path, 1)).
// It is the other end from StackLoad's independent failures, where a retry
// may succeed: one request in a persistent failure sends the whole product
// of its layers' attempts (27 through three layers of three), or what the
// budgets let through once they have drained. Nothing is shed.
func PersistentLoad(offered, f float64, paths [][]Layer) float64 {
	f = math.Min(math.Max(f, 0), 1)
	total := 0.0
	for _, path := range paths {
		a, _ := Reaching(path, 1)
		total += offered * ((1 - f) + f*a)
	}
	return total
}

// PersistentTippingPoint returns the share of requests in a persistent
// failure at which PersistentLoad reaches capacity, exactly and on a
// slider of the given step. Three layers of three against a capacity 20 %
// above the healthy load: 0.2/26 = 0.77 %.
func PersistentTippingPoint(offered, capacity float64, paths [][]Layer, step float64) Tipping {
	return tippingOf(func(f float64) bool { return PersistentLoad(offered, f, paths) >= capacity }, step)
}

// StackTippingPoint returns the underlying failure rate at which the load
// StackLoad gives, with nothing shed, reaches capacity, exactly and as a slider of the given
// step reads it (a step outside (0, 1] means DefaultSliderStep). A token
// bucket makes the load fall again once it drains, so the load need not
// grow with the failure rate: the slider's stops are walked from 0 and the
// first that reaches capacity is bisected against the stop before it, down
// to adjacent floats. For one uncapped layer it agrees with TippingPoint.
func StackTippingPoint(offered, capacity float64, paths [][]Layer, step float64) Tipping {
	// Below capacity nothing is shed and p is f: the crossing is where the
	// unshed load reaches capacity, as in TippingPoint.
	return tippingOf(func(f float64) bool { return StackLoad(offered, math.Inf(1), f, paths) >= capacity }, step)
}

// tippingOf finds the first crossing of reaches on [0, 1]: the slider's
// stops walked from 0, the first that reaches bisected against the one
// before it down to adjacent floats.
func tippingOf(reaches func(f float64) bool, step float64) Tipping {
	if !(step > 0 && step <= 1) {
		step = DefaultSliderStep
	}
	t := Tipping{Step: step}
	if reaches(0) {
		t.Exists = true
		return t
	}
	stop := func(k int) float64 { return math.Round(float64(k)*step*1e12) / 1e12 }
	last := int(math.Floor(1/step + 1e-9))
	hiStop := -1
	for k := 1; k <= last; k++ {
		if reaches(stop(k)) {
			hiStop = k
			break
		}
	}
	lo, hi := stop(max0(hiStop-1)), 0.0
	switch {
	case hiStop >= 0:
		hi = stop(hiStop)
		t.Slider = hi
	case stop(last) < 1 && reaches(1):
		lo, hi = stop(last), 1
		t.Slider = 1 // between the last stop and 100 %
	default:
		return t
	}
	t.Exists = true
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if reaches(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	t.Exact = hi
	return t
}
