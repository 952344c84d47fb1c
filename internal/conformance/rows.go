package conformance

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

// Rows is the table.
func Rows() []Row {
	return slices.Concat(attemptRows(), waitRows(), timeRows(), guardRows(), cancelRows(), classifyRows(), fallbackRows(), hedgeRows(), permitRows())
}

// attemptRows are the rows on the attempt count and what is permanent.
func attemptRows() []Row {
	return []Row{
		{Name: "success at once", Policy: base, Script: []Outcome{ok},
			Attempts: 1, Waited: none},
		{Name: "transient twice, then success", Policy: base, Script: []Outcome{s500, s500, ok},
			Attempts: 3, Waited: exactly(2 * step)},
		{Name: "transient until attempts run out", Policy: base, Script: []Outcome{s500},
			Attempts: 3, Reason: recoil.ReasonAttempts, Waited: exactly(2 * step)},
		{Name: "MaxAttempts", Policy: with(func(p *recoil.Policy) { p.MaxAttempts = 5 }), Script: []Outcome{s500},
			Attempts: 5, Reason: recoil.ReasonAttempts, Waited: exactly(4 * step)},
		{Name: "MaxAttempts 1 never retries", Policy: with(func(p *recoil.Policy) { p.MaxAttempts = 1 }), Script: []Outcome{s500},
			Attempts: 1, Reason: recoil.ReasonAttempts, Waited: none},
		{Name: "a validator's 400 is permanent", Policy: base, Script: []Outcome{s400},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none},
		{Name: "a 404 is permanent", Policy: base, Script: []Outcome{s404},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none},
	}
}

// waitRows are the rows on backoff schedules and server-directed waits.
func waitRows() []Row {
	return []Row{
		{Name: "Backoff: exponential schedule", Policy: with(func(p *recoil.Policy) {
			p.Backoff = backoff.Exponential{Base: 10 * time.Millisecond}
		}), Script: []Outcome{s500, s500, ok},
			Attempts: 3, Waited: exactly(30 * time.Millisecond)},
		{Name: "Backoff: full jitter stays under its ceilings", Policy: with(func(p *recoil.Policy) {
			p.Backoff = backoff.FullJitter{Base: 10 * time.Millisecond}
		}), Script: []Outcome{s500, s500, ok},
			Attempts: 3, Waited: [2]time.Duration{0, 30 * time.Millisecond}},
		{Name: "OverloadBackoff after an overloaded 503", Policy: base, Script: []Outcome{s503, ok},
			Attempts: 2, Waited: exactly(overload), Cannot: map[string]string{GRPC: noOverloadGRPC}},
		{Name: "OverloadBackoff after a 429 without a server wait", Policy: base, Script: []Outcome{s429, ok},
			Attempts: 2, Waited: exactly(overload), Cannot: map[string]string{GRPC: noQuotaRetryGRPC}},
		{Name: "overloaded until attempts run out", Policy: base, Script: []Outcome{s503},
			Attempts: 3, Reason: recoil.ReasonAttempts, Waited: exactly(2 * overload), Cannot: map[string]string{GRPC: noOverloadGRPC}},
		{Name: "throttled with a server wait, honoured", Policy: base, Script: []Outcome{after(429, 50*time.Millisecond), ok},
			Attempts: 2, Waited: serverWait(50 * time.Millisecond)},
		{Name: "MaxServerWait: a server wait too long", Policy: with(func(p *recoil.Policy) { p.MaxServerWait = time.Second }),
			Script:   []Outcome{after(429, 5*time.Second)},
			Attempts: 1, Reason: recoil.ReasonWaitTooLong, Waited: none, Refused: 5 * time.Second},
	}
}

