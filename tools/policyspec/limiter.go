package policyspec

import (
	"slices"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/limit"
	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Limiter kinds for Limiter.Kind.
const (
	// LimiterFixed is limit.Limiter: Capacity attempts in flight at once.
	LimiterFixed = "fixed"
	// LimiterAdaptive is limit.Adaptive: a limit between Min and Max that
	// follows the dependency's latency and overload signals.
	LimiterAdaptive = "adaptive"
)

var limiterKinds = []string{LimiterAdaptive, LimiterFixed}

// Priorities for Spec.Priority (recoil.Policy.Priority).
const (
	PriorityInteractive = "interactive" // recoil.PriorityInteractive, the default
	PriorityBackground  = "background"  // recoil.PriorityBackground: yields to interactive calls, shed first
)

var priorities = []string{PriorityBackground, PriorityInteractive}

// Limiter describes the policy's concurrency limiter: a fixed cap
// (limit.Limiter) or an adaptive one (limit.Adaptive). Fields that do not
// belong to Kind must be zero; zero fields that do mean the limiter's own
// defaults (limit.AdaptiveConfig documents the adaptive ones). In a file,
// "limiter: adaptive" is shorthand for {kind: adaptive}, and a mapping
// without a kind is fixed.
//
// A driver on virtual time (the simulator) only ever takes a free slot:
// an attempt that finds the limiter full is shed, whatever MaxQueue says.
// A driver on real time (the load driver) queues as MaxQueue and MaxWait
// allow.
type Limiter struct {
	// Kind is LimiterFixed (or empty) or LimiterAdaptive.
	Kind string `yaml:"kind" json:"kind,omitempty"`
	// Capacity is the fixed limiter's slots; zero means
	// limit.DefaultCapacity (24).
	Capacity int `yaml:"capacity" json:"capacity,omitempty"`
	// MaxQueue and MaxWait bound the queue of callers waiting for a slot,
	// for either kind; zero means no queue, and no bound but the caller's
	// deadline.
	MaxQueue int           `yaml:"max_queue" json:"max_queue,omitempty"`
	MaxWait  time.Duration `yaml:"max_wait" json:"max_wait,omitempty"`

	// Initial, Min and Max bound the adaptive limit (20, 1 and 1000 by
	// default).
	Initial int `yaml:"initial" json:"initial,omitempty"`
	Min     int `yaml:"min" json:"min,omitempty"`
	Max     int `yaml:"max" json:"max,omitempty"`
	// Window, WindowSamples, LongWindow, Warmup, Tolerance, Smoothing,
	// Decrease and Reserve are limit.AdaptiveConfig's.
	Window        time.Duration `yaml:"window" json:"window,omitempty"`
	WindowSamples int           `yaml:"window_samples" json:"window_samples,omitempty"`
	LongWindow    time.Duration `yaml:"long_window" json:"long_window,omitempty"`
	Warmup        int           `yaml:"warmup" json:"warmup,omitempty"`
	Tolerance     float64       `yaml:"tolerance" json:"tolerance,omitempty"`
	Smoothing     float64       `yaml:"smoothing" json:"smoothing,omitempty"`
	Decrease      float64       `yaml:"decrease" json:"decrease,omitempty"`
	Reserve       float64       `yaml:"reserve" json:"reserve,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

func (l *Limiter) kind() string {
	if l.Kind == "" {
		return LimiterFixed
	}
	return l.Kind
}

// New returns a new limiter as the spec describes. It panics if the spec
// does not pass its check, which refuses what package limit refuses.
func (l *Limiter) New() recoil.Limiter {
	lim, err := l.build()
	if err != nil {
		panic(err)
	}
	return lim
}

// build returns the limiter the spec describes, or the error of the
// package limit constructor that refuses it.
func (l *Limiter) build() (recoil.Limiter, error) {
	if l.kind() == LimiterAdaptive {
		return limit.NewAdaptive(limit.AdaptiveConfig{Initial: l.Initial, Min: l.Min, Max: l.Max,
			MaxQueue: l.MaxQueue, MaxWait: l.MaxWait, Window: l.Window, WindowSamples: l.WindowSamples,
			LongWindow: l.LongWindow, Warmup: l.Warmup, Tolerance: l.Tolerance, Smoothing: l.Smoothing,
			Decrease: l.Decrease, Reserve: l.Reserve})
	}
	return limit.New(limit.Config{Capacity: l.Capacity, MaxQueue: l.MaxQueue, MaxWait: l.MaxWait})
}

func (l *Limiter) check(c *strictyaml.Checker, p Pos) {
	kind := l.kind()
	if !slices.Contains(limiterKinds, kind) {
		c.Errorf(p, "kind", "%s", notOneOf("a limiter kind", kind, limiterKinds, nil))
		return
	}
	for _, q := range []struct {
		name, kind string
		set        bool
	}{
		{"capacity", LimiterFixed, l.Capacity != 0},
		{"initial", LimiterAdaptive, l.Initial != 0}, {"min", LimiterAdaptive, l.Min != 0}, {"max", LimiterAdaptive, l.Max != 0},
		{"window", LimiterAdaptive, l.Window != 0}, {"window_samples", LimiterAdaptive, l.WindowSamples != 0},
		{"long_window", LimiterAdaptive, l.LongWindow != 0}, {"warmup", LimiterAdaptive, l.Warmup != 0},
		{"tolerance", LimiterAdaptive, l.Tolerance != 0}, {"smoothing", LimiterAdaptive, l.Smoothing != 0},
		{"decrease", LimiterAdaptive, l.Decrease != 0}, {"reserve", LimiterAdaptive, l.Reserve != 0},
	} {
		if q.set && q.kind != kind {
			c.Errorf(p, q.name, "does not apply to a limiter of kind %s (it is a parameter of the %s kind)", kind, q.kind)
		}
	}
	nonNegative(c, p, num("capacity", l.Capacity), num("max_queue", l.MaxQueue), num("max_wait", l.MaxWait),
		num("initial", l.Initial), num("min", l.Min), num("max", l.Max), num("window", l.Window),
		num("window_samples", l.WindowSamples), num("long_window", l.LongWindow), num("warmup", l.Warmup),
		num("tolerance", l.Tolerance), num("smoothing", l.Smoothing), num("decrease", l.Decrease), num("reserve", l.Reserve))
	if _, err := l.build(); err != nil {
		refused(c, p, err)
	}
}

// priority returns the recoil.Priority a Spec's Priority names (checked).
func priority(s string) recoil.Priority {
	if s == PriorityBackground {
		return recoil.PriorityBackground
	}
	return recoil.PriorityInteractive
}
