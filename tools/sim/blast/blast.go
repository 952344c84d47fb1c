package blast

import (
	"encoding/json"
	"math"
)

// Report is every figure Compute derives from Inputs. Durations are in
// seconds (fields ending in S), written to JSON in milliseconds (names
// ending in _ms) as every recoil -json output writes them; rates say their
// unit.
// A Report is a plain value, safe to copy and share.
type Report struct {
	// Inputs are the inputs, with defaults filled in.
	Inputs Inputs `json:"inputs"`
	// Policies are the failing endpoint under three policies, in this
	// order: failing fast (one attempt — also the healthy endpoint's
	// figures), one retry (the one-retry counter-proposal) and the configured
	// schedule.
	Policies []Policy `json:"policies"`
	// Layers is the attempts that reach the bottom of the retrying layers.
	Layers Layers `json:"layers"`
	// WithoutBackoff and WithBackoff are the amplification model
	// without and with backoff; Inputs.Backoff says which is configured.
	WithoutBackoff Amplification `json:"without_backoff"`
	WithBackoff    Amplification `json:"with_backoff"`
}

// Configured returns the amplification Inputs.Backoff selects.
func (r *Report) Configured() Amplification {
	if r.Inputs.Backoff {
		return r.WithBackoff
	}
	return r.WithoutBackoff
}

// Names of the Policies in a Report, in their order.
const (
	PolicyFailFast   = "fail fast"
	PolicyOneRetry   = "one retry"
	PolicyConfigured = "configured"
)

// Policy is what a retry policy does to an endpoint whose every call fails
// (docs/why.md §1): the schedule's sleeping, the allowance it draws and the
// workers it holds. It is plain data, safe to copy and to read concurrently.
type Policy struct {
	// Name is PolicyFailFast, PolicyOneRetry or PolicyConfigured.
	Name string `json:"name"`
	// Attempts is the attempts per failing call: 1, 2 or Inputs.Attempts.
	Attempts int `json:"attempts"`
	// The fields ending in S are in seconds, as the arithmetic is; the JSON
	// encoding writes them in milliseconds (ceilings_ms, waits_ms,
	// sleeping_ms, sleeping_max_ms, held_ms, held_every_attempt_ms), the
	// convention of every recoil -json output.
	//
	// CeilingsS are the longest waits before retries 1…Attempts−1 and
	// WaitsS their means under the jitter (docs/why.md §1: 1, 2, 4, 8 s).
	CeilingsS []float64 `json:"-"`
	WaitsS    []float64 `json:"-"`
	// SleepingS is the expected total sleep (docs/why.md §1: 15 s) and
	// SleepingMaxS the longest (the same without jitter).
	SleepingS    float64 `json:"-"`
	SleepingMaxS float64 `json:"-"`
	// HeldS is the hold as docs/why.md §1 counts it, sleeping plus one failure's
	// time (15.21 s, "15.2"; one retry 1.21 s, "1.2"; failing fast 0.21 s).
	HeldS float64 `json:"-"`
	// HeldEveryAttemptS is sleeping plus Attempts failures' time (16.05 s).
	HeldEveryAttemptS float64 `json:"-"`

	// DrawPerMinute is the attempts a minute the endpoint draws from the
	// allowance, rate × attempts (docs/why.md §1: 700 from 140; one retry 280).
	DrawPerMinute float64 `json:"draw_per_min"`
	// ExtraPerMinute is the draw above the endpoint's own traffic (+560).
	ExtraPerMinute float64 `json:"extra_per_min"`
	// TotalPerMinute is the draw plus every other endpoint's traffic
	// (docs/why.md §1: 1,590 healthy, 2,150 broken).
	TotalPerMinute float64 `json:"total_per_min"`
	// HeadroomPerMinute is the allowance less the total: 410 healthy,
	// −150 broken (over by 150).
	HeadroomPerMinute float64 `json:"headroom_per_min"`
	// OverAllowance reports a negative headroom: healthy endpoints take
	// 429s.
	OverAllowance bool `json:"over_allowance"`

	// ArrivalPerS is the endpoint's traffic a second (140/min = 2.33/s).
	ArrivalPerS float64 `json:"arrival_per_s"`
	// Workers is the demand by Little's law, ArrivalPerS × HeldS (0.49
	// failing fast, 2.82 with one retry, 35.49 with the five-attempt wrapper).
	Workers float64 `json:"workers"`
	// WorkersEveryAttempt is ArrivalPerS × HeldEveryAttemptS.
	WorkersEveryAttempt float64 `json:"workers_every_attempt"`
	// OverPool reports Workers above the pool: the queue grows without
	// bound and every endpoint waits in it.
	OverPool bool `json:"over_pool"`
}

