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
	// During, if not nil, is called once while the first attempt is in
	// flight, by the dependency as it receives it: what another call
	// through the same policy does meanwhile.
	During func(p *recoil.Policy)
	// Verify, if not nil, checks the row's policy after the call — what
	// its budgets, allowances and breakers were left holding — and returns
	// one line per difference.
	Verify func(p *recoil.Policy) []string

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
			if row.Verify != nil {
				for _, bad := range row.Verify(p) {
					t.Error(bad)
				}
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

// Reached tells the row that the dependency received attempt n (1 is the
// first), and returns its outcome: a driver calls it once per attempt, as
// the attempt arrives, so that During runs while the first is in flight.
func (r *Row) Reached(n int, p *recoil.Policy) Outcome {
	if n == 1 && r.During != nil {
		r.During(p)
	}
	return r.Next(n)
}

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
