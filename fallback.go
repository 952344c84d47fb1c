package recoil

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A Target is one upstream a call may be sent to: a model, an API key, a
// region, a self-hosted server. A Fallback orders them; the driver knows
// how to reach each (Value).
type Target struct {
	// Name identifies the target in errors, summaries, events and
	// Fallback.Restore; "" is shown as "target N".
	Name string
	// Breaker, if set, is the target's own circuit breaker, asked before
	// each attempt to it besides the policy's: a target whose breaker is
	// open is passed over for the next.
	Breaker Breaker
	// Allowance, if set, is the target's own allowance (a fleet.Guard, a
	// per-key rate limit): its AdmitAt is asked before the call's first
	// attempt to the target, its RetryAt before each further one, and a
	// refusal passes the target over, cooling it down. It hears every
	// attempt's outcome.
	Allowance Budget
	// MaxContext is the longest input the target accepts, in the
	// provider's units (tokens); zero means unknown. After a "context too
	// long" failure the call moves only to a target declaring more than the
	// one that refused.
	MaxContext int
	// Value is what the driver needs to reach the target: a
	// *recoilhttp.Endpoint for the HTTP Transport, anything for DoTarget.
	Value any
}

// Durations a FallbackRule may give in Leave.Cool.
const (
	// CoolForever keeps a target out of every later call until
	// Fallback.Restore: a revoked key or an exhausted quota does not heal
	// by waiting.
	CoolForever time.Duration = -1
	// DefaultCooldown is how long a target that was overloaded, rate
	// limited or out of allowance is passed over when the Fallback's
	// Cooldown is zero: long enough for a provider's capacity to turn over
	// (LiteLLM's router cools a deployment for seconds; a 529 storm lasts
	// longer), short enough that a recovered primary is back within a
	// minute.
	DefaultCooldown = 15 * time.Second
	// RetiredCooldown is how long DefaultFallbackRule passes over a target
	// that answered "model not found": a retired model stays retired, but
	// a 404 from a misrouted deployment should not outlive its fix by
	// much.
	RetiredCooldown = 10 * time.Minute
)

// The reasons recoil gives for leaving or passing over a target, in
// TargetReport.Left and AttemptEvent.Left: DefaultFallbackRule's, then the
// Fallback's own for a target passed over without an attempt. A target
// tried as the last resort after cooling down and refused then reads
// WhyCooling + ", then " + the refusal.
const (
	WhyRetired     = "model not found"
	WhyKeyRefused  = "key refused"
	WhyQuota       = "quota exhausted"
	WhyContext     = "context too long"
	WhyOverloaded  = "overloaded"
	WhyThrottled   = "rate limited"
	WhyCircuitOpen = "circuit open"
	WhyAllowance   = "allowance exhausted"
	WhyCooling     = "cooling down"
	WhyOut         = "out until restored"
	// WhyMovedOn is the reason of a move whose custom rule gave no Why.
	WhyMovedOn = "moved on"
)

// Leave is a FallbackRule's answer about one failure: whether the call
// leaves its target for the next, and how long later calls pass the target
// over.
type Leave struct {
	// Move sends the call's next attempt to the next target, at once (no
	// backoff: a different upstream is not the one that failed). It
	// applies only when a target the call may use remains; otherwise the
	// failure is decided as without a Fallback (a permanent one stops, a
	// retryable one waits and retries the same target).
	Move bool
	// Cool passes the target over in later calls for that long, whether or
	// not this call moves: zero not at all, CoolForever until
	// Fallback.Restore. A call passes a cooling target over while another
	// remains; when every target is cooling it tries the one that cools
	// soonest.
	Cool time.Duration
	// Longer moves the call only to a target whose MaxContext is larger
	// than this one's (the request is too long for it), passing shorter
	// ones over; a target there that is too short as well moves it on
	// again, to a longer one still (8k, then 32k, then 128k), within the
	// policy's MaxAttempts.
	Longer bool
	// Why says why, in a few words ("model not found"); it reaches
	// TargetReport.Left and AttemptEvent.Left.
	Why string
}

// A FallbackRule decides, for a failed attempt's verdict, whether the call
// leaves its target. cooldown is the Fallback's (its Cooldown, or
// DefaultCooldown) for rules that scale from it.
type FallbackRule func(v Verdict, cooldown time.Duration) Leave

