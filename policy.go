package recoil

import (
	"context"
	"time"

	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/internal/priority"
)

// Defaults for a Policy's zero fields.
const (
	// DefaultMaxAttempts caps attempts, the first included (gRFC A6 and the
	// AWS SDKs' standard mode both default to 3).
	DefaultMaxAttempts = 3
	// DefaultMaxServerWait is the longest server-directed wait a call will sit
	// through (openai-python and anthropic-sdk-python honour Retry-After up to
	// 60 s). A longer one stops the call with the wait in the error.
	DefaultMaxServerWait = 60 * time.Second
	// DefaultMinAttempt is the least time an attempt is assumed to need: a wait
	// is started only if it and this much more fit before the deadline.
	DefaultMinAttempt = 10 * time.Millisecond
)

// DefaultBackoff returns the schedule of a Policy whose Backoff is nil:
// full jitter from 100 ms doubling to a 20 s cap (Brooker 2015; the AWS
// SDKs' standard mode caps at 20 s).
func DefaultBackoff() backoff.FullJitter {
	return backoff.FullJitter{Base: 100 * time.Millisecond, Max: 20 * time.Second}
}

// DefaultOverloadBackoff returns the schedule of a Policy whose
// OverloadBackoff is nil, for overloaded and throttled failures that came
// without a server-directed wait: full jitter from 1 s to 20 s, since a
// provider at capacity needs a longer wait than a 500 does.
func DefaultOverloadBackoff() backoff.FullJitter {
	return backoff.FullJitter{Base: time.Second, Max: 20 * time.Second}
}

// Budget is a retry budget: it bounds retries as a share of traffic, which is
// the only thing that bounds amplification (docs/why.md, section 4).
// Package budget has implementations. A zero now means "the current time";
// implementations that need the time read the clock themselves, so the
// healthy path need not.
type Budget interface {
	// AdmitAt is asked before a call's first attempt; false refuses the call
	// locally. Only throttles that limit first attempts ever refuse.
	AdmitAt(now time.Time) bool
	// RetryAt is asked before a retry; true means the retry may go and has
	// been charged. c says what the failure was, for budgets that price
	// timeouts or throttling apart.
	RetryAt(now time.Time, c budget.Cause) bool
	// RecordAt reports the outcome of every attempt.
	RecordAt(now time.Time, o budget.Outcome)
}

// CostBudget is a Budget that can charge an attempt by its cost — the
// tokens a model request will use, say — rather than as one unit. It is
// optional: the loop asks for it only when the call's context carries a
// cost (WithCost), so a budget that is not one, or a call without a cost,
// is asked as a Budget is. fleet.Guard and budget.Rate are CostBudgets.
//
// Every budget a call asks is charged by the cost when it is one: the
// policy's Budget, the request's own (the hop protocol's), and each
// Fallback target's Allowance. The loop charges the cost before the first
// attempt (AdmitNAt; a target's, before the call's first attempt to it)
// and before every retry, move and hedge (RetryNAt), each attempt its own;
// a charge for an attempt that then does not go is given back with
// SettleAt(now, cost, 0). A driver that learns an attempt's actual cost
// (recoilhttp.Transport reads the usage a model API reports) settles the
// difference with SettleAt.
type CostBudget interface {
	Budget
	// AdmitNAt is AdmitAt for a first attempt that costs n units (n ≥ 1);
	// true means it may go and n has been charged.
	AdmitNAt(now time.Time, n int64) bool
	// RetryNAt is RetryAt for a retry that costs n units (n ≥ 1); true
	// means it may go and n has been charged.
	RetryNAt(now time.Time, c budget.Cause, n int64) bool
	// SettleAt reports that an attempt charged charged units turned out to
	// cost actual: the budget charges the difference when actual is more,
	// and refunds it when actual is less — never more than charged.
	SettleAt(now time.Time, charged, actual int64)
}

// costKey is the context key of WithCost's cost.
type costKey struct{}

