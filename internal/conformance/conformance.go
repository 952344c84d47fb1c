// Package conformance is the table of policy situations that every driver
// of recoil's retry loop must handle alike: recoil.Do on virtual time, the
// HTTP Transport over loopback, the simulator, and the gRPC interceptors
// over loopback. Each driver's test runs
// every row and checks the same attempts, stop reason, error identity and
// waits; a driver that cannot express a row says why in the row (Cannot),
// never by skipping it silently.
package conformance

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

// Drivers, by the names rows use in Cannot.
const (
	Do        = "do"
	Transport = "transport"
	Sim       = "sim"
	GRPC      = "grpc"
)

// noRequestBudget is why Do cannot express a request budget.
const noRequestBudget = "Do takes no request budget: a driver of the hop protocol (the Transport, the gRPC interceptors, the simulator) gives the Call its request's own"

// Kind is how one attempt ends.
type Kind uint8

const (
	// OK succeeds.
	OK Kind = iota
	// Status fails with Outcome.Status (and a server wait, if RetryAfter is set).
	Status
	// Hang never answers: only a deadline or the caller ends it.
	Hang
	// Unknown fails with an error no rule classifies (only a driver whose
	// attempts can fail without a status can express it).
	Unknown
)

// Outcome is what one attempt comes to at the dependency.
type Outcome struct {
	Kind       Kind
	Status     int           // for Status: 400, 404, 429, 500, 503
	RetryAfter time.Duration // a server-directed wait, with Status
	// Code is the provider's error code in the body, with Status:
	// insufficient_quota, context_length_exceeded.
	Code string
	// After is how long the attempt takes to answer; zero answers at once.
	After time.Duration
}

// Shorthands for scripts.
var (
	ok   = Outcome{Kind: OK}
	hang = Outcome{Kind: Hang}
	s400 = Outcome{Kind: Status, Status: 400}
	s404 = Outcome{Kind: Status, Status: 404}
	s429 = Outcome{Kind: Status, Status: 429}
	s500 = Outcome{Kind: Status, Status: 500}
	s503 = Outcome{Kind: Status, Status: 503}
	unk  = Outcome{Kind: Unknown}
	s401 = Outcome{Kind: Status, Status: 401, Code: "invalid_api_key"}
	// quota is OpenAI's 429 for a spent quota; tooLong a prompt longer
	// than the model's context.
	quota   = Outcome{Kind: Status, Status: 429, Code: "insufficient_quota"}
	tooLong = Outcome{Kind: Status, Status: 400, Code: "context_length_exceeded"}
)

func after(status int, d time.Duration) Outcome {
	return Outcome{Kind: Status, Status: status, RetryAfter: d}
}

// Row is one situation.
type Row struct {
	Name string
	// Policy returns a fresh policy for one run (its budget, breaker and
	// limiter state are the run's own).
	Policy func() *recoil.Policy
	// Script is each attempt's outcome; past its end the last repeats.
	Script []Outcome
	// RequestBudget, if not nil, is the hop protocol's budget for the call
	// tree, carried by the request.
	RequestBudget *int
	// CancelAt, if positive, is when the caller gives up (its context is
	// cancelled with ErrCallerLeft).
	CancelAt time.Duration

	// Attempts is how many attempts the dependency sees started.
	Attempts int
	// Reason is why the call stops (ReasonNone: it succeeds;
	// ReasonCanceled: its caller left).
	Reason recoil.Reason
	// Waited bounds the total of the waits the loop decided on.
	Waited [2]time.Duration
	// Refused is the wait the call stopped over, if any.
	Refused time.Duration
	// Route, for a row whose policy has a Fallback, is the target each
	// attempt goes to, by name, separated by spaces.
	Route string
	// Hedges, for a row whose policy has a Hedge, is how many hedges the
	// call starts.
	Hedges int
	// Cannot names the drivers that cannot express the row, and why.
	Cannot map[string]string
}