// Layers is what retrying at every layer sends to the bottom (docs/why.md §2).
// It is plain data, safe to copy and to read concurrently.
type Layers struct {
	// AttemptsPerLayer is Inputs.Retries+1 (docs/why.md §2: 3).
	AttemptsPerLayer int `json:"attempts_per_layer"`
	// Layers is Inputs.Layers (docs/why.md §2: 3).
	Layers int `json:"layers"`
	// Sent are the attempts leaving layer 1…Layers for one request at the
	// top, AttemptsPerLayer^i (3, 9, 27).
	Sent []float64 `json:"sent"`
	// Reach is the attempts that reach the bottom, the last of Sent (27).
	Reach float64 `json:"reach"`
}

// Amplification is the amplification model for one setting of backoff. It is plain
// data, safe to copy and to read concurrently.
type Amplification struct {
	// Backoff says whether retry rounds are spread over growing windows.
	Backoff bool `json:"backoff"`
	// Configured is true for the amplification Inputs.Backoff selects.
	Configured bool `json:"configured"`
	// Rounds are the model's rounds, first attempts then each retry.
	Rounds []Round `json:"rounds"`
	// Load is the load the system sees, attempts a second (1,240).
	Load float64 `json:"load_per_s"`
	// Factor is Load over the offered load, "times more load than
	// arrived" (1.24).
	Factor float64 `json:"amplification"`
	// Failure is the failure rate once retries are counted, p(Load)
	// (0.226).
	Failure float64 `json:"failure"`
	// Manufactured is Failure less the underlying rate: failure no fault
	// caused (0.026, "two and a half percentage points").
	Manufactured float64 `json:"manufactured"`
	// Share is the share of attempts the system can take (0.968).
	Share float64 `json:"share"`
	// Served is the attempts served successfully a second (960).
	Served float64 `json:"served_per_s"`
	// Spare is the capacity left over, capacity − Load (−40).
	Spare float64 `json:"spare_per_s"`
	// Shed is the attempts a second refused for overload, max(0, −Spare).
	Shed float64 `json:"shed_per_s"`
	// Overloaded reports Load above capacity ("amplified load exceeds
	// capacity").
	Overloaded bool `json:"overloaded"`
	// Goodput is requests completed a second with retries: Served, since a
	// request stops at its first success, and never more than the offered
	// load (960).
	Goodput float64 `json:"goodput_per_s"`
	// GoodputNoRetries is requests completed a second with no retries,
	// min(offered, capacity)·(1−f) (800).
	GoodputNoRetries float64 `json:"goodput_no_retries_per_s"`
	// Recovered is Goodput − GoodputNoRetries, the work retries recover
	// (160).
	Recovered float64 `json:"recovered_per_s"`
	// Tipping is the underlying failure rate at which Load reaches
	// capacity (17.08 %, slider 17.5 %; with backoff 36.64 %, slider 37 %).
	Tipping Tipping `json:"tipping"`
}

// Compute validates in, fills in its defaults and derives every figure. An
// invalid field gives a *InputError naming it (errors.Is(err, ErrInvalid)).
// DefaultInputs reproduces the figures of docs/why.md; the package documentation
// derives each.
func Compute(in Inputs) (Report, error) {
	in = in.withDefaults()
	if err := in.validate(); err != nil {
		return Report{}, err
	}
	r := Report{Inputs: in}
	for _, p := range []struct {
		name     string
		attempts int
	}{{PolicyFailFast, 1}, {PolicyOneRetry, 2}, {PolicyConfigured, in.Attempts}} {
		r.Policies = append(r.Policies, policy(in, p.name, p.attempts))
	}

	perLayer := in.Retries + 1
	r.Layers = Layers{AttemptsPerLayer: perLayer, Layers: in.Layers}
	for i := 1; i <= in.Layers; i++ {
		r.Layers.Sent = append(r.Layers.Sent, Reach(perLayer, i))
	}
	r.Layers.Reach = r.Layers.Sent[len(r.Layers.Sent)-1]

	r.WithoutBackoff = amplify(in, false)
	r.WithBackoff = amplify(in, true)
	return r, nil
}

