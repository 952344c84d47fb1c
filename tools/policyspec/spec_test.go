package policyspec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

const ms = time.Millisecond

// clearPos drops where a spec was read from, to compare it with one built
// in Go.
func clearPos(s Spec) Spec {
	s.Pos = Pos{}
	for _, b := range []*Backoff{s.Backoff, s.OverloadBackoff} {
		if b != nil {
			b.Pos = Pos{}
		}
	}
	if s.Budget != nil {
		s.Budget.Pos = Pos{}
	}
	if s.Breaker != nil {
		s.Breaker.Pos = Pos{}
	}
	if s.Fallback != nil {
		s.Fallback.Pos = Pos{}
		for i := range s.Fallback.Targets {
			t := &s.Fallback.Targets[i]
			t.Pos = Pos{}
			if t.Breaker != nil {
				t.Breaker.Pos = Pos{}
			}
		}
	}
	if s.Hedge != nil {
		s.Hedge.Pos = Pos{}
	}
	return s
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Spec
	}{
		{"empty is recoil's default", "", Spec{}},
		{"every field", `
name: careful
max_attempts: 6
backoff: {kind: full-jitter, base: 100ms, max: 5s, multiplier: 1.5}
overload_backoff: {kind: proportional, base: 1s, jitter: 20%}
max_server_wait: 30s
min_attempt: 5ms
timeout: 10s
attempt_timeout: 2s
budget: {kind: token-bucket, max_tokens: 20, token_ratio: 0.05}
breaker: {consecutive_failures: 3, open: 2s, failure_rate: 0.5, window: 10s, min_requests: 20, max_probes: 2, success_threshold: 2}
limit: 24
classify: timeouts
hop: 2
idle_timeout: 15s
`, Spec{Name: "careful", MaxAttempts: 6,
			Backoff:         &Backoff{Kind: BackoffFullJitter, Base: 100 * ms, Max: 5 * time.Second, Multiplier: 1.5},
			OverloadBackoff: &Backoff{Kind: BackoffProportional, Base: time.Second, Jitter: 0.2},
			MaxServerWait:   30 * time.Second, MinAttempt: 5 * ms, Timeout: 10 * time.Second, AttemptTimeout: 2 * time.Second,
			Budget:  &Budget{Kind: BudgetTokenBucket, MaxTokens: 20, TokenRatio: 0.05},
			Breaker: &Breaker{ConsecutiveFailures: 3, Open: 2 * time.Second, FailureRate: 0.5, Window: 10 * time.Second, MinRequests: 20, MaxProbes: 2, SuccessThreshold: 2},
			Limit:   24, Classify: ClassifyTimeouts, Hop: 2, IdleTimeout: 15 * time.Second}},
		{"shorthands", "backoff: none\nbudget: none\nbreaker: default\n",
			Spec{Backoff: &Backoff{Kind: BackoffNone}, Budget: &Budget{Kind: BudgetNone}, Breaker: &Breaker{}}},
		{"a budget without a kind is a token bucket", "budget: {max_tokens: 5}\n", Spec{Budget: &Budget{MaxTokens: 5}}},
		{"the other budgets", "budget: {kind: quota, capacity: 500, retry_cost: 5, timeout_cost: 10, throttle_cost: 5, no_retry_increment: 1}\n",
			Spec{Budget: &Budget{Kind: BudgetQuota, Capacity: 500, RetryCost: 5, TimeoutCost: 10, ThrottleCost: 5, NoRetryIncrement: 1}}},
		{"ratio", "budget: {kind: ratio, percent: 0.2, ttl: 10s, min_retries_per_sec: -1}\n",
			Spec{Budget: &Budget{Kind: BudgetRatio, Percent: 0.2, TTL: 10 * time.Second, MinRetriesPerSec: -1}}},
		{"adaptive", "budget: {kind: adaptive, k: 1.1, window: 2m}\n", Spec{Budget: &Budget{Kind: BudgetAdaptive, K: 1.1, Window: 2 * time.Minute}}},
		{"a fleet-wide budget", "budget: {kind: ratio, scope: fleet}\n", Spec{Budget: &Budget{Kind: BudgetRatio, Scope: ScopeFleet}}},
		{"a budget per replica", "budget: {scope: replica}\n", Spec{Budget: &Budget{Scope: ScopeReplica}}},
		{"null is left out", "max_attempts: ~\nbackoff:\n", Spec{}},
		{"an anchor for both schedules", "backoff: &b {kind: constant, base: 5ms}\noverload_backoff: *b\n",
			Spec{Backoff: &Backoff{Kind: BackoffConstant, Base: 5 * ms}, OverloadBackoff: &Backoff{Kind: BackoffConstant, Base: 5 * ms}}},
		{"a preset, changed", "max_attempts: 2\npreset: full-jitter\nbudget: default\n", func() Spec {
			s, _ := Preset(PresetFullJitter)
			s.Name, s.MaxAttempts, s.Budget = "", 2, &Budget{Kind: BudgetDefault}
			return s
		}()},
		{"a slow-call breaker", "breaker: {consecutive_failures: -1, slow_call_rate: 0.5, slow_call_threshold: 10s}\n",
			Spec{Breaker: &Breaker{ConsecutiveFailures: -1, SlowCallRate: 0.5, SlowCallThreshold: 10 * time.Second}}},
		{"breaker none undoes the preset's", "preset: default\nbreaker: none\nname: mine\n", Spec{Name: "mine"}},
		{"a fallback chain", `
fallback:
  targets:
    - primary
    - {name: second-key, upstream: provider-b, breaker: {consecutive_failures: 3, open: 30s}}
    - name: self-hosted
      max_context: 32000
  cooldown: 5s
`, Spec{Fallback: &Fallback{Cooldown: 5 * time.Second, Targets: []Target{
			{Name: "primary"},
			{Name: "second-key", Upstream: "provider-b", Breaker: &Breaker{ConsecutiveFailures: 3, Open: 30 * time.Second}},
			{Name: "self-hosted", MaxContext: 32000},
		}}}},
		{"the gateways' retries per target", "fallback: {targets: [a, b], retries: per-target}\n",
			Spec{Fallback: &Fallback{Targets: []Target{{Name: "a"}, {Name: "b"}}, Retries: RetriesPerTarget}}},
		{"a hedge", "hedge: {delay: 300ms, quantile: 95%, max_hedges: 2}\n", Spec{Hedge: &Hedge{Delay: 300 * ms, Quantile: 0.95, MaxHedges: 2}}},
		{"an empty hedge is recoil's default hedge", "hedge: {}\n", Spec{Hedge: &Hedge{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := clearPos(got); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestParseErrors: every problem names the file, the line and the field,
// and says what is wrong.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the whole error
	}{
		{"syntax", "backoff: [1s\n", "p.yaml:1: did not find expected ',' or ']'"},
		{"not a mapping", "- 1\n", "p.yaml:1: want a mapping, got a list"},
		{"unknown field", "max_attempts: 3\nmax_attemps: 4\n", `p.yaml:2: max_attemps: unknown field "max_attemps" (want one of attempt_timeout, backoff, breaker, budget, classify, fallback, hedge, hop, idle_timeout, limit, limiter, max_attempts, max_server_wait, min_attempt, name, overload_backoff, preset, priority, timeout)`},
		{"twice", "timeout: 1s\ntimeout: 2s\n", "p.yaml:2: timeout: given twice (first on line 1)"},
		{"not a whole number", "max_attempts: many\n", `p.yaml:1: max_attempts: want a whole number, got "many"`},
		{"negative attempts", "max_attempts: -1\n", "p.yaml:1: max_attempts: must not be negative (0 means recoil's default, 3)"},
		{"not a duration", "timeout: soon\n", `p.yaml:1: timeout: want a duration such as 200ms or 1m30s, got "soon"`},
		{"negative duration", "timeout: -1s\n", "p.yaml:1: timeout: must not be negative"},
		{"unknown kind", "max_attempts: 3\nbackoff:\n  kind: shaken\n", `p.yaml:3: backoff.kind: "shaken" is not a backoff kind (want one of constant, decorrelated, equal-jitter, exponential, full-jitter, none, proportional)`},
		{"kind missing", "backoff: {base: 1s}\n", "p.yaml:1: backoff.kind: missing: want one of constant, decorrelated, equal-jitter, exponential, full-jitter, none, proportional"},
		{"kind as shorthand", "backoff: fast\n", `p.yaml:1: backoff.kind: "fast" is not a backoff kind (want one of constant, decorrelated, equal-jitter, exponential, full-jitter, none, proportional)`},
		{"base missing", "overload_backoff:\n  kind: full-jitter\n", "p.yaml:2: overload_backoff.base: must be positive"},
		{"backoff field", "backoff:\n  kind: constant\n  bsae: 1s\n", `p.yaml:3: backoff.bsae: unknown field "bsae" (want one of base, jitter, kind, max, multiplier)`},
		{"jitter of another kind", "backoff: {kind: full-jitter, base: 1s, jitter: 0.5}\n", "p.yaml:1: backoff.jitter: applies to the proportional backoff only"},
		{"jitter out of range", "backoff: {kind: proportional, base: 1s, jitter: 2}\n", "p.yaml:1: backoff.jitter: must be in [0, 1]"},
		{"decorrelated multiplier", "backoff: {kind: decorrelated, base: 1s, multiplier: 3}\n", "p.yaml:1: backoff.multiplier: decorrelated jitter has no multiplier"},
		{"budget word", "budget: some\n", `p.yaml:1: budget.kind: "some" is not a budget kind (want one of adaptive, default, none, quota, ratio, share, token-bucket)`},
		{"budget parameter of another kind", "budget:\n  kind: ratio\n  max_tokens: 5\n", "p.yaml:3: budget.max_tokens: does not apply to a budget of kind ratio (it is a token-bucket parameter)"},
		{"budget negative", "budget: {token_ratio: -0.1}\n", "p.yaml:1: budget.token_ratio: must not be negative"},
		{"budget above its bound", "budget: {max_tokens: 5000}\n", "p.yaml:1: budget.max_tokens: is 5000: must be 0 (the default) to 1000"},
		{"ratio reserve above its bound", "budget: {kind: ratio, ttl: 1h, min_retries_per_sec: 1000000000}\n", "p.yaml:1: budget.min_retries_per_sec: is 1000000000: must be a reserve, MinRetriesPerSec·TTL, of at most 2^40 retries"},
		{"budget scope", "budget:\n  kind: ratio\n  scope: cluster\n", `p.yaml:3: budget.scope: "cluster" is not a budget scope (want one of fleet, replica)`},
		{"budget scope of none", "budget: {kind: none, scope: fleet}\n", "p.yaml:1: budget.scope: a budget of kind none has no state to share: name the kind (share, token-bucket, ratio, quota or adaptive)"},
		{"budget scope of default", "budget:\n  kind: default\n  scope: fleet\n", "p.yaml:3: budget.scope: a budget of kind default has no state to share: name the kind (share, token-bucket, ratio, quota or adaptive)"},
		{"breaker word", "breaker: sometimes\n", `p.yaml:1: breaker: want none, default or a mapping of settings, got "sometimes"`},
		{"breaker field", "breaker:\n  open: 1s\n  opn: 2s\n", `p.yaml:3: breaker.opn: unknown field "opn" (want one of consecutive_failures, failure_rate, max_probes, min_requests, open, slow_call_rate, slow_call_threshold, success_threshold, window)`},
		{"failure rate", "breaker: {failure_rate: 1.5}\n", "p.yaml:1: breaker.failure_rate: must be in [0, 1]"},
		{"slow call rate", "breaker: {slow_call_rate: 2}\n", "p.yaml:1: breaker.slow_call_rate: must be in [0, 1]"},
		{"slow call threshold", "breaker: {slow_call_rate: 0.5, slow_call_threshold: -1s}\n", "p.yaml:1: breaker.slow_call_threshold: must not be negative"},
		{"a slow threshold without a rate", "breaker: {slow_call_threshold: 10s}\n", "p.yaml:1: breaker.slow_call_rate: is 0: must be above 0 when SlowCallThreshold is set"},
		{"classify", "classify: maybe\n", `p.yaml:1: classify: "maybe" is not a classify mode (want one of default, retry-everything, timeouts)`},
		{"limit", "limit: -2\n", "p.yaml:1: limit: must not be negative (0 means no cap)"},
		{"hop", "hop: 5000\n", "p.yaml:1: hop: the edge budget must be in [0, 1000]"},
		{"limiter word", "limiter: elastic\n", `p.yaml:1: limiter.kind: "elastic" is not a limiter kind (want one of adaptive, fixed)`},
		{"limiter field", "limiter:\n  kind: adaptive\n  mn: 2\n", `p.yaml:3: limiter.mn: unknown field "mn" (want one of capacity, decrease, initial, kind, long_window, max, max_queue, max_wait, min, reserve, smoothing, tolerance, warmup, window, window_samples)`},
		{"limiter parameter of another kind", "limiter:\n  capacity: 4\n  min: 2\n", "p.yaml:3: limiter.min: does not apply to a limiter of kind fixed (it is a parameter of the adaptive kind)"},
		{"adaptive parameter on fixed", "limiter: {kind: adaptive, capacity: 4}\n", "p.yaml:1: limiter.capacity: does not apply to a limiter of kind adaptive (it is a parameter of the fixed kind)"},
		{"limiter negative", "limiter: {kind: adaptive, window: -1s}\n", "p.yaml:1: limiter.window: must not be negative"},
		{"limiter min above max", "limiter:\n  kind: adaptive\n  min: 50\n  max: 10\n", "p.yaml:3: limiter.min: is 50: must be at most Max"},
		{"limiter decrease", "limiter: {kind: adaptive, decrease: 1.5}\n", "p.yaml:1: limiter.decrease: is 1.5: must be in (0, 1) (0 means 0.8)"},
		{"limiter initial outside", "limiter: {kind: adaptive, initial: 5, min: 10}\n", "p.yaml:1: limiter.initial: is 5: must be in [Min, Max]"},
		{"limit and limiter", "limit: 4\nlimiter: adaptive\n", "p.yaml:2: limiter: the policy sets limit as well: write one (limit: n is limiter: {capacity: n})"},
		{"priority", "priority: urgent\n", `p.yaml:1: priority: "urgent" is not a priority (want one of background, interactive)`},
		{"unknown preset", "preset: hurried\n", `p.yaml:1: preset: unknown preset "hurried" (want one of immediate, wrapper, exponential, full-jitter, default, interactive, background)`},
		{"preset not a name", "preset: {a: 1}\n", "p.yaml:1: preset: want a string, got a mapping"},
		{"a second document", "name: a\n---\nname: b\n", "p.yaml:2: a file holds one YAML document"},
		{"fallback without targets", "name: p\nfallback: {cooldown: 1s}\n", "p.yaml:2: fallback.targets: missing: a fallback needs at least one target"},
		{"fallback not a mapping", "fallback: [a, b]\n", "p.yaml:1: fallback: want a mapping, got a list"},
		{"targets not a list", "fallback:\n  targets: a\n", `p.yaml:2: fallback.targets: want a list, got "a"`},
		{"a target twice", "fallback:\n  targets:\n    - a\n    - b\n    - a\n", `p.yaml:5: fallback.targets[2].name: target "a" is listed twice (first as target 1)`},
		{"a target without a name", "fallback:\n  targets:\n    - {name: a}\n    - {upstream: b}\n", "p.yaml:4: fallback.targets[1].name: missing: each target needs a name"},
		{"a target's unknown field", "fallback:\n  targets:\n    - name: a\n      max_ctx: 8000\n", `p.yaml:4: fallback.targets[0].max_ctx: unknown field "max_ctx" (want one of breaker, max_context, name, upstream)`},
		{"a target's context", "fallback:\n  targets:\n    - {name: a, max_context: -1}\n", "p.yaml:3: fallback.targets[0].max_context: must not be negative (0 means unknown)"},
		{"a target's breaker", "fallback:\n  targets:\n    - name: a\n      breaker:\n        failure_rate: 2\n", "p.yaml:5: fallback.targets[0].breaker.failure_rate: must be in [0, 1]"},
		{"a target's breaker word", "fallback:\n  targets:\n    - {name: a, breaker: often}\n", `p.yaml:3: fallback.targets[0].breaker: want none, default or a mapping of settings, got "often"`},
		{"cooldown", "fallback:\n  targets: [a]\n  cooldown: -1s\n", "p.yaml:3: fallback.cooldown: must not be negative (0 means recoil's default, 15s)"},
		{"retries", "fallback:\n  targets: [a]\n  retries: nested\n", `p.yaml:3: fallback.retries: "nested" is not a way of retrying a chain (want one of per-target, shared)`},
		{"hedge not a mapping", "hedge: fast\n", `p.yaml:1: hedge: want a mapping, got "fast"`},
		{"hedge field", "hedge:\n  quantile: 0.9\n  dealy: 1s\n", `p.yaml:3: hedge.dealy: unknown field "dealy" (want one of delay, max_hedges, quantile)`},
		{"hedge quantile", "hedge:\n  quantile: 1\n", "p.yaml:2: hedge.quantile: must be in [0, 1): 0.95 races the slowest 5 %; 0 means the fixed delay"},
		{"hedge delay", "hedge: {delay: -1s}\n", "p.yaml:1: hedge.delay: must not be negative"},
		{"max hedges", "hedge: {max_hedges: -1}\n", "p.yaml:1: hedge.max_hedges: must not be negative (0 means 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse error\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}

// TestRenamed: a spelling from before the one language is an error that
// names the new spelling, on the line that used the old one.
func TestRenamed(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"name: p\nattempts: 5\n", `p.yaml:2: attempts: "attempts" is now spelled max_attempts (see docs/policy-language.md)`},
		{"retry_everything: true\n", `p.yaml:1: retry_everything: "retry_everything" is now spelled classify: retry-everything (see docs/policy-language.md)`},
		{"backoff: {kind: full, base: 60ms}\n", `p.yaml:1: backoff.kind: "full" is now spelled full-jitter (see docs/policy-language.md)`},
		{"backoff: {kind: equal, base: 5ms}\n", `p.yaml:1: backoff.kind: "equal" is now spelled equal-jitter (see docs/policy-language.md)`},
		{"backoff:\n  kind: exponential\n  base: 5ms\n  cap: 2s\n", `p.yaml:4: backoff.cap: "cap" is now spelled max (see docs/policy-language.md)`},
		{"budget: {kind: token-bucket, tokens: 4}\n", `p.yaml:1: budget.tokens: "tokens" is now spelled max_tokens (see docs/policy-language.md)`},
		{"budget: {ratio: 0.5}\n", `p.yaml:1: budget.ratio: "ratio" is now spelled token_ratio (see docs/policy-language.md)`},
		{"budget: {kind: ratio, min_per_sec: 1}\n", `p.yaml:1: budget.min_per_sec: "min_per_sec" is now spelled min_retries_per_sec (see docs/policy-language.md)`},
		{"breaker: {failures: 3, open: 1s}\n", `p.yaml:1: breaker.failures: "failures" is now spelled consecutive_failures (see docs/policy-language.md)`},
		{"classify: classify\n", `p.yaml:1: classify: "classify" is now spelled default (see docs/policy-language.md)`},
	}
	for _, tt := range tests {
		_, err := Parse("p.yaml", []byte(tt.src))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q)\n got %v\nwant %s", tt.src, err, tt.want)
		}
	}
}

// TestValidateBuiltInGo: a Spec built in Go is checked the same way, with
// the field named and no line.
func TestValidateBuiltInGo(t *testing.T) {
	tests := []struct {
		s    Spec
		want string
	}{
		{Spec{}, ""},
		{Spec{Backoff: &Backoff{Kind: "full"}}, `backoff.kind: "full" is now spelled full-jitter (see docs/policy-language.md)`},
		{Spec{OverloadBackoff: &Backoff{Kind: BackoffExponential}}, "overload_backoff.base: must be positive"},
		{Spec{Budget: &Budget{Kind: BudgetAdaptive, Percent: 0.1}}, "budget.percent: does not apply to a budget of kind adaptive (it is a ratio parameter)"},
		{Spec{Breaker: &Breaker{MinRequests: -1}}, "breaker.min_requests: must not be negative"},
		{Spec{Timeout: -time.Second}, "timeout: must not be negative"},
		{Spec{Fallback: &Fallback{}}, "fallback.targets: missing: a fallback needs at least one target"},
		{Spec{Fallback: &Fallback{Targets: []Target{{Name: "a"}, {}}}}, "fallback.targets[1].name: missing: each target needs a name"},
		{Spec{Fallback: &Fallback{Targets: []Target{{Name: "a", Breaker: &Breaker{Open: -1}}}}}, "fallback.targets[0].breaker.open: must not be negative"},
		{Spec{Hedge: &Hedge{Quantile: -0.5}}, "hedge.quantile: must be in [0, 1): 0.95 races the slowest 5 %; 0 means the fixed delay"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Validate(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestPresets(t *testing.T) {
	for _, name := range Presets() {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != name || PresetAbout(name) == "" {
			t.Errorf("Preset(%q) is named %q, about %q", name, s.Name, PresetAbout(name))
		}
		if err := s.Validate(); err != nil {
			t.Errorf("Preset(%q) does not validate: %v", name, err)
		}
		// Fresh pointers on every call: changing one changes no other.
		again, _ := Preset(name)
		if s.Backoff != nil && s.Backoff == again.Backoff || s.Breaker != nil && s.Breaker == again.Breaker {
			t.Errorf("Preset(%q) shares its pointers between calls", name)
		}
		// A file naming the preset and nothing else is the preset.
		got, err := Parse("p.yaml", []byte("preset: "+name+"\nname: "+name+"\n"))
		if err != nil || !reflect.DeepEqual(clearPos(got), s) {
			t.Errorf("preset: %s = %+v, %v; want %+v", name, got, err, s)
		}
	}
	if _, err := Preset("hurried"); !errors.Is(err, ErrUnknownPreset) {
		t.Errorf("Preset(hurried) = %v, want ErrUnknownPreset", err)
	}
	if PresetAbout("hurried") != "" {
		t.Error("PresetAbout(hurried) is not empty")
	}
}

// TestBuild: each field lands in the recoil.Policy field of the same name,
// and each call gives fresh state.
func TestBuild(t *testing.T) {
	s, err := Parse("p.yaml", []byte(`
max_attempts: 4
backoff: {kind: exponential, base: 10ms, max: 1s}
overload_backoff: {kind: decorrelated, base: 1s, max: 20s}
max_server_wait: 5s
min_attempt: 1ms
timeout: 3s
attempt_timeout: 500ms
budget: {kind: adaptive, k: 2}
breaker: {consecutive_failures: 2}
limit: 3
classify: retry-everything
`))
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	p := s.Policy(rnd)
	if p.MaxAttempts != 4 || p.MaxServerWait != 5*time.Second || p.MinAttempt != ms || p.Timeout != 3*time.Second || p.AttemptTimeout != 500*ms {
		t.Errorf("Policy's plain fields = %+v", p)
	}
	if want := (backoff.Exponential{Base: 10 * ms, Max: time.Second}); p.Backoff != want {
		t.Errorf("Backoff = %#v, want %#v", p.Backoff, want)
	}
	if want := (backoff.Decorrelated{Base: time.Second, Max: 20 * time.Second}); p.OverloadBackoff != want {
		t.Errorf("OverloadBackoff = %#v, want %#v", p.OverloadBackoff, want)
	}
	if _, ok := p.Budget.(*budget.Adaptive); !ok {
		t.Errorf("Budget = %T, want *budget.Adaptive", p.Budget)
	}
	if _, ok := p.Breaker.(*breaker.Breaker); !ok {
		t.Errorf("Breaker = %T, want *breaker.Breaker", p.Breaker)
	}
	if _, ok := p.Limiter.(*limit.Limiter); !ok {
		t.Errorf("Limiter = %T, want *limit.Limiter", p.Limiter)
	}
	if p.Rand != rnd || p.Classify == nil {
		t.Errorf("Rand %v, Classify set %v; want the source given and a classifier", p.Rand, p.Classify != nil)
	}
	if q := s.Policy(nil); q.Budget == p.Budget || q.Breaker == p.Breaker || q.Limiter == p.Limiter || q.Rand != nil {
		t.Error("two policies from one spec share state, or a nil source was set")
	}
	zero := (&Spec{}).Policy(nil)
	if zero.MaxAttempts != 0 || zero.Backoff != nil || zero.Budget != nil || zero.Breaker != nil || zero.Limiter != nil || zero.Classify != nil {
		t.Errorf("the zero Spec's policy is not the zero Policy: %+v", zero)
	}
}

func TestBudgetKinds(t *testing.T) {
	tests := []struct {
		b    Budget
		want string
	}{
		{Budget{Kind: BudgetNone}, "recoil.noBudget"},
		{Budget{Kind: BudgetDefault}, "<nil>"},
		{Budget{}, "*budget.TokenBucket"},
		{Budget{Kind: BudgetTokenBucket, MaxTokens: 4}, "*budget.TokenBucket"},
		{Budget{Kind: BudgetRatio}, "*budget.Ratio"},
		{Budget{Kind: BudgetQuota}, "*budget.Quota"},
		{Budget{Kind: BudgetAdaptive}, "*budget.Adaptive"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%T", tt.b.New(nil)); got != tt.want {
			t.Errorf("%+v.New() = %s, want %s", tt.b, got, tt.want)
		}
	}
}

func TestSchedules(t *testing.T) {
	tests := []struct {
		b    Backoff
		want backoff.Schedule
	}{
		{Backoff{Kind: BackoffNone}, backoff.None{}},
		{Backoff{Kind: BackoffConstant, Base: ms}, backoff.Constant(ms)},
		{Backoff{Kind: BackoffExponential, Base: ms, Max: 2 * ms, Multiplier: 3}, backoff.Exponential{Base: ms, Max: 2 * ms, Multiplier: 3}},
		{Backoff{Kind: BackoffFullJitter, Base: ms, Max: 2 * ms}, backoff.FullJitter{Base: ms, Max: 2 * ms}},
		{Backoff{Kind: BackoffEqualJitter, Base: ms}, backoff.EqualJitter{Base: ms}},
		{Backoff{Kind: BackoffDecorrelated, Base: ms, Max: 9 * ms}, backoff.Decorrelated{Base: ms, Max: 9 * ms}},
		{Backoff{Kind: BackoffProportional, Base: ms, Jitter: 0.2}, backoff.Proportional{Base: ms, Jitter: 0.2}},
	}
	for _, tt := range tests {
		if got := tt.b.Schedule(); got != tt.want {
			t.Errorf("%+v.Schedule() = %#v, want %#v", tt.b, got, tt.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

var _ net.Error = (*netErr)(nil)

type netErr struct{ timeoutErr }

func (netErr) Temporary() bool { return false }

// TestClassifyModes: the Policy.Classify of each mode, on the errors any
// driver passes it.
func TestClassifyModes(t *testing.T) {
	permanent := recoil.Permanent(errors.New("validator said no"))
	throttled := recoil.RetryAfter(errors.New("429"), time.Second)
	tests := []struct {
		mode string
		err  error
		want recoil.Class
		tmo  bool
	}{
		{ClassifyRetryEverything, permanent, recoil.ClassTransient, false},
		{ClassifyRetryEverything, throttled, recoil.ClassTransient, false},
		{ClassifyRetryEverything, context.DeadlineExceeded, recoil.ClassTransient, true},
		{ClassifyRetryEverything, context.Canceled, recoil.ClassCanceled, false},
		{ClassifyTimeouts, permanent, recoil.ClassPermanent, false},
		{ClassifyTimeouts, errors.New("connection refused"), recoil.ClassPermanent, false},
		{ClassifyTimeouts, netErr{}, recoil.ClassUnknown, false}, // no opinion: the driver's rules say timeout
		{ClassifyTimeouts, context.DeadlineExceeded, recoil.ClassUnknown, false},
		{ClassifyTimeouts, context.Canceled, recoil.ClassUnknown, false},
	}
	for _, tt := range tests {
		p := (&Spec{Classify: tt.mode}).Policy(nil)
		v := p.Classify(tt.err)
		if v.Class != tt.want || v.Timeout != tt.tmo {
			t.Errorf("%s(%v) = %v (timeout %v), want %v (timeout %v)", tt.mode, tt.err, v.Class, v.Timeout, tt.want, tt.tmo)
		}
		if v.Class == recoil.ClassTransient && v.Wait != 0 {
			t.Errorf("%s(%v) kept the server's wait %v", tt.mode, tt.err, v.Wait)
		}
	}
	if p := (&Spec{Classify: ClassifyDefault}).Policy(nil); p.Classify != nil {
		t.Error("the default mode set a Classify")
	}
}

// TestBuildFallbackAndHedge: a chain becomes a recoil.Fallback whose
// targets carry their upstreams as Values and breakers of their own, fresh
// for every policy; a chain that retries per target is no recoil.Fallback;
// a hedge becomes a recoil.Hedge.
func TestBuildFallbackAndHedge(t *testing.T) {
	s, err := Parse("p.yaml", []byte(`
fallback:
  targets:
    - primary
    - {name: second, upstream: provider-b, max_context: 8000, breaker: {consecutive_failures: 2}}
  cooldown: 3s
hedge: {delay: 200ms, quantile: 0.9, max_hedges: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, q := s.Policy(nil), s.Policy(nil)
	f := p.Fallback
	if f == nil || len(f.Targets) != 2 || f.Cooldown != 3*time.Second {
		t.Fatalf("Fallback = %+v", f)
	}
	if a, b := f.Targets[0], f.Targets[1]; a.Name != "primary" || a.Value != "primary" || a.Breaker != nil ||
		b.Name != "second" || b.Value != "provider-b" || b.MaxContext != 8000 || b.Breaker == nil {
		t.Errorf("targets = %+v, %+v", a, b)
	}
	if q.Fallback == f || q.Fallback.Targets[1].Breaker == f.Targets[1].Breaker {
		t.Error("two policies from one spec share a Fallback or a target's breaker")
	}
	if h := p.Hedge; h == nil || h.Delay != 200*ms || h.Quantile != 0.9 || h.MaxHedges != 2 || q.Hedge == h {
		t.Errorf("Hedge = %+v, or shared between policies", h)
	}
	s.Fallback.Retries = RetriesPerTarget
	if p := s.Policy(nil); p.Fallback != nil || !s.Fallback.PerTarget() {
		t.Errorf("a chain retried per target built a recoil.Fallback: %+v", p.Fallback)
	}
	if (*Fallback)(nil).PerTarget() {
		t.Error("no chain retries per target")
	}
}

// TestDoHonoursTheSpec: a policy from a file drives recoil.Do as written.
func TestDoHonoursTheSpec(t *testing.T) {
	s, err := Parse("p.yaml", []byte("max_attempts: 4\nbackoff: none\nbudget: none\nclassify: retry-everything\n"))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = recoil.Do(t.Context(), s.Policy(nil), func(context.Context) error {
		calls++
		return recoil.Permanent(errors.New("400"))
	})
	if calls != 4 || !errors.Is(err, recoil.ErrAttemptsExhausted) {
		t.Errorf("Do made %d attempts and returned %v; want 4 and ErrAttemptsExhausted", calls, err)
	}
}

// TestPresetsMatchRecoil: the interactive and background presets are
// recoil.Interactive() and recoil.Background(), field for field, so the
// tools run the policies the library ships.
func TestPresetsMatchRecoil(t *testing.T) {
	for name, want := range map[string]*recoil.Policy{PresetInteractive: recoil.Interactive(), PresetBackground: recoil.Background()} {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Policy(nil)
		if got.MaxAttempts != want.MaxAttempts || got.Timeout != want.Timeout || got.MaxServerWait != want.MaxServerWait ||
			got.Priority != want.Priority || got.Backoff != want.Backoff || got.OverloadBackoff != want.OverloadBackoff {
			t.Errorf("%s: preset %+v, want recoil's %+v", name, got, want)
		}
		if (got.Budget == nil) != (want.Budget == nil) {
			t.Errorf("%s: budget %v, want %v", name, got.Budget, want.Budget)
		} else if want.Budget != nil && !reflect.DeepEqual(got.Budget, want.Budget) {
			t.Errorf("%s: budget %+v, want %+v", name, got.Budget, want.Budget)
		}
	}
}
