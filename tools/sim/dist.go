package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// Distribution kinds for [Dist].
const (
	DistConstant    = "constant"
	DistExponential = "exponential"
	DistLognormal   = "lognormal"
	DistNormal      = "normal" // |N(mean, stddev)|: folded at zero
	DistUniform     = "uniform"
)

// Dist is a distribution of durations: a service time, a network delay, a
// think time. The zero Dist is the constant zero. In a scenario file a bare
// duration ("210ms") is a constant; a mapping names the kind:
//
//	service: {dist: exponential, mean: 1s}
//	service: {dist: lognormal, mean: 400ms, stddev: 200ms}
//	latency: {dist: normal, mean: 10ms, stddev: 2ms}   # |N(10ms, 2ms)|
//	start:   {dist: uniform, min: 0s, max: 5ms}
type Dist struct {
	// Kind is one of the Dist* constants; empty means constant.
	Kind string `yaml:"dist" json:"dist,omitempty"`
	// Mean is the mean (for constant, the value; for normal, the mean of
	// the normal before folding).
	Mean time.Duration `yaml:"mean" json:"mean,omitempty"`
	// Stddev is the standard deviation (lognormal and normal).
	Stddev time.Duration `yaml:"stddev" json:"stddev,omitempty"`
	// Min and Max bound a uniform distribution.
	Min time.Duration `yaml:"min" json:"min,omitempty"`
	Max time.Duration `yaml:"max" json:"max,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Constant returns the Dist that is always d.
func Constant(d time.Duration) Dist { return Dist{Kind: DistConstant, Mean: d} }

// Exponential returns an exponential Dist with the given mean.
func Exponential(mean time.Duration) Dist { return Dist{Kind: DistExponential, Mean: mean} }

// IsZero reports whether d is always zero.
func (d Dist) IsZero() bool {
	switch d.Kind {
	case DistUniform:
		return d.Max == 0
	default:
		return d.Mean == 0
	}
}

// MeanOf returns the distribution's mean.
func (d Dist) MeanOf() time.Duration {
	if d.Kind == DistUniform {
		return (d.Min + d.Max) / 2
	}
	return d.Mean
}

func (d *Dist) validate(v *validator) {
	switch d.Kind {
	case "", DistConstant, DistExponential:
		if d.Mean < 0 {
			v.errf(d.Pos, "mean", "must not be negative")
		}
		if d.Stddev != 0 || d.Min != 0 || d.Max != 0 {
			v.errf(d.Pos, "dist", "%s takes only a mean", kindOr(d.Kind, DistConstant))
		}
	case DistLognormal, DistNormal:
		if d.Mean <= 0 && d.Kind == DistLognormal {
			v.errf(d.Pos, "mean", "must be positive")
		}
		if d.Stddev < 0 {
			v.errf(d.Pos, "stddev", "must not be negative")
		}
		if d.Min != 0 || d.Max != 0 {
			v.errf(d.Pos, "dist", "%s takes a mean and a stddev", d.Kind)
		}
	case DistUniform:
		if d.Min < 0 || d.Max < d.Min {
			v.errf(d.Pos, "max", "want 0 <= min <= max")
		}
		if d.Mean != 0 || d.Stddev != 0 {
			v.errf(d.Pos, "dist", "uniform takes a min and a max")
		}
	default:
		v.errf(d.Pos, "dist", "unknown distribution %q (want constant, exponential, lognormal, normal or uniform)", d.Kind)
	}
}

func kindOr(k, def string) string {
	if k == "" {
		return def
	}
	return k
}

// sampler draws from a compiled Dist, in nanoseconds.
type sampler struct {
	kind uint8
	a, b float64
}

const (
	sConst uint8 = iota
	sExp
	sLognormal
	sNormal
	sUniform
)

func (d Dist) sampler() sampler {
	switch d.Kind {
	case DistExponential:
		return sampler{sExp, float64(d.Mean), 0}
	case DistLognormal:
		m, s := float64(d.Mean), float64(d.Stddev)
		sigma2 := math.Log1p(s * s / (m * m))
		return sampler{sLognormal, math.Log(m) - sigma2/2, math.Sqrt(sigma2)}
	case DistNormal:
		return sampler{sNormal, float64(d.Mean), float64(d.Stddev)}
	case DistUniform:
		return sampler{sUniform, float64(d.Min), float64(d.Max - d.Min)}
	default:
		return sampler{sConst, float64(d.Mean), 0}
	}
}

func (s *sampler) zero() bool { return s.kind == sConst && s.a == 0 }

// draw returns one value, at least zero.
func (s *sampler) draw(r *rand.Rand) int64 {
	var v float64
	switch s.kind {
	case sConst:
		return int64(s.a)
	case sExp:
		v = s.a * r.ExpFloat64()
	case sLognormal:
		v = math.Exp(s.a + s.b*r.NormFloat64())
	case sNormal:
		v = math.Abs(s.a + s.b*r.NormFloat64())
	case sUniform:
		v = s.a + s.b*r.Float64()
	}
	if v >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(v)
}