// policy computes one row of the arithmetic of docs/why.md §1 for n attempts.
func policy(in Inputs, name string, n int) Policy {
	p := Policy{Name: name, Attempts: n, CeilingsS: []float64{}, WaitsS: []float64{}}
	for k := 1; k < n; k++ {
		c := ceiling(k, in.Base, in.Multiplier, in.MaxDelay)
		p.CeilingsS = append(p.CeilingsS, c)
		p.WaitsS = append(p.WaitsS, c*in.Jitter.mean())
	}
	p.SleepingS, p.SleepingMaxS = sleeping(n, in.Base, in.Multiplier, in.MaxDelay, in.Jitter)
	fail := in.FailTime.Seconds()
	p.HeldS = p.SleepingS + fail
	p.HeldEveryAttemptS = p.SleepingS + float64(n)*fail

	p.DrawPerMinute = in.RatePerMinute * float64(n)
	p.ExtraPerMinute = p.DrawPerMinute - in.RatePerMinute
	p.TotalPerMinute = p.DrawPerMinute + in.OtherPerMinute
	p.HeadroomPerMinute = in.AllowancePerMinute - p.TotalPerMinute
	p.OverAllowance = p.HeadroomPerMinute < 0

	p.ArrivalPerS = in.RatePerMinute / 60
	p.Workers = p.ArrivalPerS * p.HeldS
	p.WorkersEveryAttempt = p.ArrivalPerS * p.HeldEveryAttemptS
	p.OverPool = p.Workers > float64(in.Pool)
	return p
}

// amplify computes the amplification model for one setting of backoff.
func amplify(in Inputs, backoff bool) Amplification {
	a := Amplification{Backoff: backoff, Configured: backoff == in.Backoff}
	a.Rounds = Rounds(in.Offered, in.Capacity, in.Failure, in.Retries, backoff)
	last := a.Rounds[len(a.Rounds)-1]
	a.Load = last.Load
	a.Factor = a.Load / in.Offered
	a.Failure = last.Failure
	a.Manufactured = a.Failure - in.Failure
	a.Share = Share(a.Load, in.Capacity)
	a.Served = a.Load * a.Share * (1 - in.Failure)
	a.Spare = in.Capacity - a.Load
	a.Shed = math.Max(0, -a.Spare)
	a.Overloaded = a.Load > in.Capacity
	a.Goodput = math.Min(a.Served, in.Offered)
	a.GoodputNoRetries = math.Min(in.Offered, in.Capacity) * (1 - in.Failure)
	a.Recovered = a.Goodput - a.GoodputNoRetries
	a.Tipping = TippingPoint(in.Offered, in.Capacity, in.Retries, backoff, in.SliderStep)
	return a
}

// MarshalJSON encodes the policy with its durations in milliseconds, the
// convention of every recoil -json output.
func (p Policy) MarshalJSON() ([]byte, error) {
	type fields Policy
	ms := func(s []float64) []float64 {
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = v * 1e3
		}
		return out
	}
	return json.Marshal(struct {
		fields
		CeilingsMS         []float64 `json:"ceilings_ms"`
		WaitsMS            []float64 `json:"waits_ms"`
		SleepingMS         float64   `json:"sleeping_ms"`
		SleepingMaxMS      float64   `json:"sleeping_max_ms"`
		HeldMS             float64   `json:"held_ms"`
		HeldEveryAttemptMS float64   `json:"held_every_attempt_ms"`
	}{fields(p), ms(p.CeilingsS), ms(p.WaitsS), p.SleepingS * 1e3, p.SleepingMaxS * 1e3, p.HeldS * 1e3, p.HeldEveryAttemptS * 1e3})
}
