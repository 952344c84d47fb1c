package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Scenario is one simulation: services, the clients that call them, and the
// retry policies to compare. Every run of a scenario is the same world under
// one of Policies (and, with a Sweep, at one of the sweep's values). Load and
// Parse read a scenario from YAML, the format of the files in the
// repository's scenarios directory; a Scenario built in Go works the same.
//
// The zero value of every field means its documented default. A Scenario is
// not modified by Run and may be run concurrently from several goroutines.
type Scenario struct {
	// Name names the scenario in reports.
	Name string `yaml:"name" json:"name"`
	// Description says what the scenario shows, in a sentence or two.
	Description string `yaml:"description" json:"description,omitempty"`
	// Seed seeds the run's random source when Options.Seed is zero; zero
	// means 1.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// Duration is how long open-loop clients send and the longest a run
	// lasts in virtual time. Zero means one hour: enough for closed-loop
	// clients with a fixed number of calls, which end the run when they are
	// done. Calls unfinished at the end are counted as such.
	Duration time.Duration `yaml:"duration" json:"duration,omitempty"`
	// Warmup is left out of the statistics: calls begun and samples taken
	// before it do not count.
	Warmup time.Duration `yaml:"warmup" json:"warmup,omitempty"`
	// Window is the width of the windows in which peak arrivals are counted;
	// zero means 200ms, the window of docs/why.md, section 6.
	Window time.Duration `yaml:"window" json:"window,omitempty"`
	// Sample is the interval of the time series (queue depth, workers busy,
	// arrivals); zero means Window, or Duration/2000 if that is longer.
	Sample time.Duration `yaml:"sample" json:"sample,omitempty"`
	// Target names the service whose attempts and peak the summary reports;
	// empty means the last service listed (the dependency at the bottom).
	Target string `yaml:"target" json:"target,omitempty"`
	// Policies are compared side by side: each run uses one of them wherever
	// a client or service has no policy of its own.
	Policies []PolicySpec `yaml:"policies" json:"policies,omitempty"`
	// Services are the dependencies and the layers that call them.
	Services []ServiceSpec `yaml:"services" json:"services"`
	// Clients are the sources of traffic.
	Clients []ClientSpec `yaml:"clients" json:"clients"`
	// Sweep, if set, runs the scenario once per value of one field.
	Sweep *Sweep `yaml:"sweep" json:"sweep,omitempty"`
	// JitterSource, if set, is the random source the policies draw their
	// jitter from in a run of the given seed, in place of the simulator's
	// own streams: caller k (from 0) of each closed-loop client draws from
	// JitterSource(seed, k), and everything else from JitterSource(seed, -1).
	// A program that compares a real run with its simulation gives the
	// sources its real callers drew from (load.JitterSource), so that each
	// simulated caller draws the same waits as its real counterpart: common
	// random numbers, which leave the model as the only difference between
	// the two. It has no form in a file.
	JitterSource func(seed uint64, caller int) rand.Source `yaml:"-" json:"-"`
	// Schedules is how every policy of the run draws its backoff waits:
	// SchedulesRecoil (or empty) as recoil does, or SchedulesBrooker2015
	// as the simulator of Brooker's study did (see SchedulesBrooker2015).
	Schedules string `yaml:"schedules" json:"schedules,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Values of Scenario.Schedules.
const (
	// SchedulesRecoil draws every wait as recoil.Do does: the default.
	SchedulesRecoil = "recoil"
	// SchedulesBrooker2015 draws waits as the simulator of Marc Brooker's
	// "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015) did,
	// so that a scenario can repeat the study with its base and cap. Two
	// things differ from recoil. The study numbers retries from the first
	// retry's exponent 1: its n-th retry's ceiling is
	// min(max, base·multiplier^n), where recoil's is base·multiplier^(n-1)
	// (exponential, full, equal jitter and proportional waits are drawn
	// as recoil draws retry n+1). And the study caps decorrelated jitter
	// after drawing, min(max, uniform[base, 3·previous]), so a wait lands
	// on the cap with some probability, where recoil draws within
	// [base, min(max, 3·previous)]. Constant and no backoff are unchanged.
	SchedulesBrooker2015 = "brooker-2015"
)

// Rate is a rate in events per second. In a file it is written with a unit:
// "140/min", "2.5/s", "3600/h"; a bare number is per second.
type Rate float64

// PerMinute returns the rate per minute.
func (r Rate) PerMinute() float64 { return float64(r) * 60 }

// String formats the rate as it would be written in a file: per minute
// when that is a whole number and per second is not (2.5 a second is
// "150/min"), or when it is under one a second ("30/min"); otherwise per
// second ("3/s", "2.51/s").
func (r Rate) String() string {
	if r == 0 {
		return "0"
	}
	if pm := r.PerMinute(); pm == math.Trunc(pm) && float64(r) != math.Trunc(float64(r)) || r < 1 {
		return strconv.FormatFloat(pm, 'g', -1, 64) + "/min"
	}
	return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s"
}

// ParseRate parses "140/min", "2.5/s", "3600/h" or a bare number (per second).
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	num, unit, ok := strings.Cut(s, "/")
	per := 1.0
	if ok {
		switch strings.TrimSpace(unit) {
		case "s", "sec", "second":
			per = 1
		case "m", "min", "minute":
			per = 60
		case "h", "hour":
			per = 3600
		default:
			return 0, fmt.Errorf("unknown unit %q in rate %q (want /s, /min or /h)", unit, s)
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("rate %q is not a number per unit, such as 140/min", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("rate %q is negative", s)
	}
	return Rate(f / per), nil
}

// Pos records where a spec was read from, for error messages. It is zero for
// specs built in Go.
type Pos = policyspec.Pos

// Error is a problem with a scenario: the file, line and field it is about
// and what is wrong (Err), formatted "file:line: field: problem". It is the
// policy language's error, so a policy's problem reads the same in a
// scenario as in a load policy file.
type Error = policyspec.Error

// validator collects the first error found.
type validator struct {
	strictyaml.Checker
}

func (v *validator) errf(p Pos, field, format string, args ...any) {
	v.Errorf(p, field, format, args...)
}

// Validate checks the scenario and returns an *Error for the first problem.
func (s *Scenario) Validate() error {
	v := &validator{strictyaml.Checker{File: s.Pos.File}}
	s.validate(v)
	return v.Err()
}

func (s *Scenario) validate(v *validator) {
	s.validateRun(v)
	svc := s.serviceIndex(v)
	s.validatePolicies(v, svc)
	endpoints := map[string]bool{}
	compared := s.validateClients(v, svc, endpoints)
	if s.validateServices(v, svc, endpoints) {
		compared = true
	}
	if compared && len(s.Policies) == 0 {
		v.errf(s.Pos, "policies", "a client or service uses the compared policy, but none is listed")
	}
	if s.Sweep != nil {
		s.Sweep.validate(v)
	}
}

// validateRun checks the scenario's own fields: how long it runs and how
// it is counted.
func (s *Scenario) validateRun(v *validator) {
	p := s.Pos
	if s.Duration < 0 {
		v.errf(p, "duration", "must not be negative")
	}
	if s.Warmup < 0 || (s.Duration > 0 && s.Warmup >= s.Duration) {
		v.errf(p, "warmup", "must be at least 0 and less than the duration")
	}
	if s.Window < 0 {
		v.errf(p, "window", "must not be negative")
	}
	if s.Sample < 0 {
		v.errf(p, "sample", "must not be negative")
	}
	if s.Schedules != "" && s.Schedules != SchedulesRecoil && s.Schedules != SchedulesBrooker2015 {
		v.errf(p, "schedules", "%q is not a way of drawing waits (want %s or %s)", s.Schedules, SchedulesRecoil, SchedulesBrooker2015)
	}
	if len(s.Services) == 0 {
		v.errf(p, "services", "a scenario needs at least one service")
	}
	if len(s.Clients) == 0 {
		v.errf(p, "clients", "a scenario needs at least one client")
	}
}