// Run runs every row through one driver: call makes the row's call under p,
// the row's policy with an observer in place, and Run checks the one
// Summary the call must report. A row the driver cannot express is skipped
// with the row's reason.
func Run(t *testing.T, driver string, call func(t *testing.T, row *Row, p *recoil.Policy)) {
	for _, row := range Rows() {
		t.Run(row.Name, func(t *testing.T) {
			if why, ok := row.Cannot[driver]; ok {
				t.Skip(driver + " cannot express this row: " + why)
			}
			p := row.Policy()
			var (
				mu   sync.Mutex
				sums []recoil.Summary
			)
			p.Observe = func(_ context.Context, s recoil.Summary) { mu.Lock(); sums = append(sums, s); mu.Unlock() }
			events := 0
			var route []string
			p.OnAttempt = func(_ context.Context, e recoil.AttemptEvent) {
				mu.Lock()
				events++
				route = append(route, e.Target)
				mu.Unlock()
			}
			l, _ := p.Limiter.(*limit.Limiter)
			var held int
			if l != nil {
				held = l.InUse()
			}
			call(t, &row, p)
			if l != nil && l.InUse() != held {
				t.Errorf("the limiter holds %d slots after the call, want %d: a slot leaked", l.InUse(), held)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(sums) != 1 {
				t.Fatalf("Observe called %d times, want once", len(sums))
			}
			for _, bad := range row.Check(sums[0]) {
				t.Error(bad)
			}
			// OnAttempt hears of every attempt sent, in every driver; one
			// the caller abandoned mid-flight as canceled.
			if want := row.Attempts; events != want {
				t.Errorf("OnAttempt called %d times, want %d", events, want)
			}
			if got := strings.Join(route, " "); p.Fallback != nil && got != row.Route {
				t.Errorf("attempts went to %q, want %q", got, row.Route)
			}
		})
	}
}

// ErrCallerLeft is the cause a row's caller cancels with.
var ErrCallerLeft = errors.New("conformance: the caller left")

// Next is the outcome of attempt n (1 is the first).
func (r *Row) Next(n int) Outcome {
	if n <= len(r.Script) {
		return r.Script[n-1]
	}
	return r.Script[len(r.Script)-1]
}

// Is is the error the call must end with, for errors.Is: the reason's
// sentinel, ErrCallerLeft for a cancelled call, nil for a success.
func (r *Row) Is() error {
	if r.Reason == recoil.ReasonCanceled {
		return ErrCallerLeft
	}
	return r.Reason.Sentinel()
}

// Check compares a call's Summary with the row; it returns one line per
// difference.
func (r *Row) Check(s recoil.Summary) []string {
	var bad []string
	if s.Attempts != r.Attempts {
		bad = append(bad, "attempts = "+strconv.Itoa(s.Attempts)+", want "+strconv.Itoa(r.Attempts))
	}
	if s.Reason != r.Reason {
		bad = append(bad, "reason = "+s.Reason.String()+", want "+r.Reason.String())
	}
	switch want := r.Is(); {
	case want == nil && s.Err != nil:
		bad = append(bad, "error = "+s.Err.Error()+", want none")
	case want != nil && !errors.Is(s.Err, want):
		bad = append(bad, "error = "+errString(s.Err)+", want one that is "+want.Error())
	}
	if s.Waited < r.Waited[0] || s.Waited > r.Waited[1] {
		bad = append(bad, "waited "+s.Waited.String()+", want within ["+r.Waited[0].String()+", "+r.Waited[1].String()+"]")
	}
	if s.Hedges != r.Hedges {
		bad = append(bad, "hedges = "+strconv.Itoa(s.Hedges)+", want "+strconv.Itoa(r.Hedges))
	}
	if s.RefusedWait != r.Refused {
		bad = append(bad, "refused wait "+s.RefusedWait.String()+", want "+r.Refused.String())
	}
	return bad
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// StatusError is the error Do's attempts fail with: it reports its status
// the way the clients of many HTTP APIs do, and carries a server wait.
type StatusError struct {
	Code int
	Wait time.Duration
}

func (e *StatusError) Error() string { return "status " + strconv.Itoa(e.Code) }

// StatusCode reports the status, for recoil's built-in rules.
func (e *StatusError) StatusCode() int { return e.Code }

// Err is the error a Do attempt fails with for o: a *StatusError (with a
// server wait marked on it, classed as its status is), or an error nothing
// classifies.
func (o Outcome) Err() error {
	switch o.Kind {
	case Status:
		err := error(&StatusError{Code: o.Status})
		if o.Code != "" {
			// As recoilhttp.Classify reads the provider's body: the
			// code is kept, and a 429 for a spent quota is permanent.
			v := recoil.StatusVerdict(o.Status)
			v.Code = o.Code
			if o.Status == 429 {
				v.Class = recoil.ClassPermanent
			}
			return recoil.Mark(err, v)
		}
		if o.RetryAfter > 0 {
			v := recoil.StatusVerdict(o.Status)
			v.Wait = o.RetryAfter
			err = recoil.Mark(err, v)
		}
		return err
	case Unknown:
		return errors.New("conformance: an error nothing classifies")
	}
	return nil
}

// Schedules the rows use, short enough for real time over loopback.
const (
	step     = 20 * time.Millisecond // the backoff
	overload = 30 * time.Millisecond // the overload backoff

	// attemptCut bounds a row's attempt, or the time until its caller
	// leaves, where an attempt that answers must finish first: long enough
	// that a loopback attempt on a busy machine (a new connection, -race)
	// is never cut by mistake. On virtual time it costs nothing.
	attemptCut = 500 * time.Millisecond
)

func base() *recoil.Policy {
	return &recoil.Policy{
		Backoff:         backoff.Constant(step),
		OverloadBackoff: backoff.Constant(overload),
		Budget:          recoil.NoBudget,
	}
}

func with(f func(p *recoil.Policy)) func() *recoil.Policy {
	return func() *recoil.Policy {
		p := base()
		f(p)
		return p
	}
}

func budgetOf(n int) *int { return &n }

func exactly(d time.Duration) [2]time.Duration { return [2]time.Duration{d, d} }

// serverWait bounds a server-directed wait d: never shortened, up to a
// tenth more as jitter.
func serverWait(d time.Duration) [2]time.Duration { return [2]time.Duration{d, d + d/10} }

// RefuseRetries is a budget that refuses every retry, and every call too
// unless admit is set: a retry budget that is spent, or an allowance.
type RefuseRetries struct{ Admit bool }

// AdmitAt admits the call if Admit is set.
func (b RefuseRetries) AdmitAt(time.Time) bool { return b.Admit }

// RetryAt refuses.
func (RefuseRetries) RetryAt(time.Time, budget.Cause) bool { return false }

// RecordAt does nothing.
func (RefuseRetries) RecordAt(time.Time, budget.Outcome) {}

type refuseRetries = RefuseRetries

// OpenBreaker returns a breaker already open for an hour.
func OpenBreaker() *breaker.Breaker {
	b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OpenDuration: time.Hour}))
	b.AllowAt(time.Time{})
	b.RecordAt(time.Time{}, breaker.Failure)
	return b
}

