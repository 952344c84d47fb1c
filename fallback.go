package recoil

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
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

	until atomic.Pointer[[]atomic.Int64] // per target: Unix nanoseconds it cools until; math.MaxInt64 while out until restored
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

func (f *Fallback) rule(v *Verdict) Leave {
	if f.Rule != nil {
		return f.Rule(*v, f.cooldown())
	}
	lv := DefaultFallbackRule(*v, f.cooldown())
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

// route is a call's state under a Fallback or a Hedge: which target its
// attempts go to and what it did with each, and which attempts are in
// flight. Only a call under one of them has one, so the common path
// carries none of it.
type route struct {
	f       *Fallback // nil under a Hedge alone
	cur     int       // the target of the attempt in flight or last made; -1 before the first
	stay    bool      // the next attempt goes to cur again
	atLeast int       // the next target must declare at least this MaxContext; 0: any
	from    int       // the next target is searched for from here
	leg     int       // reports[leg] is cur's report
	admits  uint64    // the targets (of the first 64) whose allowance admitted the call
	reports []TargetReport
	own     [4]TargetReport

	flight  []flight  // the attempts in flight, under a Hedge
	hedges  int       // hedges started
	refused int       // hedges the budget, limiter or breaker refused
	wasted  int       // attempts abandoned when another answered
	extra   int       // limiter slots held by hedges
	ownFl   [3]flight // flight's first backing array
}

// routeFor starts a call's route under f.
func routeFor(f *Fallback) *route {
	r := &route{f: f, cur: -1}
	if f != nil {
		r.reports = r.own[:0]
	}
	r.flight = r.ownFl[:0]
	return r
}

// target is the target of the attempt in flight or last made; nil before
// the first.
func (r *route) target() *Target {
	if r == nil || r.f == nil || r.cur < 0 {
		return nil
	}
	return &r.f.Targets[r.cur]
}

// pass records that the call passed target i over, and why.
func (r *route) pass(i int, why string) {
	r.reports = append(r.reports, TargetReport{Target: r.f.name(i), Left: why})
}

// choose picks the target of the next attempt at now, after a failure
// priced k (for the allowance's RetryAt); false means no target may be
// used, with the reason the call stops for.
func (r *route) choose(now time.Time, k budget.Cause) (bool, Reason) {
	f := r.f
	open, other := false, false
	if r.stay {
		r.stay = false
		why := r.admit(r.cur, now, k, false)
		if why == "" {
			r.reports[r.leg].Attempts++
			return true, ReasonNone
		}
		r.reports[r.leg].Left = why
		r.from = r.cur + 1
		open, other = why == whyOpen, why != whyOpen
	}
	nowNs := clock(now).UnixNano()
	soonest, at, until := -1, 0, int64(0)
	for i := r.from; i < len(f.Targets); i++ {
		if f.Targets[i].MaxContext < r.atLeast {
			continue // too short for the request: not a candidate
		}
		switch u := f.untils()[i].Load(); {
		case u == math.MaxInt64:
			r.pass(i, WhyOut)
			other = true
			continue
		case u > nowNs:
			if soonest < 0 || u < until {
				soonest, at, until = i, len(r.reports), u
			}
			r.pass(i, WhyCooling)
			continue
		}
		why := r.admit(i, now, k, false)
		if why == "" {
			r.take(i, len(r.reports))
			return true, ReasonNone
		}
		r.pass(i, why)
		open, other = open || why == whyOpen, other || why != whyOpen
	}
	// Every candidate is cooling down, out or refusing: the one that cools
	// soonest is tried rather than none. The targets passed over after it
	// are left to be considered again if the call moves on.
	if soonest >= 0 {
		why := r.admit(soonest, now, k, false)
		if why == "" {
			r.reports = r.reports[:at]
			r.take(soonest, at)
			return true, ReasonNone
		}
		r.reports[at].Left = WhyCooling + ", then " + why
		open, other = open || why == whyOpen, other || why != whyOpen
	}
	if open && !other {
		return false, ReasonCircuitOpen
	}
	return false, ReasonNoTarget
}

const whyOpen = WhyCircuitOpen

// take makes target i the attempt's, reported at reports[at].
func (r *route) take(i, at int) {
	r.cur, r.from, r.leg = i, i+1, at
	r.reports = append(r.reports, TargetReport{Target: r.f.name(i), Attempts: 1})
}

// admit asks target i's breaker and allowance whether an attempt may go
// at now; "" means it may, anything else is why not. An allowance asked
// before the call's first attempt to the target admits the call; before a
// further one, it prices the retry at k. A refusal cools the target, unless
// what it refused is a hedge.
func (r *route) admit(i int, now time.Time, k budget.Cause, hedge bool) string {
	t := &r.f.Targets[i]
	if t.Breaker != nil && !t.Breaker.AllowAt(now) {
		return whyOpen
	}
	if t.Allowance == nil {
		return ""
	}
	var ok bool
	if bit := uint64(1) << (i % 64); i < 64 && r.admits&bit != 0 {
		ok = t.Allowance.RetryAt(now, k)
	} else {
		ok = t.Allowance.AdmitAt(now)
		if i < 64 {
			r.admits |= bit
		}
	}
	if ok {
		return ""
	}
	if t.Breaker != nil {
		t.Breaker.RecordAt(now, breaker.Ignored) // the probe it let through does not go
	}
	if !hedge {
		// A refused hedge leaves the target as it was: the attempt it
		// would have raced is still in flight there, and may answer.
		r.f.cool(i, now, r.f.cooldown())
	}
	return WhyAllowance
}

// record reports an attempt's outcome to its target's breaker and
// allowance, with its latency (-1: not timed).
func (r *route) record(now time.Time, n int, o budget.Result, b breaker.Outcome, after budget.Cause, lat time.Duration) {
	if r.f != nil {
		r.f.record(r.cur, now, n, o, b, after, lat)
	}
}

// quick reports whether a call's first attempt may go to the first target
// without a route: it is neither cooling nor out, has no allowance to ask,
// and its breaker lets the attempt go. The clock is read only for a target
// that was ever cooled.
func (f *Fallback) quick(now time.Time) bool {
	if len(f.Targets) == 0 {
		return false
	}
	if u := f.untils()[0].Load(); u != 0 {
		if u > clock(now).UnixNano() {
			return false
		}
		f.untils()[0].CompareAndSwap(u, 0) // cooled down: the next call needs no clock
	}
	t := &f.Targets[0]
	return t.Allowance == nil && (t.Breaker == nil || t.Breaker.AllowAt(now))
}

// resume makes the route of a call whose first attempt went to the first
// target without one.
func (r *route) resume() {
	r.take(0, 0)
}

// record reports attempt n's outcome to target i's breaker (with the
// attempt's latency lat, -1 when not timed) and allowance.
func (f *Fallback) record(i int, now time.Time, n int, o budget.Result, b breaker.Outcome, after budget.Cause, lat time.Duration) {
	t := &f.Targets[i]
	if t.Breaker != nil {
		recordOutcome(t.Breaker, now, b, lat)
	}
	if t.Allowance != nil {
		t.Allowance.RecordAt(now, budget.Outcome{Attempt: n, Result: o, After: after})
	}
}

// canMove reports whether a target after the current one may still take
// the call: not out until restored and, after a "context too long", one
// declaring a longer context. Breakers and allowances are asked only when
// the call gets there.
func (r *route) canMove(longer bool) bool {
	f := r.f
	need := r.atLeast
	if longer {
		need = f.Targets[r.cur].MaxContext + 1
	}
	for i := r.cur + 1; i < len(f.Targets); i++ {
		if f.Targets[i].MaxContext >= need && f.untils()[i].Load() != math.MaxInt64 {
			return true
		}
	}
	return false
}

// leave moves the call off its target after a failure, for lv.
func (r *route) leave(lv *Leave) {
	r.reports[r.leg].Left = lv.Why
	if lv.Why == "" {
		r.reports[r.leg].Left = WhyMovedOn
	}
	r.from = r.cur + 1
	if lv.Longer {
		r.atLeast = r.f.Targets[r.cur].MaxContext + 1
	}
}