// WithCost returns a context whose calls cost n units each attempt to
// every CostBudget they ask (the policy's, the request's, the targets'
// allowances): the loop charges n before the first attempt and n before
// each retry, move or hedge, in place of one unit. Give an estimate (a
// model request's prompt tokens plus its max_tokens, say);
// recoilhttp.Transport makes one from the request when the context
// carries none. n ≤ 0 returns ctx unchanged. A Budget that is not a
// CostBudget ignores it.
func WithCost(ctx context.Context, n int64) context.Context {
	if n <= 0 {
		return ctx
	}
	return context.WithValue(ctx, costKey{}, n)
}

// CostFrom returns the cost WithCost gave ctx, and whether it gave one.
func CostFrom(ctx context.Context) (int64, bool) {
	if ctx == nil {
		return 0, false
	}
	n, ok := ctx.Value(costKey{}).(int64)
	return n, ok
}

// Breaker is a circuit breaker consulted before every attempt (package
// breaker has one). A zero now means "the current time", as for Budget.
type Breaker interface {
	// AllowAt reports whether an attempt may go; false means the circuit is open.
	AllowAt(now time.Time) bool
	// RecordAt reports the outcome of an attempt that AllowAt admitted.
	RecordAt(now time.Time, o breaker.Outcome)
}

// Limiter caps concurrent attempts (package limit has one). The loop holds a
// slot for the length of one attempt only, never across a wait: a worker
// held while sleeping is how a retry loop takes down the service that owns
// it.
type Limiter interface {
	// TryAcquire takes a slot if one is free, without waiting, and reports
	// whether it did. The loop tries it first; a driver on virtual time
	// (the simulator) uses it alone, so a full limiter sheds there.
	TryAcquire() bool
	// Acquire takes a slot, waiting as the limiter allows; an error sheds the attempt.
	Acquire(ctx context.Context) error
	// Release returns a slot taken by TryAcquire or Acquire.
	Release()
}

// LatencyLimiter is a Limiter told each attempt's latency and whether the dependency signalled overload.
//
// The loop times an attempt only when the policy's Limiter or Breaker (or
// a Fallback target's Breaker) asks for latencies, and then gives the slot
// of an attempt that was answered back with ReleaseAt: now is when it
// ended (zero: the current time), latency how long it ran, and overload
// reports a throttled or overloaded verdict (429, 503, 529) or a timeout.
// A slot taken for an attempt that never went, or one abandoned or
// cancelled, goes back with Release: it says nothing about the
// dependency. limit.Adaptive is one.
type LatencyLimiter interface {
	Limiter
	ReleaseAt(now time.Time, latency time.Duration, overload bool)
}

// LatencyBreaker is a Breaker told each attempt's latency (for slow-call rates).
//
// The loop calls RecordLatencyAt in place of RecordAt for an attempt that
// was answered (a success or a failure); an attempt that counts for
// nothing (abandoned, cancelled, never sent) is recorded with RecordAt as
// breaker.Ignored, as for any Breaker. A breaker (or limiter) that also
// has a WantsLatency() bool method is timed only while it returns true:
// breaker.Breaker's does with a SlowCallThreshold, so one without costs
// no clock reading.
type LatencyBreaker interface {
	Breaker
	RecordLatencyAt(now time.Time, o breaker.Outcome, latency time.Duration)
}

// Priority is how much a caller waits on a call: PriorityInteractive (the
// zero value) or PriorityBackground. A PriorityLimiter queues and sheds by
// it. A call takes its priority from its context (WithPriority), else from
// its Policy's Priority field. It is the type limit.Priority is.
type Priority = priority.Priority

// The priorities of calls.
const (
	// PriorityInteractive is a call somebody is waiting on: a limiter that
	// orders by priority serves it first and never sheds it while a
	// background attempt is queued. The zero Priority.
	PriorityInteractive = priority.Interactive
	// PriorityBackground is work nobody is waiting on: it yields to
	// interactive calls, and its retries are the first attempts shed.
	PriorityBackground = priority.Background
)