// timeRows are the rows on the call's and the attempt's time bounds.
func timeRows() []Row {
	return []Row{
		{Name: "Timeout: a server wait past the deadline", Policy: with(func(p *recoil.Policy) { p.Timeout = 300 * time.Millisecond }),
			Script:   []Outcome{after(429, 500*time.Millisecond)},
			Attempts: 1, Reason: recoil.ReasonDeadline, Waited: none, Refused: 500 * time.Millisecond},
		{Name: "Timeout: a backoff wait that cannot finish in time is not started", Policy: with(func(p *recoil.Policy) {
			p.Timeout = 100 * time.Millisecond
			p.Backoff = backoff.Constant(95 * time.Millisecond)
		}), Script: []Outcome{s500},
			Attempts: 1, Reason: recoil.ReasonDeadline, Waited: none, Refused: 95 * time.Millisecond},
		{Name: "MinAttempt: a wait must leave room for an attempt", Policy: with(func(p *recoil.Policy) {
			p.Timeout = 200 * time.Millisecond
			p.Backoff = backoff.Constant(100 * time.Millisecond)
			p.MinAttempt = 150 * time.Millisecond
		}), Script: []Outcome{s500},
			Attempts: 1, Reason: recoil.ReasonDeadline, Waited: none, Refused: 100 * time.Millisecond},
		{Name: "Timeout: the whole call runs out mid-attempt", Policy: with(func(p *recoil.Policy) { p.Timeout = 100 * time.Millisecond }),
			Script:   []Outcome{hang},
			Attempts: 1, Reason: recoil.ReasonDeadline, Waited: none},
		{Name: "Timeout: the whole call runs out in a later attempt", Policy: with(func(p *recoil.Policy) { p.Timeout = time.Second }),
			Script:   []Outcome{s500, hang},
			Attempts: 2, Reason: recoil.ReasonDeadline, Waited: exactly(step)},
		{Name: "AttemptTimeout cuts a hung attempt, the next succeeds", Policy: with(func(p *recoil.Policy) { p.AttemptTimeout = attemptCut }),
			Script:   []Outcome{hang, ok},
			Attempts: 2, Waited: exactly(step)},
		{Name: "AttemptTimeout until attempts run out", Policy: with(func(p *recoil.Policy) { p.AttemptTimeout = attemptCut }),
			Script:   []Outcome{hang},
			Attempts: 3, Reason: recoil.ReasonAttempts, Waited: exactly(2 * step)},
	}
}

// guardRows are the rows on budgets, the breaker and the limiter.
func guardRows() []Row {
	return []Row{
		{Name: "Budget refuses the retry", Policy: with(func(p *recoil.Policy) { p.Budget = refuseRetries{Admit: true} }),
			Script:   []Outcome{s500},
			Attempts: 1, Reason: recoil.ReasonBudget, Waited: none},
		{Name: "Budget refuses the call", Policy: with(func(p *recoil.Policy) { p.Budget = refuseRetries{} }),
			Script:   []Outcome{ok},
			Attempts: 0, Reason: recoil.ReasonBudget, Waited: none},
		{Name: "the default budget lets a call's retries through", Policy: with(func(p *recoil.Policy) { p.Budget = nil }),
			Script:   []Outcome{s500, s500, ok},
			Attempts: 3, Waited: exactly(2 * step)},
		{Name: "request budget of 0: no retry", Policy: base, Script: []Outcome{s500}, RequestBudget: budgetOf(0),
			Attempts: 1, Reason: recoil.ReasonBudget, Waited: none,
			Cannot: map[string]string{Sim: "in the simulator a hop budget of 0 turns the protocol off; the budget-of-1 row covers it"}},
		{Name: "request budget of 1: one retry", Policy: base, Script: []Outcome{s500}, RequestBudget: budgetOf(1),
			Attempts: 2, Reason: recoil.ReasonBudget, Waited: exactly(step),
		},
		{Name: "Breaker open before the first attempt", Policy: with(func(p *recoil.Policy) { p.Breaker = OpenBreaker() }),
			Script:   []Outcome{ok},
			Attempts: 0, Reason: recoil.ReasonCircuitOpen, Waited: none},
		{Name: "Breaker opens between attempts", Policy: with(func(p *recoil.Policy) {
			p.MaxAttempts = 4
			p.Breaker = breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 2, OpenDuration: time.Hour}))
		}), Script: []Outcome{s500},
			// The second failure opens it; the wait before the third
			// attempt was already decided.
			Attempts: 2, Reason: recoil.ReasonCircuitOpen, Waited: exactly(2 * step)},
		{Name: "Breaker: a 400 is an answer, not a failure", Policy: with(func(p *recoil.Policy) {
			p.Breaker = breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OpenDuration: time.Hour}))
		}), Script: []Outcome{s400},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none},
		{Name: "Limiter full, no queue: shed", Policy: with(func(p *recoil.Policy) { p.Limiter = fullLimiter(limit.Config{Capacity: 1}) }),
			Script:   []Outcome{ok},
			Attempts: 0, Reason: recoil.ReasonLimit, Waited: none},
		{Name: "Limiter queue times out", Policy: with(func(p *recoil.Policy) {
			p.Limiter = fullLimiter(limit.Config{Capacity: 1, MaxQueue: 1, MaxWait: 30 * time.Millisecond})
		}), Script: []Outcome{ok},
			Attempts: 0, Reason: recoil.ReasonLimit, Waited: none},
		{Name: "Limiter with a free slot, held per attempt", Policy: with(func(p *recoil.Policy) { p.Limiter = limit.Must(limit.New(limit.Config{Capacity: 1})) }),
			Script:   []Outcome{s500, s500, ok},
			Attempts: 3, Waited: exactly(2 * step)},
	}
}