// Error codes DefaultFallbackRule reads from Verdict.Code: recoil's own
// status codes (StatusVerdict) and the providers' error types and codes.
var (
	retiredCodes = []string{"not_found", "model_not_found", "not_found_error"}
	revokedCodes = []string{"unauthorized", "forbidden", "invalid_api_key", "authentication_error",
		"permission_error", "permission_denied", "invalid_authentication", "account_deactivated"}
	quotaCodes   = []string{"payment_required", "insufficient_quota", "credit_balance_exhausted", "billing_error"}
	contextCodes = []string{"context_length_exceeded", "context_too_long", "too_large", "request_too_large"}
)

// DefaultFallbackRule is the rule of a Fallback whose Rule is nil. By the
// verdict's code first, then its class:
//
//   - model not found (404, model_not_found): move, and pass the target
//     over for RetiredCooldown;
//   - a key refused (401, 403, invalid_api_key, authentication_error,
//     permission_error): move, and keep the target out until Restore;
//   - a quota exhausted (402, insufficient_quota, credit_balance_exhausted,
//     billing_error): move, out until Restore;
//   - the request too long (413, context_length_exceeded): move to the next
//     target declaring a longer MaxContext, and on to a longer one still
//     each time it is too short as well; the target stays in for others;
//   - overloaded (503, 529): move, and cool the target for the server's
//     wait or cooldown, whichever is longer;
//   - throttled (429 with or without Retry-After): likewise;
//   - anything else — a transient 500, a timeout, a validator's 400 —
//     stays: a 500 is retried on the same target as the policy says (its
//     breaker, if it has one, takes a failing target out), and a request
//     the validator refused is refused by every target alike.
func DefaultFallbackRule(v Verdict, cooldown time.Duration) Leave {
	switch code := v.Code; {
	case code == "":
	case hasCode(retiredCodes, code):
		return Leave{Move: true, Cool: RetiredCooldown, Why: WhyRetired}
	case hasCode(revokedCodes, code):
		return Leave{Move: true, Cool: CoolForever, Why: WhyKeyRefused}
	case hasCode(quotaCodes, code):
		return Leave{Move: true, Cool: CoolForever, Why: WhyQuota}
	case hasCode(contextCodes, code):
		return Leave{Move: true, Longer: true, Why: WhyContext}
	}
	switch v.Class {
	case ClassOverloaded:
		return Leave{Move: true, Cool: max(v.Wait, cooldown), Why: WhyOverloaded}
	case ClassThrottled:
		return Leave{Move: true, Cool: max(v.Wait, cooldown), Why: WhyThrottled}
	}
	return Leave{}
}

func hasCode(codes []string, code string) bool {
	for _, c := range codes {
		if strings.EqualFold(c, code) {
			return true
		}
	}
	return false
}

// A Fallback is an ordered list of targets for one logical call, and the
// rule for when a call leaves one for the next. Set it as Policy.Fallback
// and call through a driver that routes attempts (DoTarget, GetTarget,
// recoilhttp.Transport). Every attempt, on whichever target, counts against
// the policy's MaxAttempts, retry budget, hop budget, limiter and deadline:
// a chain of three targets under MaxAttempts 3 makes three attempts in all,
// not three each.
//
// A Fallback remembers, across calls, which targets are cooling down or out
// until restored; it is safe for concurrent use. Do not change its fields
// after first use, and do not copy it.
type Fallback struct {
	// Targets are tried in order: a call starts at the first one not
	// passed over and only ever moves forward.
	Targets []Target
	// Rule decides which failures move a call on; nil means
	// DefaultFallbackRule.
	Rule FallbackRule
	// Cooldown is the cooldown given to the rule; zero means
	// DefaultCooldown.
	Cooldown time.Duration
	// Retired, if positive, is how long DefaultFallbackRule passes over a
	// target whose model was not found, in place of RetiredCooldown (a
	// rule of your own decides for itself).
	Retired time.Duration

	until    atomic.Pointer[[]atomic.Int64] // per target: Unix nanoseconds it cools until; math.MaxInt64 while out until restored
	breakerd atomic.Int32                   // whether a target has a Breaker: 0 not yet known, 1 no, 2 yes
}