// PriorityLimiter is a Limiter that queues and sheds by priority. The loop
// takes a slot for each attempt with TryAcquireAs, then (for a driver that
// can block) AcquireAs, passing the call's Priority and whether the
// attempt is a retry or a hedge (retry) rather than the call's first, so a
// background call's retry can be the first thing shed. A plain Limiter
// keeps working: the loop calls TryAcquire and Acquire. limit.Adaptive is
// one.
type PriorityLimiter interface {
	Limiter
	TryAcquireAs(p Priority, retry bool) bool
	AcquireAs(ctx context.Context, p Priority, retry bool) error
}

type priorityKey struct{}

// WithPriority returns a context whose calls have priority p, whatever
// their Policy's Priority says: a handler serving a person marks its
// context PriorityInteractive, a batch worker PriorityBackground, and
// every call Drive runs under it (Do, the HTTP Transport, the gRPC
// interceptors) passes it to a PriorityLimiter. A driver on virtual time
// (the simulator) has no context: it uses the Policy's.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// Policy says when to retry, how long to wait, and when to stop. Its zero
// fields mean the documented defaults, so the zero Policy is a safe policy:
// built-in classification, at most 3 attempts, full jitter from 100 ms,
// deadline-aware, Retry-After honoured up to 60 s, and a retry budget of its
// own shared by every call through it.
//
// A Policy is safe for concurrent use once built; do not change its fields
// while calls run through it, and do not copy it (it holds its budget's
// state). Use it by pointer: nil means Default().
type Policy struct {
	// MaxAttempts caps attempts, the first included; zero means
	// DefaultMaxAttempts. 1 disables retrying.
	MaxAttempts int
	// Backoff is the schedule between attempts after a transient failure;
	// nil means DefaultBackoff().
	Backoff backoff.Schedule
	// OverloadBackoff is the schedule after an overloaded or throttled
	// failure that came without a server-directed wait; nil means
	// DefaultOverloadBackoff().
	OverloadBackoff backoff.Schedule
	// MaxServerWait is the longest server-directed wait honoured; a longer
	// one stops the call with ErrWaitTooLong and the wait in Error.Wait.
	// Zero means DefaultMaxServerWait.
	MaxServerWait time.Duration
	// MinAttempt is the least time an attempt needs; no wait is started
	// unless it and MinAttempt fit before the deadline. Zero means
	// DefaultMinAttempt.
	MinAttempt time.Duration
	// Timeout bounds the whole logical call, waits included; zero means only
	// the caller's context bounds it. When it runs out — in an attempt, in
	// a wait, or in a limiter's queue — the call stops with ErrDeadline.
	Timeout time.Duration
	// AttemptTimeout bounds each attempt separately; zero means none. An
	// attempt that runs out is a transient failure with Verdict.Timeout set.
	// For an HTTP attempt it bounds the wait for the response headers; the
	// body is the caller's to read (see recoilhttp.Transport.IdleTimeout).
	AttemptTimeout time.Duration
	// Unknown is the class of failures no rule classifies; zero means
	// ClassTransient.
	Unknown Class
	// Priority is the priority of calls through the policy whose context
	// names none (WithPriority), for a Limiter that orders by it
	// (PriorityLimiter); the zero value is PriorityInteractive. Background
	// sets PriorityBackground.
	Priority Priority
	// Classify, if set, is asked first about every failed attempt, in every
	// driver; a zero Verdict falls through to the driver's own classifier
	// (the HTTP Transport's status table, say) and then to the built-in
	// rules (see Classify).
	Classify Classifier
	// Budget is the retry budget. Nil means the policy's own budget.Share
	// (retries at most 20 % of the attempts that succeed, plus a reserve
	// of 10: every retry of an independent failure rate up to about 17 %
	// goes, and the budget closes as the dependency stops answering),
	// shared by every call through this policy; NoBudget turns budgeting
	// off. A budget belongs to one dependency: give each
	// dependency its own Policy.
	Budget Budget
	// Breaker is the circuit breaker, asked before every attempt; nil means
	// none (package breaker has one: give each dependency its own).
	Breaker Breaker
	// Limiter caps concurrent attempts; nil means none (package limit has
	// one: limit.Limiter for a fixed capacity, limit.Adaptive for one
	// that follows the dependency).
	Limiter Limiter
	// Fallback, if set, is the ordered list of targets the call's attempts
	// go to, and the rule for when a call leaves one for the next (a
	// retired model, a refused key, an overloaded provider); nil means one
	// target, the one the driver knows. Every attempt on every target
	// counts against this policy's MaxAttempts, budgets, limiter and
	// deadline. It needs a driver that routes attempts (DoTarget,
	// GetTarget, recoilhttp.Transport, the recoilgrpc interceptors); under
	// another the call stops with ErrNoTarget before any attempt.
	Fallback *Fallback
	// Hedge, if set, races an attempt that is slow to answer with another
	// copy of it, under the retry budget; nil means none. Hedge only
	// what is safe to run twice at once. Drivers that can run attempts
	// concurrently honour it: Do, Get, DoTarget and GetTarget; the HTTP
	// Transport for a request that may repeat; recoilgrpc's unary
	// interceptor (see Hedge).
	Hedge *Hedge
	// Rand is the random source for jitter; nil means math/rand/v2's global
	// generator. It must be safe for concurrent use if calls run concurrently.
	Rand backoff.Source
	// Observe receives one Summary per logical call, with the caller's
	// context (so a log line or span joins the caller's trace); nil means
	// nothing is reported. SlogObserver adapts a *slog.Logger.
	Observe func(context.Context, Summary)
	// OnAttempt receives one event per attempt, with the caller's context;
	// nil means none.
	OnAttempt func(context.Context, AttemptEvent)

	// bucket is the default budget: a zero Share is full, with its
	// defaults (20 % of successes, a reserve of 10 retries).
	bucket budget.Share
}

