package blast

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Jitter is how a schedule randomises each wait. Only its mean enters the
// arithmetic. The zero value is JitterNone.
type Jitter uint8

const (
	// JitterNone waits the full ceiling c_k (a hand-written loop).
	JitterNone Jitter = iota
	// JitterFull waits uniformly in [0, c_k]: mean c_k/2 (Brooker 2015,
	// backoff.FullJitter).
	JitterFull
	// JitterEqual waits c_k/2 plus uniformly [0, c_k/2]: mean 3·c_k/4
	// (Brooker 2015, backoff.EqualJitter).
	JitterEqual
)

var jitterNames = [...]string{JitterNone: "none", JitterFull: "full", JitterEqual: "equal"}

// String returns "none", "full" or "equal".
func (j Jitter) String() string {
	if int(j) < len(jitterNames) {
		return jitterNames[j]
	}
	return fmt.Sprintf("Jitter(%d)", uint8(j))
}

// ParseJitter parses "none", "full" or "equal".
func ParseJitter(s string) (Jitter, error) {
	for j, name := range jitterNames {
		if s == name {
			return Jitter(j), nil
		}
	}
	return 0, fmt.Errorf("blast: unknown jitter %q (want none, full or equal)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (j Jitter) MarshalText() ([]byte, error) {
	if int(j) >= len(jitterNames) {
		return nil, fmt.Errorf("blast: invalid %v", j)
	}
	return []byte(j.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (j *Jitter) UnmarshalText(b []byte) error {
	v, err := ParseJitter(string(b))
	if err != nil {
		return err
	}
	*j = v
	return nil
}

// mean is the mean wait as a fraction of the ceiling.
func (j Jitter) mean() float64 {
	switch j {
	case JitterFull:
		return 0.5
	case JitterEqual:
		return 0.75
	}
	return 1
}

// Default values of the fields whose zero value means a default.
const (
	// DefaultMultiplier is used when Inputs.Multiplier is zero: doubling,
	// as in a hand-written loop and package backoff.
	DefaultMultiplier = 2.0
	// DefaultSliderStep is used when Inputs.SliderStep is zero: the amplification example's
	// failure-rate slider moves in steps of 0.5 %.
	DefaultSliderStep = 0.005
)

// Limits that keep every figure finite.
const (
	maxAttempts   = 100
	maxMultiplier = 100.0
	maxRetries    = 40 // keeps the backoff window 2^(k(k+1)/2) finite
	maxLayers     = 64
	maxRate       = 1e15
)

// Inputs are the figures a blast-radius calculation starts from. Rates are
// per minute for the allowance and the pool (docs/why.md §1 speaks in requests a
// minute) and per second for the amplification model (§3 does).
//
// The zero Inputs is not usable: start from DefaultInputs. Zero Multiplier
// means DefaultMultiplier, zero MaxDelay means no cap and zero SliderStep
// means DefaultSliderStep; every other field is taken as given and checked
// by Compute. Inputs is a plain value, safe to copy and share.
type Inputs struct {
	// Attempts is the number of attempts the schedule makes on a call that
	// keeps failing (docs/why.md §1: 5).
	Attempts int `json:"attempts"`
	// Base is the wait before the first retry (docs/why.md §1: 1 s).
	Base time.Duration `json:"-"`
	// Multiplier is the growth of the wait per retry (docs/why.md §1: 2).
	Multiplier float64 `json:"multiplier"`
	// MaxDelay caps each wait; zero means no cap (docs/why.md §1: none).
	MaxDelay time.Duration `json:"-"`
	// Jitter randomises each wait (docs/why.md §1: none).
	Jitter Jitter `json:"jitter"`
	// FailTime is how long one failing attempt takes (docs/why.md §1: 210 ms,
	// a validator's 400).
	FailTime time.Duration `json:"-"`

	// RatePerMinute is the failing endpoint's traffic (docs/why.md §1: 140).
	RatePerMinute float64 `json:"rate_per_min"`
	// OtherPerMinute is every other endpoint's traffic against the same
	// allowance (docs/why.md §1: 1,450).
	OtherPerMinute float64 `json:"other_per_min"`
	// AllowancePerMinute is the organisation's request allowance
	// (docs/why.md §1: 2,000).
	AllowancePerMinute float64 `json:"allowance_per_min"`
	// Pool is the number of workers shared by every endpoint (docs/why.md §1: 24).
	Pool int `json:"pool"`

	// Layers is the number of retrying layers on the path (docs/why.md §2: 3,
	// each making Retries+1 attempts).
	Layers int `json:"layers"`
	// Offered is the load that arrives, in requests a second (docs/why.md §3:
	// 1,000).
	Offered float64 `json:"offered_per_s"`
	// Capacity is the ceiling of attempts a second before load is shed
	// (docs/why.md §3: 1,200).
	Capacity float64 `json:"capacity_per_s"`
	// Failure is the underlying failure rate, in [0, 1], with the system not
	// overloaded (docs/why.md §3: 0.2).
	Failure float64 `json:"failure"`
	// Retries is the number of attempts after the first (docs/why.md §3: 2).
	Retries int `json:"retries"`
	// Backoff marks which amplification (with or without backoff) is the
	// configured one; the Report carries both (docs/why.md §3: off).
	Backoff bool `json:"backoff"`
	// SliderStep is the resolution of the failure-rate slider of docs/why.md §3, used
	// for Tipping.Slider; zero means DefaultSliderStep (0.5 %).
	SliderStep float64 `json:"slider_step"`
}

// DefaultInputs returns the values of docs/why.md: the five-attempt wrapper of docs/why.md §1
// (1 s doubling, no jitter, 210 ms failures) on an endpoint at 140/min
// beside 1,450/min of other traffic, a 2,000/min allowance and 24 workers;
// the amplification example's 1,000/s against 1,200/s at 20 % underlying failure, 2 retries,
// no backoff, 3 layers, read on a 0.5 % slider.
func DefaultInputs() Inputs {
	return Inputs{
		Attempts:           5,
		Base:               time.Second,
		Multiplier:         2,
		Jitter:             JitterNone,
		FailTime:           210 * time.Millisecond,
		RatePerMinute:      140,
		OtherPerMinute:     1450,
		AllowancePerMinute: 2000,
		Pool:               24,
		Layers:             3,
		Offered:            1000,
		Capacity:           1200,
		Failure:            0.2,
		Retries:            2,
		Backoff:            false,
		SliderStep:         DefaultSliderStep,
	}
}

// inputsJSON is Inputs with its durations in milliseconds, the convention
// of every recoil -json output.
type inputsJSON struct {
	inputsAlias
	BaseMS     float64 `json:"base_ms"`
	MaxDelayMS float64 `json:"max_delay_ms"`
	FailTimeMS float64 `json:"fail_time_ms"`
}

type inputsAlias Inputs

// MarshalJSON encodes Inputs with Base, MaxDelay and FailTime in float
// milliseconds (base_ms, max_delay_ms, fail_time_ms), as every recoil -json
// output writes durations, and Jitter by name.
func (in Inputs) MarshalJSON() ([]byte, error) {
	return json.Marshal(inputsJSON{
		inputsAlias: inputsAlias(in),
		BaseMS:      in.Base.Seconds() * 1e3,
		MaxDelayMS:  in.MaxDelay.Seconds() * 1e3,
		FailTimeMS:  in.FailTime.Seconds() * 1e3,
	})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (in *Inputs) UnmarshalJSON(b []byte) error {
	var v inputsJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*in = Inputs(v.inputsAlias)
	in.Base = seconds(v.BaseMS / 1e3)
	in.MaxDelay = seconds(v.MaxDelayMS / 1e3)
	in.FailTime = seconds(v.FailTimeMS / 1e3)
	return nil
}

// ErrInvalid is the sentinel every *InputError matches with errors.Is.
var ErrInvalid = errors.New("blast: invalid input")

// InputError reports an Inputs field Compute cannot use. It matches
// ErrInvalid with errors.Is.
type InputError struct {
	Field  string // the Inputs field, e.g. "Capacity"
	Value  any    // the value it held
	Reason string // what it must be, e.g. "must be positive"
}

func (e *InputError) Error() string {
	return fmt.Sprintf("blast: Inputs.%s = %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *InputError) Unwrap() error { return ErrInvalid }

func bad(field string, v any, reason string) error {
	return &InputError{Field: field, Value: v, Reason: reason}
}

// withDefaults returns in with its defaulting zero fields filled in.
func (in Inputs) withDefaults() Inputs {
	if in.Multiplier == 0 {
		in.Multiplier = DefaultMultiplier
	}
	if in.SliderStep == 0 {
		in.SliderStep = DefaultSliderStep
	}
	return in
}

// validate checks in (after withDefaults), naming the first bad field.
func (in Inputs) validate() error {
	switch {
	case in.Attempts < 1 || in.Attempts > maxAttempts:
		return bad("Attempts", in.Attempts, fmt.Sprintf("must be between 1 and %d", maxAttempts))
	case in.Base < 0:
		return bad("Base", in.Base, "must not be negative")
	case !(in.Multiplier >= 1 && in.Multiplier <= maxMultiplier):
		return bad("Multiplier", in.Multiplier, fmt.Sprintf("must be between 1 and %g (0 means %g)", maxMultiplier, DefaultMultiplier))
	case in.MaxDelay < 0:
		return bad("MaxDelay", in.MaxDelay, "must not be negative (0 means no cap)")
	case int(in.Jitter) >= len(jitterNames):
		return bad("Jitter", in.Jitter, "must be JitterNone, JitterFull or JitterEqual")
	case in.FailTime < 0:
		return bad("FailTime", in.FailTime, "must not be negative")
	case !(in.RatePerMinute >= 0 && in.RatePerMinute <= maxRate):
		return bad("RatePerMinute", in.RatePerMinute, rateRange(false))
	case !(in.OtherPerMinute >= 0 && in.OtherPerMinute <= maxRate):
		return bad("OtherPerMinute", in.OtherPerMinute, rateRange(false))
	case !(in.AllowancePerMinute > 0 && in.AllowancePerMinute <= maxRate):
		return bad("AllowancePerMinute", in.AllowancePerMinute, rateRange(true))
	case in.Pool < 1:
		return bad("Pool", in.Pool, "must be at least 1")
	case in.Layers < 1 || in.Layers > maxLayers:
		return bad("Layers", in.Layers, fmt.Sprintf("must be between 1 and %d", maxLayers))
	case !(in.Offered > 0 && in.Offered <= maxRate):
		return bad("Offered", in.Offered, rateRange(true))
	case !(in.Capacity > 0 && in.Capacity <= maxRate):
		return bad("Capacity", in.Capacity, rateRange(true))
	case !(in.Failure >= 0 && in.Failure <= 1): // also rejects NaN
		return bad("Failure", in.Failure, "must be between 0 and 1")
	case in.Retries < 0 || in.Retries > maxRetries:
		return bad("Retries", in.Retries, fmt.Sprintf("must be between 0 and %d", maxRetries))
	case !(in.SliderStep > 0 && in.SliderStep <= 1):
		return bad("SliderStep", in.SliderStep, "must be in (0, 1] (0 means 0.005)")
	}
	return nil
}

// rateRange says what range a rate must fall in; positive excludes zero.
// The comparisons that use it also reject NaN and infinities.
func rateRange(positive bool) string {
	if positive {
		return fmt.Sprintf("must be positive and at most %g", maxRate)
	}
	return fmt.Sprintf("must be between 0 and %g", maxRate)
}

// seconds converts s seconds to a Duration, saturating at the extremes.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	switch {
	case math.IsNaN(ns):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(math.Round(ns))
}
