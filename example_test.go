package recoil_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

func ExampleDo() {
	// One Policy per dependency, built once: its retry budget is shared by
	// every call to that dependency and by nothing else. (nil means
	// recoil.Default, whose budget every nil caller shares.)
	models := &recoil.Policy{}

	attempts := 0
	err := recoil.Do(context.Background(), models, func(ctx context.Context) error {
		attempts++
		if attempts < 2 {
			return errors.New("connection reset by peer") // unclassified: transient
		}
		return nil
	})
	fmt.Println(attempts, err)
	// Output: 2 <nil>
}

func ExampleDo_permanent() {
	err := recoil.Do(context.Background(), nil, func(ctx context.Context) error {
		return recoil.Permanent(errors.New("400: unknown field tools[0].input_schema"))
	})
	var re *recoil.Error
	if errors.As(err, &re) {
		fmt.Println(re.Attempts, errors.Is(err, recoil.ErrPermanent))
	}
	fmt.Println(err)
	// Output:
	// 1 true
	// recoil: permanent error after 1 attempt: 400: unknown field tools[0].input_schema
}

func ExampleGet() {
	p := &recoil.Policy{MaxAttempts: 4, Backoff: backoff.FullJitter{Base: time.Millisecond, Max: 10 * time.Millisecond}}
	calls := 0
	body, err := recoil.Get(context.Background(), p, func(ctx context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", recoil.Overloaded(errors.New("529 overloaded_error"))
		}
		return `{"content":"hello"}`, nil
	})
	fmt.Println(body, err, calls)
	// Output: {"content":"hello"} <nil> 3
}

// statusError is what an HTTP client library might return.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("status %d", e.code) }

func ExamplePolicy_classify() {
	p := &recoil.Policy{
		Backoff: backoff.None{},
		// Classify before retrying: only 429 and 5xx are worth a second try.
		Classify: func(err error) recoil.Verdict {
			var se *statusError
			if !errors.As(err, &se) {
				return recoil.Verdict{} // no opinion: the built-in rules apply
			}
			switch {
			case se.code == 429:
				return recoil.Verdict{Class: recoil.ClassThrottled, Reason: "rate limited"}
			case se.code >= 500:
				return recoil.Verdict{Class: recoil.ClassTransient, Reason: "server error"}
			default:
				return recoil.Verdict{Class: recoil.ClassPermanent, Reason: fmt.Sprintf("%d will not change", se.code)}
			}
		},
	}
	for _, code := range []int{400, 502} {
		calls := 0
		err := recoil.Do(context.Background(), p, func(ctx context.Context) error {
			calls++
			return &statusError{code: code}
		})
		var re *recoil.Error
		errors.As(err, &re)
		fmt.Printf("%d: %d attempt(s), %v (%s)\n", code, calls, re.Reason, re.Verdict.Reason)
	}
	// Output:
	// 400: 1 attempt(s), permanent error (400 will not change)
	// 502: 3 attempt(s), attempts exhausted (server error)
}

func ExampleSlogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "elapsed" {
				return slog.Attr{} // keep the example's output stable
			}
			return a
		},
	}))
	p := &recoil.Policy{Observe: recoil.SlogObserver(logger)}
	_ = recoil.Do(context.Background(), p, func(ctx context.Context) error {
		return recoil.Permanent(errors.New("400: unknown field tools[0].input_schema"))
	})
	// Output:
	// level=WARN msg="call gave up" attempts=1 waited=0s reason="permanent error" class=permanent why="marked permanent" error="400: unknown field tools[0].input_schema"
}

func ExamplePolicy_Decide() {
	p := &recoil.Policy{Backoff: backoff.Constant(4 * time.Second)}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d := p.Decide(recoil.Failure{
		Attempt:  1,
		Verdict:  recoil.Verdict{Class: recoil.ClassTransient},
		Now:      now,
		Deadline: now.Add(3 * time.Second), // 3 s left, 4 s to wait
	})
	fmt.Println(d.Retry, d.Reason, d.Wait)
	// Output: false deadline 4s
}

// lineDriver is a Driver for a dependency whose answers are lines of text:
// "ok", or a status to fail with.
type lineDriver struct{ answers []string }

func (d *lineDriver) Attempt(_ context.Context, n int, _ time.Time) (string, error) {
	return d.answers[min(n, len(d.answers))-1], nil
}

// Verdict reads a line: "ok" is a success; a status is classified by the
// policy's Classify, then by the status table (the driver's own rule),
// then by the built-in rules.
func (d *lineDriver) Verdict(p *recoil.Policy, line string, err error) (recoil.Verdict, error) {
	switch {
	case err != nil:
		return p.Verdict(err, recoil.Verdict{}), err
	case line == "ok":
		return recoil.Verdict{}, nil
	}
	code, _ := strconv.Atoi(line)
	err = errors.New("status " + line)
	return p.Verdict(err, recoil.StatusVerdict(code)), err
}