// NoBudget, set as Policy.Budget, turns the default retry budget off: every
// retry the rest of the policy allows goes. docs/why.md (sections 2–4)
// shows what that costs under a sustained fault; use it for tests and for
// modelling deployed loops. It is a constant, so no one can change what it
// means.
const NoBudget = noBudget(0)

// noBudget is NoBudget's type: a Budget that allows everything.
type noBudget uint8

func (noBudget) AdmitAt(time.Time) bool               { return true }
func (noBudget) RetryAt(time.Time, budget.Cause) bool { return true }
func (noBudget) RecordAt(time.Time, budget.Outcome)   {}

// budget resolves the policy's budget: nil for NoBudget, so the loop skips
// the calls; the policy's own Share when none was set.
func (p *Policy) budget() Budget {
	switch b := p.Budget.(type) {
	case nil:
		return &p.bucket
	case noBudget:
		return nil
	default:
		return b
	}
}

// Default returns the policy used when a nil *Policy is passed: a zero
// Policy of the package's own, whose retry budget is shared by every call
// that passes nil. It is always the same policy. Give each dependency its
// own Policy so that one dependency's failures do not spend another's
// budget.
func Default() *Policy { return &defaultPolicy }

// defaultPolicy is Default's.
var defaultPolicy Policy

// Interactive returns a policy for a path a person is waiting on (a
// background job can wait a minute; a user cannot): at most one retry,
// short waits, a 10 s bound on the whole call, and no server-directed wait
// over 2 s — a longer one stops the call with the wait in the error. It has
// its own default budget.
func Interactive() *Policy {
	return &Policy{
		MaxAttempts:     2,
		Timeout:         10 * time.Second,
		Backoff:         backoff.FullJitter{Base: 50 * time.Millisecond, Max: 500 * time.Millisecond},
		OverloadBackoff: backoff.FullJitter{Base: 250 * time.Millisecond, Max: time.Second},
		MaxServerWait:   2 * time.Second,
	}
}