// cancelRows are the rows on the caller leaving.
func cancelRows() []Row {
	return []Row{
		{Name: "cancelled during an attempt", Policy: base, Script: []Outcome{hang}, CancelAt: 50 * time.Millisecond,
			Attempts: 1, Reason: recoil.ReasonCanceled, Waited: none,
			Cannot: map[string]string{Sim: noCancel}},
		{Name: "cancelled during a wait", Policy: with(func(p *recoil.Policy) { p.Backoff = backoff.Constant(5 * time.Second) }),
			Script: []Outcome{s500}, CancelAt: attemptCut,
			Attempts: 1, Reason: recoil.ReasonCanceled, Waited: exactly(5 * time.Second),
			Cannot: map[string]string{Sim: noCancel}},
	}
}

// classifyRows are the rows on the policy's Classify and Unknown.
func classifyRows() []Row {
	return []Row{
		{Name: "Classify overrides: a 400 retried", Policy: with(func(p *recoil.Policy) { p.Classify = retryAll }),
			Script:   []Outcome{s400, s400, ok},
			Attempts: 3, Waited: exactly(2 * step)},
		{Name: "Classify overrides: a 500 made permanent", Policy: with(func(p *recoil.Policy) { p.Classify = nothingRetried }),
			Script:   []Outcome{s500},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none},
		{Name: "Classify with no opinion falls through", Policy: with(func(p *recoil.Policy) {
			p.Classify = func(error) recoil.Verdict { return recoil.Verdict{} }
		}), Script: []Outcome{s400},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none},
		{Name: "Unknown: unclassified errors are transient by default", Policy: base, Script: []Outcome{unk, ok},
			Attempts: 2, Waited: exactly(step), Cannot: map[string]string{Transport: noUnknownHTTP, Sim: noUnknownSim, GRPC: noUnknownGRPC}},
		{Name: "Unknown set to permanent", Policy: with(func(p *recoil.Policy) { p.Unknown = recoil.ClassPermanent }),
			Script:   []Outcome{unk},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none, Cannot: map[string]string{Transport: noUnknownHTTP, Sim: noUnknownSim, GRPC: noUnknownGRPC}},
	}
}

const (
	noUnknownHTTP = "every HTTP attempt ends in a status or a transport error, and the HTTP rules classify both"
	noUnknownSim  = "every simulated outcome has a class"
	// gRPC has one status for "try again later", UNAVAILABLE (HTTP 503 maps
	// to it in gRPC's own HTTP-to-status table), and gRFC A6 retries it on
	// its one backoff schedule: nothing a server sends means "overloaded,
	// wait longer" apart from a pushback, which the server-wait rows cover.
	noOverloadGRPC = "gRPC has no status for an overloaded server apart from UNAVAILABLE, which gRFC A6 retries as transient on its one schedule; the pushback rows cover a server that asks for longer"
	// A 429 without a wait is RESOURCE_EXHAUSTED without pushback: a quota,
	// which waiting does not refill (gRFC A6 does not retry it unless the
	// policy names it).
	noQuotaRetryGRPC = "RESOURCE_EXHAUSTED without pushback or RetryInfo is a quota, permanent under A6's classification; with pushback it is throttled, as the server-wait rows check"
	noUnknownGRPC    = "a gRPC server can answer only with a status code, and every code has a class (gRFC A6: codes outside the retryable set are not retried)"
)

func retryAll(error) recoil.Verdict {
	return recoil.Verdict{Class: recoil.ClassTransient, Reason: "retry everything"}
}

func nothingRetried(error) recoil.Verdict {
	return recoil.Verdict{Class: recoil.ClassPermanent, Reason: "never retry"}
}