// breakers reports whether any target has a Breaker, found on first use:
// the Targets do not change after it.
func (f *Fallback) breakers() bool {
	k := f.breakerd.Load()
	if k == 0 {
		k = 1
		for i := range f.Targets {
			if f.Targets[i].Breaker != nil {
				k = 2
			}
		}
		f.breakerd.Store(k)
	}
	return k == 2
}

// TargetReport is what one call did with one target.
type TargetReport struct {
	// Target is the target's name.
	Target string
	// Attempts is how many attempts the call sent to it.
	Attempts int
	// Left says why the call left it or passed it over ("model not found",
	// "cooling down", "circuit open"); "" for the target the call ended on.
	Left string
}

// String formats the report as "name:attempts (why)".
func (r TargetReport) String() string {
	return string(appendTarget(nil, r))
}

func appendTarget(b []byte, r TargetReport) []byte {
	b = append(b, r.Target...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(r.Attempts), 10)
	if r.Left != "" {
		b = append(b, " ("...)
		b = append(b, r.Left...)
		b = append(b, ')')
	}
	return b
}

func appendTargets(b []byte, rs []TargetReport) []byte {
	for i, r := range rs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendTarget(b, r)
	}
	return b
}

// Restore puts the named target back in use at once, whatever cooled it or
// kept it out (a key that was rotated, a quota topped up), and reports
// whether a target of that name exists.
func (f *Fallback) Restore(name string) bool {
	found := false
	for i := range f.Targets {
		if f.name(i) == name {
			f.untils()[i].Store(0)
			found = true
		}
	}
	return found
}

// TargetStatus is one target's state, as Fallback.Status reports it.
type TargetStatus struct {
	// Target is the target's name.
	Target string
	// Out reports that the target is out until restored.
	Out bool
	// Cooling is how long the target is still passed over; zero when it is
	// in use (or Out).
	Cooling time.Duration
}

// Status reports each target's state at now (zero: the current time), in
// order: for a dashboard, or to decide what to Restore.
func (f *Fallback) Status(now time.Time) []TargetStatus {
	now = clock(now)
	out := make([]TargetStatus, len(f.Targets))
	for i := range f.Targets {
		out[i].Target = f.name(i)
		switch u := f.untils()[i].Load(); {
		case u == math.MaxInt64:
			out[i].Out = true
		case u > now.UnixNano():
			out[i].Cooling = time.Duration(u - now.UnixNano())
		}
	}
	return out
}

// untils returns, per target, the Unix nanoseconds it cools until
// (math.MaxInt64 while out until restored; zero when in use), made on
// first use. One atomic load on the common path, small enough to inline.
func (f *Fallback) untils() []atomic.Int64 {
	if u := f.until.Load(); u != nil {
		return *u
	}
	return f.initUntils()
}

func (f *Fallback) initUntils() []atomic.Int64 {
	u := make([]atomic.Int64, len(f.Targets))
	if f.until.CompareAndSwap(nil, &u) {
		return u
	}
	return *f.until.Load()
}

func (f *Fallback) name(i int) string {
	if n := f.Targets[i].Name; n != "" {
		return n
	}
	return "target " + strconv.Itoa(i+1)
}

// defaultRule is the rule of a Fallback whose Rule is nil:
// DefaultFallbackRule, with the Fallback's Retired.
func (f *Fallback) defaultRule(v Verdict, cooldown time.Duration) Leave {
	lv := DefaultFallbackRule(v, cooldown)
	if lv.Why == WhyRetired && f.Retired > 0 {
		lv.Cool = f.Retired
	}
	return lv
}

func (f *Fallback) cooldown() time.Duration {
	if f.Cooldown <= 0 {
		return DefaultCooldown
	}
	return f.Cooldown
}

// cool passes target i over until now+d (CoolForever: until restored),
// never shortening a longer cool-down already set.
func (f *Fallback) cool(i int, now time.Time, d time.Duration) {
	until := int64(math.MaxInt64)
	if d != CoolForever {
		until = clock(now).Add(d).UnixNano()
	}
	for {
		old := f.untils()[i].Load()
		if old >= until || f.untils()[i].CompareAndSwap(old, until) {
			return
		}
	}
}
