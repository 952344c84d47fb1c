package policyspec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Error is a problem with a policy — in a file, or in a Spec built in Go —
// formatted "file:line: field: problem". File and Line are zero for a Spec
// built in Go. Err says what is wrong. Package load reports policy files
// with it (load.PolicyError), and package sim reports scenarios with it
// (sim.Error), so a policy's problem reads the same wherever it is written.
type Error = strictyaml.Error

// Pos records where a mapping was read from, for the errors of checks made
// after decoding; it is zero for a value built in Go.
type Pos = strictyaml.Pos

// Spec is a retry policy as the policy language writes it: the fields of a
// recoil.Policy that can be written down, plus the few knobs a driver
// needs. It is a description, not a policy: Build and Policy make a fresh
// recoil.Policy from it each time, with its own budget, breaker and
// limiter state, so one Spec can serve every caller of a simulation or
// every run of a load test.
//
// The zero Spec is recoil's default policy (recoil.Default()'s settings):
// every zero field means the default recoil.Policy documents. Decode and
// Parse read a Spec from YAML; the field tags are its spelling there. A
// Spec is a plain value: safe to read from several goroutines, not to
// change while others read it.
type Spec struct {
	// Name names the policy in reports and results.
	Name string `yaml:"name" json:"name,omitempty"`
	// MaxAttempts caps attempts, the first included; zero means
	// recoil.DefaultMaxAttempts (3), 1 turns retrying off.
	MaxAttempts int `yaml:"max_attempts" json:"max_attempts,omitempty"`
	// Backoff is the schedule after a transient failure; nil means
	// recoil.DefaultBackoff() (full jitter from 100 ms to 20 s).
	Backoff *Backoff `yaml:"backoff" json:"backoff,omitempty"`
	// OverloadBackoff is the schedule after an overloaded or throttled
	// failure that came without a server-directed wait; nil means
	// recoil.DefaultOverloadBackoff() (full jitter from 1 s to 20 s) — not
	// Backoff.
	OverloadBackoff *Backoff `yaml:"overload_backoff" json:"overload_backoff,omitempty"`
	// MaxServerWait is the longest server-directed wait (Retry-After)
	// honoured; zero means recoil.DefaultMaxServerWait (60 s).
	MaxServerWait time.Duration `yaml:"max_server_wait" json:"max_server_wait,omitempty"`
	// MinAttempt is the least time an attempt needs: no wait is started
	// unless it and this fit before the deadline. Zero means
	// recoil.DefaultMinAttempt (10 ms).
	MinAttempt time.Duration `yaml:"min_attempt" json:"min_attempt,omitempty"`
	// Timeout bounds the whole logical call, waits included; zero means
	// only the caller's deadline does.
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// AttemptTimeout bounds each attempt; zero means no bound.
	AttemptTimeout time.Duration `yaml:"attempt_timeout" json:"attempt_timeout,omitempty"`
	// Budget is the retry budget; nil means the policy's own budget.Share
	// (retries at most 20 % of successful attempts, plus a reserve of 10).
	Budget *Budget `yaml:"budget" json:"budget,omitempty"`
	// Breaker is a circuit breaker; nil means none.
	Breaker *Breaker `yaml:"breaker" json:"breaker,omitempty"`
	// Limit caps the attempts in flight through one instance of the policy
	// (a limit.Limiter with no queue: an attempt that finds it full is shed
	// and the call stops with recoil.ReasonLimit). Zero means no cap.
	// Limiter says the same with more to say (a queue, an adaptive limit);
	// a spec sets one or the other.
	Limit int `yaml:"limit" json:"limit,omitempty"`
	// Limiter is the concurrency limiter, fixed or adaptive; nil means
	// Limit's, or none.
	Limiter *Limiter `yaml:"limiter" json:"limiter,omitempty"`
	// Priority is the calls' priority for a limiter that orders by it
	// (recoil.Policy.Priority): PriorityInteractive (or empty) or
	// PriorityBackground.
	Priority string `yaml:"priority" json:"priority,omitempty"`
	// Classify is how failures are classified: ClassifyDefault (or empty),
	// ClassifyRetryEverything or ClassifyTimeouts.
	Classify string `yaml:"classify" json:"classify,omitempty"`
	// Hop is the hop protocol's edge budget: a call that begins a request
	// tree gives it Hop retries for the whole tree (package hop). Zero
	// means the simulator does not use the protocol and the load driver
	// gives the tree the policy's own retries.
	Hop int `yaml:"hop" json:"hop,omitempty"`
	// IdleTimeout fails an HTTP response body that delivers nothing for
	// this long (recoilhttp.Transport.IdleTimeout); zero means the
	// Transport's default, recoilhttp.DefaultIdleTimeout (5 minutes). It
	// applies to HTTP calls only: the simulator has no streams and refuses
	// it.
	IdleTimeout time.Duration `yaml:"idle_timeout" json:"idle_timeout,omitempty"`
	// Fallback, if set, sends the call's attempts across ordered targets,
	// each an upstream of its own (recoil.Policy.Fallback); nil means one
	// upstream. See Fallback for the gateways' per-target retries.
	Fallback *Fallback `yaml:"fallback" json:"fallback,omitempty"`
	// Hedge, if set, races an attempt slow to answer with another copy of
	// it (recoil.Policy.Hedge); nil means no hedging.
	Hedge *Hedge `yaml:"hedge" json:"hedge,omitempty"`

	// Pos is where the policy was read from; zero for a Spec built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// Classification modes for Spec.Classify.
const (
	// ClassifyDefault is recoil's classification: a validator's 400 is
	// permanent and tried once, a 429 waits as the server says, a 503
	// waits longer than a 500. An empty Classify means it too.
	ClassifyDefault = "default"
	// ClassifyRetryEverything retries every failure on the policy's own
	// schedule, ignoring Retry-After: the wrapper that retries anything
	// that is not a 2xx. Cancellation is still never retried.
	ClassifyRetryEverything = "retry-everything"
	// ClassifyTimeouts retries only the caller's own timeouts; any answer
	// is final: an upstream that re-sends a request it gave up on.
	ClassifyTimeouts = "timeouts"
)

var classifyModes = []string{ClassifyDefault, ClassifyRetryEverything, ClassifyTimeouts}

// Backoff kinds for Backoff.Kind, each a schedule of package backoff.
const (
	BackoffNone         = "none"         // backoff.None: retry at once
	BackoffConstant     = "constant"     // backoff.Constant(Base)
	BackoffExponential  = "exponential"  // backoff.Exponential: Base·Multiplier^(n-1), no jitter
	BackoffFullJitter   = "full-jitter"  // backoff.FullJitter (Brooker's "Full Jitter")
	BackoffEqualJitter  = "equal-jitter" // backoff.EqualJitter
	BackoffDecorrelated = "decorrelated" // backoff.Decorrelated
	BackoffProportional = "proportional" // backoff.Proportional: ±Jitter around the exponential
)

var backoffKinds = []string{BackoffConstant, BackoffDecorrelated, BackoffEqualJitter, BackoffExponential, BackoffFullJitter, BackoffNone, BackoffProportional}

// Backoff describes a backoff.Schedule. In a file, "backoff: none" is
// shorthand for {kind: none}. The zero Backoff names no kind and does not
// validate.
type Backoff struct {
	// Kind is one of the Backoff* constants.
	Kind string `yaml:"kind" json:"kind"`
	// Base is the first wait (the smallest, for decorrelated); it must be
	// positive for every kind but none.
	Base time.Duration `yaml:"base" json:"base,omitempty"`
	// Max caps every wait; zero means no cap.
	Max time.Duration `yaml:"max" json:"max,omitempty"`
	// Multiplier is the growth per retry; zero means 2. Decorrelated
	// jitter has none.
	Multiplier float64 `yaml:"multiplier" json:"multiplier,omitempty"`
	// Jitter is the proportional backoff's spread, in [0, 1]: each wait is
	// multiplied by a random factor in [1-Jitter, 1+Jitter].
	Jitter float64 `yaml:"jitter" json:"jitter,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// Budget kinds for Budget.Kind.
const (
	BudgetNone        = "none"         // recoil.NoBudget: every retry the rest of the policy allows goes
	BudgetDefault     = "default"      // the policy's own budget.Share (Policy.Budget nil)
	BudgetShare       = "share"        // budget.Share: percent, reserve
	BudgetTokenBucket = "token-bucket" // budget.TokenBucket (gRFC A6): max_tokens, token_ratio
	BudgetRatio       = "ratio"        // budget.Ratio (Finagle): percent, ttl, min_retries_per_sec
	BudgetQuota       = "quota"        // budget.Quota (AWS standard mode): capacity, retry_cost, timeout_cost, throttle_cost, no_retry_increment
	BudgetAdaptive    = "adaptive"     // budget.Adaptive (SRE book client-side throttling): k, window
)

var budgetKinds = []string{BudgetAdaptive, BudgetDefault, BudgetNone, BudgetQuota, BudgetRatio, BudgetShare, BudgetTokenBucket}

// Budget scopes for Budget.Scope: who shares one budget's state when a
// caller runs as several replicas (processes) of one service.
const (
	// ScopeReplica gives each replica a budget of its own, as a budget in
	// process memory is: N replicas together may retry N times what one
	// budget allows. An empty Scope means it too.
	ScopeReplica = "replica"
	// ScopeFleet gives every replica one budget, as a budget whose state
	// lives in a shared store does (package fleet keeps it in Redis): the
	// replicas together retry what one budget allows.
	ScopeFleet = "fleet"
)

var budgetScopes = []string{ScopeFleet, ScopeReplica}

// Budget describes a retry budget. Fields that do not belong to Kind must
// be zero; zero fields that do mean the budget's own defaults, so the zero
// Budget is a token bucket with gRFC A6's settings. In a file, "budget:
// none" is shorthand for {kind: none}, and a mapping without a kind is a
// token bucket.
type Budget struct {
	// Kind is one of the Budget* constants; empty means BudgetTokenBucket.
	Kind string `yaml:"kind" json:"kind,omitempty"`

	// MaxTokens and TokenRatio are budget.TokenBucketConfig's.
	MaxTokens  float64 `yaml:"max_tokens" json:"max_tokens,omitempty"`
	TokenRatio float64 `yaml:"token_ratio" json:"token_ratio,omitempty"`

	// Percent, TTL and MinRetriesPerSec are budget.RatioConfig's; a
	// negative MinRetriesPerSec means no reserve. Percent and Reserve are
	// budget.ShareConfig's.
	Percent          float64       `yaml:"percent" json:"percent,omitempty"`
	Reserve          float64       `yaml:"reserve" json:"reserve,omitempty"`
	TTL              time.Duration `yaml:"ttl" json:"ttl,omitempty"`
	MinRetriesPerSec int           `yaml:"min_retries_per_sec" json:"min_retries_per_sec,omitempty"`

	// Capacity, the costs and NoRetryIncrement are budget.QuotaConfig's.
	Capacity         int `yaml:"capacity" json:"capacity,omitempty"`
	RetryCost        int `yaml:"retry_cost" json:"retry_cost,omitempty"`
	TimeoutCost      int `yaml:"timeout_cost" json:"timeout_cost,omitempty"`
	ThrottleCost     int `yaml:"throttle_cost" json:"throttle_cost,omitempty"`
	NoRetryIncrement int `yaml:"no_retry_increment" json:"no_retry_increment,omitempty"`

	// K and Window are budget.AdaptiveConfig's.
	K      float64       `yaml:"k" json:"k,omitempty"`
	Window time.Duration `yaml:"window" json:"window,omitempty"`

	// Scope says who shares the budget across the replicas of a service:
	// ScopeReplica (or empty), each replica its own, or ScopeFleet, one
	// for them all. It applies to the kinds with state (share,
	// token-bucket, ratio, quota, adaptive). The simulator honours it for a client with
	// replicas; Build and Policy build one replica's policy, so to them
	// every scope is a fresh budget.
	Scope string `yaml:"scope" json:"scope,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// Breaker describes a breaker.Breaker: the fields of breaker.Settings, and
// zero fields mean its defaults, so the zero Breaker trips when 80 % of at
// least 50 outcomes in 10 s fail, or on a run of failures long for that
// volume, and stays open 30 s. In a file, "breaker: default"
// is shorthand for {} and "breaker: none" for no breaker.
type Breaker struct {
	// ConsecutiveFailures trips the breaker after this many failures in a
	// row, an explicit choice; zero means a run scaled to the window's
	// volume (breaker.DefaultRunMargin), a negative value no run trip.
	ConsecutiveFailures int `yaml:"consecutive_failures" json:"consecutive_failures,omitempty"`
	// Open is how long a tripped breaker refuses attempts; zero means 30 s.
	Open time.Duration `yaml:"open" json:"open,omitempty"`
	// FailureRate, in [0, 1], trips the breaker when the failures in Window
	// reach this share of at least MinRequests outcomes; zero means 80 %
	// when no other trip is set (consecutive_failures ≤ 0, no
	// slow_call_rate), and off otherwise.
	FailureRate float64       `yaml:"failure_rate" json:"failure_rate,omitempty"`
	Window      time.Duration `yaml:"window" json:"window,omitempty"`
	MinRequests int           `yaml:"min_requests" json:"min_requests,omitempty"`
	// MaxProbes and SuccessThreshold govern the half-open state.
	MaxProbes        int `yaml:"max_probes" json:"max_probes,omitempty"`
	SuccessThreshold int `yaml:"success_threshold" json:"success_threshold,omitempty"`
	// SlowCallRate, in [0, 1], trips the breaker when the calls slower
	// than SlowCallThreshold reach this share of at least MinRequests
	// outcomes in Window; zero means off (breaker.Settings.SlowCallRate).
	SlowCallRate      float64       `yaml:"slow_call_rate" json:"slow_call_rate,omitempty"`
	SlowCallThreshold time.Duration `yaml:"slow_call_threshold" json:"slow_call_threshold,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// Validate checks the spec and returns an *Error for the first problem,
// naming the field (and, for a spec read from a file, the line).
func (s *Spec) Validate() error {
	var c strictyaml.Checker
	s.check(&c)
	return c.Err()
}

func (s *Spec) check(c *strictyaml.Checker) {
	p := s.Pos
	if s.MaxAttempts < 0 {
		c.Errorf(p, "max_attempts", "must not be negative (0 means recoil's default, 3)")
	}
	nonNegative(c, p, num("max_server_wait", s.MaxServerWait), num("min_attempt", s.MinAttempt), num("timeout", s.Timeout),
		num("attempt_timeout", s.AttemptTimeout), num("idle_timeout", s.IdleTimeout))
	if s.Limit < 0 {
		c.Errorf(p, "limit", "must not be negative (0 means no cap)")
	}
	if s.Limit != 0 && s.Limiter != nil {
		c.Errorf(p, "limiter", "the policy sets limit as well: write one (limit: n is limiter: {capacity: n})")
	}
	if s.Priority != "" && !slices.Contains(priorities, s.Priority) {
		c.Errorf(p, "priority", "%s", notOneOf("a priority", s.Priority, priorities, nil))
	}
	if s.Hop < 0 || s.Hop > 1000 {
		c.Errorf(p, "hop", "the edge budget must be in [0, 1000]")
	}
	if s.Classify != "" && !slices.Contains(classifyModes, s.Classify) {
		c.Errorf(p, "classify", "%s", notOneOf("a classify mode", s.Classify, classifyModes, renamedClassify))
	}
	if s.Backoff != nil {
		s.Backoff.check(c, at(p, "backoff", s.Backoff.Pos))
	}
	if s.OverloadBackoff != nil {
		s.OverloadBackoff.check(c, at(p, "overload_backoff", s.OverloadBackoff.Pos))
	}
	if s.Budget != nil {
		s.Budget.check(c, at(p, "budget", s.Budget.Pos))
	}
	if s.Breaker != nil {
		s.Breaker.check(c, at(p, "breaker", s.Breaker.Pos))
	}
	if s.Limiter != nil {
		s.Limiter.check(c, at(p, "limiter", s.Limiter.Pos))
	}
	if s.Fallback != nil {
		s.Fallback.check(c, at(p, "fallback", s.Fallback.Pos))
	}
	if s.Hedge != nil {
		s.Hedge.check(c, at(p, "hedge", s.Hedge.Pos))
	}
}

// at is where field's mapping, of the mapping at parent, is: own when it
// was read from a file; else its path under parent (a mapping built in Go,
// or one a preset supplied), so that its problems still name the field.
func at(parent Pos, field string, own Pos) Pos {
	if own.Lines != nil {
		return own
	}
	line := parent.Line
	if l, ok := parent.Lines[field]; ok {
		line = l
	}
	return Pos{File: parent.File, Line: line, Path: strictyaml.Join(parent.Path, field)}
}

// notOneOf says that v is not one of want, naming the new spelling of a
// value that was renamed.
func notOneOf(what, v string, want []string, renamed map[string]string) string {
	if now, ok := renamed[v]; ok {
		return fmt.Sprintf("%q is now spelled %s (see docs/policy-language.md)", v, now)
	}
	if v == "" {
		return "missing: want one of " + strings.Join(want, ", ")
	}
	return fmt.Sprintf("%q is not %s (want one of %s)", v, what, strings.Join(want, ", "))
}

func (b *Backoff) check(c *strictyaml.Checker, p Pos) {
	if !slices.Contains(backoffKinds, b.Kind) {
		c.Errorf(p, "kind", "%s", notOneOf("a backoff kind", b.Kind, backoffKinds, renamedBackoff))
		return
	}
	if b.Kind != BackoffNone && b.Base <= 0 {
		c.Errorf(p, "base", "must be positive")
	}
	if b.Max < 0 {
		c.Errorf(p, "max", "must not be negative (0 means no cap)")
	}
	if !finite(b.Multiplier) || b.Multiplier < 0 {
		c.Errorf(p, "multiplier", "must not be negative (0 means 2)")
	}
	if b.Kind == BackoffDecorrelated && b.Multiplier != 0 {
		c.Errorf(p, "multiplier", "decorrelated jitter has no multiplier")
	}
	if !finite(b.Jitter) || b.Jitter < 0 || b.Jitter > 1 {
		c.Errorf(p, "jitter", "must be in [0, 1]")
	}
	if b.Jitter != 0 && b.Kind != BackoffProportional {
		c.Errorf(p, "jitter", "applies to the proportional backoff only")
	}
}

func (b *Budget) kind() string {
	if b.Kind == "" {
		return BudgetTokenBucket
	}
	return b.Kind
}

func (b *Budget) check(c *strictyaml.Checker, p Pos) {
	kind := b.kind()
	if !slices.Contains(budgetKinds, kind) {
		c.Errorf(p, "kind", "%s", notOneOf("a budget kind", kind, budgetKinds, nil))
		return
	}
	switch {
	case b.Scope != "" && !slices.Contains(budgetScopes, b.Scope):
		c.Errorf(p, "scope", "%s", notOneOf("a budget scope", b.Scope, budgetScopes, nil))
	case b.Scope == ScopeFleet && (kind == BudgetNone || kind == BudgetDefault):
		c.Errorf(p, "scope", "a budget of kind %s has no state to share: name the kind (share, token-bucket, ratio, quota or adaptive)", kind)
	}
	for _, q := range []struct {
		name, kind string
		set        bool
	}{
		{"max_tokens", BudgetTokenBucket, b.MaxTokens != 0}, {"token_ratio", BudgetTokenBucket, b.TokenRatio != 0},
		{"percent", BudgetRatio, b.Percent != 0 && kind != BudgetShare}, {"reserve", BudgetShare, b.Reserve != 0},
		{"ttl", BudgetRatio, b.TTL != 0}, {"min_retries_per_sec", BudgetRatio, b.MinRetriesPerSec != 0},
		{"capacity", BudgetQuota, b.Capacity != 0}, {"retry_cost", BudgetQuota, b.RetryCost != 0},
		{"timeout_cost", BudgetQuota, b.TimeoutCost != 0}, {"throttle_cost", BudgetQuota, b.ThrottleCost != 0},
		{"no_retry_increment", BudgetQuota, b.NoRetryIncrement != 0},
		{"k", BudgetAdaptive, b.K != 0}, {"window", BudgetAdaptive, b.Window != 0},
	} {
		if q.set && q.kind != kind {
			c.Errorf(p, q.name, "does not apply to a budget of kind %s (it is a %s parameter)", kind, q.kind)
		}
	}
	nonNegative(c, p, num("max_tokens", b.MaxTokens), num("token_ratio", b.TokenRatio), num("percent", b.Percent), num("reserve", b.Reserve), num("k", b.K),
		num("ttl", b.TTL), num("capacity", b.Capacity),
		num("retry_cost", b.RetryCost), num("timeout_cost", b.TimeoutCost), num("throttle_cost", b.ThrottleCost),
		num("no_retry_increment", b.NoRetryIncrement), num("window", b.Window))
	if _, err := b.build(nil); err != nil {
		refused(c, p, err)
	}
}

func (b *Breaker) check(c *strictyaml.Checker, p Pos) {
	if b.Open < 0 {
		c.Errorf(p, "open", "must not be negative")
	}
	if !finite(b.FailureRate) || b.FailureRate < 0 || b.FailureRate > 1 {
		c.Errorf(p, "failure_rate", "must be in [0, 1]")
	}
	if !finite(b.SlowCallRate) || b.SlowCallRate < 0 || b.SlowCallRate > 1 {
		c.Errorf(p, "slow_call_rate", "must be in [0, 1]")
	}
	if b.SlowCallThreshold < 0 {
		c.Errorf(p, "slow_call_threshold", "must not be negative")
	}
	nonNegative(c, p, num("window", b.Window), num("min_requests", b.MinRequests), num("max_probes", b.MaxProbes),
		num("success_threshold", b.SuccessThreshold))
	if _, err := b.build(); err != nil {
		refused(c, p, err)
	}
}

// refused records the field a constructor's *ConfigError names, under its
// name in a file, with what the field accepts; the checks above it catch
// most of what the constructors refuse first, in words of their own.
func refused(c *strictyaml.Checker, p Pos, err error) {
	var ce *breaker.ConfigError // the type budget and limit return too
	if !errors.As(err, &ce) {
		c.Errorf(p, "", "%v", err)
		return
	}
	_, field, _ := strings.Cut(ce.Field, ".")
	c.Errorf(p, snake(field), "is %v: must be %s", ce.Value, ce.Want)
}

// snake returns a Go field name as its name in a file: MinRetriesPerSec is
// min_retries_per_sec, TTL is ttl, OpenDuration is open.
func snake(field string) string {
	switch field {
	case "TTL":
		return "ttl"
	case "OpenDuration":
		return "open"
	}
	var sb strings.Builder
	for i, r := range field {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				sb.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// number is a field's name and value, for nonNegative.
type number struct {
	name string
	x    float64
}

// num is the field name with the value x: a count, a duration or a float.
func num[T ~int | ~int64 | ~float64](name string, x T) number { return number{name, float64(x)} }

// nonNegative records "must not be negative", in the order given, for each
// of fields that is below zero or not a finite number (c keeps the first).
func nonNegative(c *strictyaml.Checker, p Pos, fields ...number) {
	for _, f := range fields {
		if !finite(f.x) || f.x < 0 {
			c.Errorf(p, f.name, "must not be negative")
		}
	}
}