func (d *lineDriver) Discard(string) {}

// Drive runs the one retry loop for a driver of your own: the driver makes
// attempts and reads their outcomes; Drive decides everything else.
func ExampleDrive() {
	p := &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}
	answer, err := recoil.Drive(context.Background(), p, &lineDriver{answers: []string{"503", "500", "ok"}})
	fmt.Println(answer, err)

	_, err = recoil.Drive(context.Background(), p, &lineDriver{answers: []string{"404"}})
	fmt.Println(err)
	// Output:
	// ok <nil>
	// recoil: permanent error after 1 attempt: status 404
}

// A driver on a clock of its own steps a Call: Next says what to do, and
// Success or Fail report each attempt. Here a caller on virtual time meets
// two 500s and a success.
func ExampleCall() {
	p := &recoil.Policy{Backoff: backoff.Exponential{Base: time.Second}, Budget: recoil.NoBudget}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := p.Begin(now, time.Time{})
	for n := 1; ; n++ {
		s := c.Next(now)
		if s.Kind != recoil.StepAttempt {
			fmt.Println("stopped:", s.Err)
			return
		}
		now = now.Add(100 * time.Millisecond) // the attempt takes 100 ms
		if n == 3 {
			c.Success(now)
			fmt.Println("succeeded at attempt", n, "after", c.Waited(), "of waits")
			return
		}
		err := errors.New("500")
		s = c.Fail(now, err, p.Verdict(err, recoil.StatusVerdict(500)))
		fmt.Println("attempt", n, "failed; wait", s.Wait)
		now = now.Add(s.Wait)
	}
	// Output:
	// attempt 1 failed; wait 1s
	// attempt 2 failed; wait 2s
	// succeeded at attempt 3 after 3s of waits
}

// StatusVerdict is the status table every driver shares.
func ExampleStatusVerdict() {
	for _, code := range []int{400, 404, 429, 500, 503} {
		fmt.Println(code, recoil.StatusVerdict(code).Class)
	}
	// Output:
	// 400 permanent
	// 404 permanent
	// 429 throttled
	// 500 transient
	// 503 overloaded
}

// Callers that share one policy — one budget, one breaker — can each draw
// their jitter from a seeded stream of their own: a caller waits the same
// waits whatever order the callers' attempts fail in, so a run can be
// repeated. Here each of two callers gives up after its three attempts, and
// the same seed gives the same waits on every run.
func ExampleWithJitter() {
	p := &recoil.Policy{MaxAttempts: 3, Budget: recoil.NoBudget,
		Backoff: backoff.FullJitter{Base: time.Millisecond, Max: 10 * time.Millisecond}}
	for caller := range 2 {
		ctx := recoil.WithJitter(context.Background(), rand.New(rand.NewPCG(1, uint64(caller))))
		var waits []time.Duration
		p.OnAttempt = func(_ context.Context, e recoil.AttemptEvent) {
			if e.Retry {
				waits = append(waits, e.Wait.Round(10*time.Microsecond))
			}
		}
		_ = recoil.Do(ctx, p, func(context.Context) error { return errors.New("down") })
		fmt.Println("caller", caller, "waited", waits)
	}
	// Output:
	// caller 0 waited [600µs 180µs]
	// caller 1 waited [1ms 200µs]
}

// A nightly re-index can wait out a throttled dependency: a five-minute
// Retry-After is honoured, where Interactive would stop the call.
func ExampleBackground() {
	reindex := recoil.Background() // build once per dependency: it holds the budget
	d := reindex.Decide(recoil.Failure{
		Attempt: 1,
		Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: 5 * time.Minute},
	})
	fmt.Println(d.Retry, d.Wait >= 5*time.Minute) // never shorter than asked; jitter may add to it
	// Output: true true
}

// A request a person is waiting on gets one retry at most, and a server
// that asks for more than 2 s stops the call at once: the caller can show
// "try again in 30s" instead of a spinner.
func ExampleInteractive() {
	search := recoil.Interactive()
	calls := 0
	err := recoil.Do(context.Background(), search, func(ctx context.Context) error {
		calls++
		return recoil.RetryAfter(errors.New("429 rate_limit_exceeded"), 30*time.Second)
	})
	var re *recoil.Error
	if errors.As(err, &re) {
		fmt.Println(calls, re.Reason, re.RefusedWait)
	}
	// Output: 1 server wait too long 30s
}

// apiError is an SDK error that reports its HTTP status.
type apiError struct{ status int }

func (e *apiError) Error() string   { return fmt.Sprintf("api: status %d", e.status) }
func (e *apiError) StatusCode() int { return e.status }