// Block blocks until ctx is done and returns its error: an attempt that
// never answers.
func Block(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// Chain returns a Fallback over targets named by names: each name may end
// in "=N" to declare a MaxContext of N.
func Chain(names ...string) *recoil.Fallback {
	f := &recoil.Fallback{}
	for _, n := range names {
		t := recoil.Target{Name: n}
		if name, size, ok := strings.Cut(n, "="); ok {
			t.Name = name
			t.MaxContext, _ = strconv.Atoi(size)
		}
		f.Targets = append(f.Targets, t)
	}
	return f
}

// NoFallback is why a driver cannot express the fallback rows.
const (
	noFallbackSim = "the simulator's requests have no size: no simulated upstream answers \"context too long\""
	noHopZeroSim  = "in the simulator a hop budget of 0 turns the protocol off; the budget-of-1 row covers it"
	// gRPC's "try again later" is UNAVAILABLE (HTTP 503 maps to it), which
	// gRFC A6 makes transient: DefaultFallbackRule retries it on the same
	// target, on the one backoff schedule.
	noOverloadMoveGRPC = "gRPC has no status for an overloaded server apart from UNAVAILABLE, transient under gRFC A6, which DefaultFallbackRule retries on the same target on the policy's one schedule; recoilgrpc.FallbackRule moves on from it (recoilgrpc's TestFallbackChannels)"
)

func fallback(names ...string) func(p *recoil.Policy) {
	return func(p *recoil.Policy) { p.Fallback = Chain(names...) }
}

// fallbackRows are the rows on a Fallback: which failures move a call to
// the next target, and how the whole chain stays under one policy.
func fallbackRows() []Row {
	cannot := map[string]string{}
	rows := []Row{
		{Name: "fallback: a retired model's 404 moves on at once", Policy: with(fallback("a", "b")), Script: []Outcome{s404, ok},
			Attempts: 2, Waited: none, Route: "a b"},
		{Name: "fallback: a refused key moves on", Policy: with(fallback("a", "b")), Script: []Outcome{s401, ok},
			Attempts: 2, Waited: none, Route: "a b"},
		{Name: "fallback: an exhausted quota moves on", Policy: with(fallback("a", "b")), Script: []Outcome{quota, ok},
			Attempts: 2, Waited: none, Route: "a b"},
		{Name: "fallback: context too long moves once to a longer context", Policy: with(fallback("a=8000", "b=8000", "c=200000")),
			Script: []Outcome{tooLong, ok}, Attempts: 2, Waited: none, Route: "a c", Cannot: map[string]string{Sim: noFallbackSim}},
		{Name: "fallback: overloaded moves on", Policy: with(fallback("a", "b")), Script: []Outcome{s503, ok},
			Attempts: 2, Waited: none, Route: "a b", Cannot: map[string]string{GRPC: noOverloadMoveGRPC}},
		{Name: "fallback: overloaded on the last target is retried there", Policy: with(fallback("a", "b")), Script: []Outcome{s503, s503, ok},
			Attempts: 3, Waited: exactly(overload), Route: "a b b", Cannot: map[string]string{GRPC: noOverloadMoveGRPC}},
		{Name: "fallback: a 500 is retried on the same target", Policy: with(fallback("a", "b")), Script: []Outcome{s500, ok},
			Attempts: 2, Waited: exactly(step), Route: "a a"},
		{Name: "fallback: a validator's 400 stops on every target alike", Policy: with(fallback("a", "b")), Script: []Outcome{s400},
			Attempts: 1, Reason: recoil.ReasonPermanent, Waited: none, Route: "a"},
		{Name: "fallback: the whole chain counts against MaxAttempts", Policy: with(fallback("a", "b", "c", "d")), Script: []Outcome{s404},
			Attempts: 3, Reason: recoil.ReasonAttempts, Waited: none, Route: "a b c"},
		{Name: "fallback: the retry budget refuses the move", Policy: with(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Budget = refuseRetries{Admit: true}
		}), Script: []Outcome{s404}, Attempts: 1, Reason: recoil.ReasonBudget, Waited: none, Route: "a"},
		{Name: "fallback: a request budget of 0 refuses the move", Policy: with(fallback("a", "b")), Script: []Outcome{s404}, RequestBudget: budgetOf(0),
			Attempts: 1, Reason: recoil.ReasonBudget, Waited: none, Route: "a", Cannot: map[string]string{Sim: noHopZeroSim}},
		{Name: "fallback: the deadline bounds the chain", Policy: with(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Timeout = 300 * time.Millisecond
		}), Script: []Outcome{s404, hang}, Attempts: 2, Reason: recoil.ReasonDeadline, Waited: none, Route: "a b"},
		{Name: "fallback: an open breaker passes its target over", Policy: with(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Fallback.Targets[0].Breaker = OpenBreaker()
		}), Script: []Outcome{ok}, Attempts: 1, Waited: none, Route: "b"},
		{Name: "fallback: every target's breaker open", Policy: with(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Fallback.Targets[0].Breaker, p.Fallback.Targets[1].Breaker = OpenBreaker(), OpenBreaker()
		}), Script: []Outcome{ok}, Attempts: 0, Reason: recoil.ReasonCircuitOpen, Waited: none, Route: ""},
		{Name: "fallback: an exhausted allowance passes its target over", Policy: with(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Fallback.Targets[0].Allowance = refuseRetries{}
		}), Script: []Outcome{ok}, Attempts: 1, Waited: none, Route: "b"},
	}
	for i := range rows {
		if rows[i].Cannot == nil {
			rows[i].Cannot = map[string]string{}
		}
		for k, v := range cannot {
			rows[i].Cannot[k] = v
		}
	}
	return rows
}