// fullLimiter returns a limiter whose one slot is held for good.
func fullLimiter(c limit.Config) *limit.Limiter {
	l := limit.Must(limit.New(c))
	if !l.TryAcquire() {
		panic("conformance: a new limiter has no free slot")
	}
	return l
}

const noCancel = "the simulator's callers have no context to cancel: a call ends by its deadline (Timeout) or its outcome"

// none is the Waited of a row that never waits.
var none = exactly(0)

// Rows is the table.
func Rows() []Row {
	return slices.Concat(attemptRows(), waitRows(), timeRows(), guardRows(), cancelRows(), classifyRows(), fallbackRows(), hedgeRows())
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
			Cannot: map[string]string{Sim: "in the simulator a hop budget of 0 turns the protocol off; the budget-of-1 row covers it", Do: noRequestBudget}},
		{Name: "request budget of 1: one retry", Policy: base, Script: []Outcome{s500}, RequestBudget: budgetOf(1),
			Attempts: 2, Reason: recoil.ReasonBudget, Waited: exactly(step),
			Cannot: map[string]string{Do: noRequestBudget}},
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
			Attempts: 1, Reason: recoil.ReasonBudget, Waited: none, Route: "a", Cannot: map[string]string{Do: noRequestBudget, Sim: noHopZeroSim}},
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