// Classify is what a Classifier of your own falls back to: here a driver
// that treats unrecognised errors as permanent still gets the built-in
// answers for cancellation, timeouts and errors that carry a status.
func ExampleClassify() {
	for _, err := range []error{
		context.Canceled,
		fmt.Errorf("read reply: %w", context.DeadlineExceeded),
		fmt.Errorf("create message: %w", &apiError{status: 503}),
		errors.New("unexpected EOF in frame header"),
	} {
		v := recoil.Classify(err, recoil.ClassPermanent)
		fmt.Printf("%-12s timeout=%-5t %v\n", v.Class, v.Timeout, err)
	}
	// Output:
	// canceled     timeout=false context canceled
	// transient    timeout=true  read reply: context deadline exceeded
	// overloaded   timeout=false create message: api: status 503
	// permanent    timeout=false unexpected EOF in frame header
}

var errNoCredit = errors.New("billing: no credit left")

// Mark attaches a full diagnosis, not just a class: the Code reaches the
// caller through *Error, so it can branch on it, and the original error is
// still there for errors.Is.
func ExampleMark() {
	err := recoil.Do(context.Background(), nil, func(ctx context.Context) error {
		return recoil.Mark(errNoCredit, recoil.Verdict{
			Class:  recoil.ClassPermanent,
			Code:   "insufficient_quota",
			Reason: "account out of credit",
		})
	})
	var re *recoil.Error
	if errors.As(err, &re) && re.Verdict.Code == "insufficient_quota" {
		fmt.Println("switch to the fallback provider:", re.Verdict.Reason)
	}
	fmt.Println(errors.Is(err, errNoCredit))
	// Output:
	// switch to the fallback provider: account out of credit
	// true
}

// An overloaded dependency is given room: the wait comes from the policy's
// OverloadBackoff, not from its Backoff.
func ExampleOverloaded() {
	p := &recoil.Policy{
		Backoff:         backoff.Constant(100 * time.Millisecond),
		OverloadBackoff: backoff.Constant(2 * time.Second),
	}
	for _, err := range []error{
		recoil.Transient(errors.New("connection reset by peer")),
		recoil.Overloaded(errors.New("529 overloaded_error")),
	} {
		v := recoil.Classify(err, recoil.ClassUnknown)
		d := p.Decide(recoil.Failure{Attempt: 1, Verdict: v})
		fmt.Println(v.Class, d.Wait)
	}
	// Output:
	// transient 100ms
	// overloaded 2s
}

// Permanent(nil) is nil, so an operation can wrap a step's result
// unconditionally: a reply that does not decode will not decode on a retry
// either.
func ExamplePermanent() {
	var reply struct{ Content string }
	calls := 0
	err := recoil.Do(context.Background(), nil, func(ctx context.Context) error {
		calls++
		body := []byte(`{"content": "hello"`) // truncated by a proxy
		return recoil.Permanent(json.Unmarshal(body, &reply))
	})
	var syntaxErr *json.SyntaxError
	fmt.Println(calls, errors.As(err, &syntaxErr))
	// Output: 1 true
}

// A server-directed wait longer than the policy honours stops the call
// without waiting; the refused wait is in the error, so a job queue can
// schedule the work for later.
func ExampleRetryAfter() {
	p := &recoil.Policy{MaxServerWait: time.Minute}
	err := recoil.Do(context.Background(), p, func(ctx context.Context) error {
		return recoil.RetryAfter(errors.New("429 daily quota exhausted"), 2*time.Hour)
	})
	var re *recoil.Error
	if errors.As(err, &re) && errors.Is(err, recoil.ErrWaitTooLong) {
		fmt.Println("requeue in", re.RefusedWait)
	}
	// Output: requeue in 2h0m0s
}

// Transient overrides a classification the built-in rules would make: this
// SDK's 409 means "the row is locked by another writer", which clears.
func ExampleTransient() {
	p := &recoil.Policy{Backoff: backoff.None{}}
	calls := 0
	err := recoil.Do(context.Background(), p, func(ctx context.Context) error {
		calls++
		if calls < 3 {
			return recoil.Transient(&apiError{status: 409}) // alone, a 409 is permanent
		}
		return nil
	})
	fmt.Println(calls, err)
	// Output: 3 <nil>
}

// VerdictOf finds a verdict attached anywhere down an error's chain, so a
// layer that only wraps errors can still read what a lower one decided.
func ExampleVerdictOf() {
	low := recoil.RetryAfter(errors.New("429 slow down"), 3*time.Second)
	err := fmt.Errorf("sync contacts: page 4: %w", low)
	if v, ok := recoil.VerdictOf(err); ok {
		fmt.Println(v.Class, v.Wait)
	}
	_, ok := recoil.VerdictOf(errors.New("plain"))
	fmt.Println(ok)
	// Output:
	// throttled 3s
	// false
}