// slow is o answering after d.
func slow(o Outcome, d time.Duration) Outcome {
	o.After = d
	return o
}

const (
	noHedgeSim = noCancel
	hedgeDelay = 100 * time.Millisecond
)

func hedged(f func(p *recoil.Policy)) func() *recoil.Policy {
	return with(func(p *recoil.Policy) {
		p.Hedge = &recoil.Hedge{Delay: hedgeDelay}
		if f != nil {
			f(p)
		}
	})
}

// hedgeRows are the rows on a Hedge: an attempt slow to answer is raced
// by another, and every hedge is an attempt of the one policy.
func hedgeRows() []Row {
	cannot := map[string]string{}
	uncancellable := map[string]string{Sim: noHedgeSim}
	return []Row{
		{Name: "hedge: the hedge wins", Policy: hedged(nil), Script: []Outcome{slow(ok, 5*time.Second), slow(ok, 50*time.Millisecond)},
			Attempts: 2, Hedges: 1, Waited: none, Cannot: cannot},
		{Name: "hedge: the first attempt wins", Policy: hedged(nil), Script: []Outcome{slow(ok, 150*time.Millisecond), slow(ok, 5*time.Second)},
			Attempts: 2, Hedges: 1, Waited: none, Cannot: cannot},
		{Name: "hedge: an attempt that answers in time is not raced", Policy: hedged(nil), Script: []Outcome{slow(ok, 50*time.Millisecond)},
			Attempts: 1, Waited: none, Cannot: cannot},
		{Name: "hedge: the budget refuses the hedge, not the call", Policy: hedged(func(p *recoil.Policy) { p.Budget = refuseRetries{Admit: true} }),
			Script: []Outcome{slow(ok, time.Second)}, Attempts: 1, Waited: none, Cannot: cannot},
		{Name: "hedge: cancelled by the caller", Policy: hedged(nil), Script: []Outcome{hang}, CancelAt: 300 * time.Millisecond,
			Attempts: 2, Hedges: 1, Reason: recoil.ReasonCanceled, Waited: none, Cannot: uncancellable},
		{Name: "hedge: a failure waits for the hedge in flight", Policy: hedged(nil), Script: []Outcome{slow(s500, 200*time.Millisecond), slow(ok, 300*time.Millisecond)},
			Attempts: 2, Hedges: 1, Waited: none, Cannot: cannot},
		// The hedge at 100 ms fails at 150 ms: the next goes at once (gRFC
		// A6) and answers at 170 ms, inside the 190 ms timeout; waiting for
		// the re-armed delay (200 ms) would miss it.
		{Name: "hedge: a failed hedge sends the next at once", Policy: hedged(func(p *recoil.Policy) {
			p.MaxAttempts, p.Hedge.MaxHedges, p.Timeout, p.MinAttempt = 3, 2, 190*time.Millisecond, time.Millisecond
		}), Script: []Outcome{slow(ok, 5*time.Second), slow(s500, 50*time.Millisecond), slow(ok, 20*time.Millisecond)},
			Attempts: 3, Hedges: 2, Waited: none, Cannot: cannot},
		{Name: "hedge: MaxAttempts counts hedges", Policy: hedged(func(p *recoil.Policy) {
			p.MaxAttempts, p.Hedge.MaxHedges, p.Timeout = 2, 5, time.Second
		}), Script: []Outcome{hang}, Attempts: 2, Hedges: 1, Reason: recoil.ReasonDeadline, Waited: none, Cannot: cannot},
		{Name: "hedge: a full limiter refuses the hedge", Policy: hedged(func(p *recoil.Policy) {
			p.Limiter = limit.Must(limit.New(limit.Config{Capacity: 1}))
		}), Script: []Outcome{slow(ok, time.Second)}, Attempts: 1, Waited: none, Cannot: cannot},
	}
}