// Background returns a policy for work nobody is waiting on: up to 6
// attempts, full jitter from 1 s to a minute (from 5 s to 5 minutes when the
// dependency is overloaded), server-directed waits honoured up to 10 minutes,
// and a stricter budget — retries at most 10 % of successful attempts (half
// the default share) plus a reserve of 20 (room for four calls' five
// retries) — so retries give way sooner under a sustained fault (shed the
// retry on paths nobody is waiting on).
// Its calls are PriorityBackground: a limiter that orders by priority
// serves interactive calls first and sheds these first.
func Background() *Policy {
	return &Policy{
		Priority:        PriorityBackground,
		MaxAttempts:     6,
		Backoff:         backoff.FullJitter{Base: time.Second, Max: time.Minute},
		OverloadBackoff: backoff.FullJitter{Base: 5 * time.Second, Max: 5 * time.Minute},
		MaxServerWait:   10 * time.Minute,
		Budget:          budget.Must(budget.NewShare(budget.ShareConfig{Percent: 0.1, Reserve: 20})),
	}
}

// MaxRetries returns the most retries one call through p may make:
// MaxAttempts less the first attempt, with the zero MaxAttempts meaning
// DefaultMaxAttempts. A driver of the hop protocol gives a call tree it
// starts this many (hop.EdgeBudget).
func (p *Policy) MaxRetries() int { return p.maxAttempts() - 1 }

func (p *Policy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return DefaultMaxAttempts
	}
	return p.MaxAttempts
}

func (p *Policy) maxServerWait() time.Duration {
	if p.MaxServerWait <= 0 {
		return DefaultMaxServerWait
	}
	return p.MaxServerWait
}

func (p *Policy) minAttempt() time.Duration {
	if p.MinAttempt <= 0 {
		return DefaultMinAttempt
	}
	return p.MinAttempt
}

// The default schedules, boxed once: converting a struct to an interface on
// every retry would allocate.
var (
	defaultBackoff         backoff.Schedule = DefaultBackoff()
	defaultOverloadBackoff backoff.Schedule = DefaultOverloadBackoff()
)

func (p *Policy) schedule(c Class) backoff.Schedule {
	if c == ClassOverloaded || c == ClassThrottled {
		if p.OverloadBackoff != nil {
			return p.OverloadBackoff
		}
		return defaultOverloadBackoff
	}
	if p.Backoff != nil {
		return p.Backoff
	}
	return defaultBackoff
}

// Verdict classifies an attempt's error under this policy, as every driver
// does: the policy's Classify first, then driver (the driver's own verdict;
// the zero Verdict when it has none), then the built-in rules (Classify),
// with the policy's Unknown class for errors nothing recognises.
func (p *Policy) Verdict(err error, driver Verdict) (v Verdict) {
	p.verdict(&v, err, &driver)
	return v
}

// verdict is Verdict writing into *v, with driver's verdict by reference
// (nil for none): Do's and Get's drivers classify straight into the
// verdict they return.
func (p *Policy) verdict(v *Verdict, err error, driver *Verdict) {
	if p.Classify != nil {
		if *v = p.Classify(err); v.Class != ClassUnknown {
			return
		}
	}
	if driver != nil && driver.Class != ClassUnknown {
		*v = *driver
		return
	}
	classify(v, err, p.unknown())
}

// unknown is the class of failures nothing classifies: Unknown, or
// ClassTransient when it is zero.
func (p *Policy) unknown() Class {
	if p.Unknown == ClassUnknown {
		return ClassTransient
	}
	return p.Unknown
}

// class resolves the unknown class c to the policy's Unknown class.
func (p *Policy) class(c Class) Class {
	if c == ClassUnknown {
		return p.unknown()
	}
	return c
}