// permitRows are the rows on what an attempt takes and gives back: an
// attempt refused part-way gives back what it was already given, and an
// outcome is recorded against the target its attempt went to.
func permitRows() []Row {
	return []Row{
		{Name: "permit: a refused hedge refunds its target's allowance", Policy: hedged(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Fallback.Targets[0].Allowance = new(Ledger)
			p.Budget = refuseRetries{Admit: true} // asked after the allowance, it refuses the hedge
		}), Script: []Outcome{slow(ok, time.Second)}, Attempts: 1, Waited: none, Route: "a",
			Verify: held(func(p *recoil.Policy) *Ledger { return p.Fallback.Targets[0].Allowance.(*Ledger) }, 0, "target a's allowance")},
		{Name: "permit: a refused request budget refunds the policy's", Policy: with(func(p *recoil.Policy) { p.Budget = new(Ledger) }),
			Script: []Outcome{s500}, RequestBudget: budgetOf(1), Attempts: 2, Reason: recoil.ReasonBudget, Waited: exactly(step),
			// The one retry that went is paid for; the second, which the
			// request's budget refused, is not.
			Verify: held(func(p *recoil.Policy) *Ledger { return p.Budget.(*Ledger) }, 1, "the policy's budget")},
		{Name: "permit: a first target cooled meanwhile is not blamed for another's failure", Policy: with(func(p *recoil.Policy) {
			fallback("a", "b")(p)
			p.Fallback.Targets[1].Breaker = breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OpenDuration: time.Hour}))
		}), Script: []Outcome{s500, ok}, During: coolFirst, Attempts: 2, Waited: exactly(step), Route: "a a",
			Verify: func(p *recoil.Policy) []string {
				if s := p.Fallback.Targets[1].Breaker.(*breaker.Breaker).State(); s != breaker.Closed {
					return []string{"target b's breaker is " + s.String() + ", want closed: b was blamed for a's failure"}
				}
				return nil
			}},
	}
}

// coolFirst is another call through p's Fallback, told by the first
// target that it is overloaded: the target cools down for the Fallback's
// cooldown.
func coolFirst(p *recoil.Policy) {
	other := &recoil.Policy{Fallback: p.Fallback, Budget: recoil.NoBudget, MaxAttempts: 1}
	overloaded := recoil.Mark(errors.New("conformance: overloaded"), recoil.StatusVerdict(503))
	_ = recoil.DoTarget(context.Background(), other, func(context.Context, *recoil.Target) error { return overloaded })
}

// held returns a Verify that the ledger of p that of returns holds want
// charges.
func held(of func(p *recoil.Policy) *Ledger, want int64, what string) func(p *recoil.Policy) []string {
	return func(p *recoil.Policy) []string {
		if got := of(p).Held(); got != want {
			return []string{what + " holds " + strconv.FormatInt(got, 10) + " charges, want " + strconv.FormatInt(want, 10)}
		}
		return nil
	}
}

// A Ledger is a budget that admits every call, pays for every retry and
// hedge, and counts what it was charged and given back: what it holds is
// what the attempts that went cost.
type Ledger struct{ held atomic.Int64 }

// AdmitAt admits the call, charging nothing.
func (l *Ledger) AdmitAt(time.Time) bool { return true }

// RetryAt charges one.
func (l *Ledger) RetryAt(time.Time, budget.Cause) bool { l.held.Add(1); return true }

// RefundAt gives one back.
func (l *Ledger) RefundAt(time.Time, budget.Cause, int64) { l.held.Add(-1) }

// RecordAt does nothing.
func (l *Ledger) RecordAt(time.Time, budget.Outcome) {}

// Held is what the ledger was charged and not given back.
func (l *Ledger) Held() int64 { return l.held.Load() }