// Failure is what the decision is told after an attempt fails.
type Failure struct {
	// Attempt is the number of the attempt that failed; 1 is the first.
	Attempt int
	// Verdict is the failure's classification.
	Verdict Verdict
	// Now is the instant of the decision. It may be zero when Deadline is
	// zero: only the deadline rule needs the time.
	Now time.Time
	// Deadline is when the caller stops waiting; zero means none.
	Deadline time.Time
	// PrevWait is the wait before the attempt that failed (zero after the
	// first), for schedules that grow from it.
	PrevWait time.Duration
	// Rand is the jitter source; nil means the policy's Rand.
	Rand backoff.Source
}

// Decision is the answer: retry after Wait, or stop for Reason.
type Decision struct {
	// Retry reports whether to make another attempt.
	Retry bool
	// Wait is how long to wait first when retrying; when the call stopped
	// because a wait was too long, it is the wait that was refused.
	Wait time.Duration
	// Reason says why the call stops; ReasonNone when Retry is true.
	Reason Reason
}

// Decide is the one place recoil decides, after a failed attempt, whether to
// stop or retry and how long to wait. Do, Get, the HTTP transport, the gRPC
// interceptors and the simulator all come here, through Call.Fail. It
// reads no clock and changes no state: time and randomness are arguments.
// The rules, in order:
//
//   - a permanent verdict stops at once (exactly one attempt), and so does
//     a cancelled attempt;
//   - attempts are capped at MaxAttempts, the first included;
//   - a server-directed wait is honoured and never shortened (up to a tenth
//     more, at most a second, is added as jitter so clients told the same
//     instant do not all return at it); if it exceeds MaxServerWait the call
//     stops with ReasonWaitTooLong, and if it cannot finish before the
//     deadline, with ReasonDeadline — either way with the wait in the
//     Decision so a scheduler above can requeue;
//   - otherwise the wait comes from Backoff (OverloadBackoff for overloaded
//     and throttled failures);
//   - no wait is started that cannot finish, plus MinAttempt, before the
//     deadline.
//
// The budgets come last, and not here: for a retry Decide allows, the Call
// asks the policy's budget and then the request's own (the hop
// protocol's), which charge it only if it goes (Call.Fail).
func (p *Policy) Decide(f Failure) Decision {
	if p == nil {
		p = &defaultPolicy
	}
	return p.decide(f.Attempt, &f.Verdict, f.Now, f.Deadline, f.PrevWait, f.Rand)
}

// decide is Decide with the verdict by reference: the loop's Call passes
// its own, and a Failure built and copied on every failed attempt would
// be copied for nothing.
func (p *Policy) decide(attempt int, v *Verdict, now, deadline time.Time, prev time.Duration, rnd backoff.Source) Decision {
	class := p.class(v.Class)
	if class == ClassCanceled {
		return Decision{Reason: ReasonCanceled}
	}
	if !class.Retryable() {
		return Decision{Reason: ReasonPermanent}
	}
	if attempt >= p.maxAttempts() {
		return Decision{Reason: ReasonAttempts}
	}
	if rnd == nil {
		rnd = p.Rand
	}
	var left time.Duration = 1<<63 - 1
	if !deadline.IsZero() {
		left = deadline.Sub(now) - p.minAttempt()
	}
	var wait time.Duration
	if v.Wait > 0 {
		if v.Wait > p.maxServerWait() {
			return Decision{Reason: ReasonWaitTooLong, Wait: v.Wait}
		}
		if v.Wait > left {
			return Decision{Reason: ReasonDeadline, Wait: v.Wait}
		}
		spread := min(v.Wait/10, time.Second, left-v.Wait)
		wait = v.Wait
		if spread > 0 {
			wait += backoff.FullJitter{Base: spread, Multiplier: 1}.Delay(1, 0, rnd)
		}
	} else {
		wait = p.schedule(class).Delay(attempt, prev, rnd)
		if wait > left {
			return Decision{Reason: ReasonDeadline, Wait: wait}
		}
	}
	return Decision{Retry: true, Wait: wait}
}
