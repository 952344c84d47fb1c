package recoil_test

import (
	"context"
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

func (d *lineDriver) Verdict(line string, err error) (error, recoil.Verdict) {
	if err != nil || line == "ok" {
		return err, recoil.Verdict{}
	}
	code, _ := strconv.Atoi(line)
	return errors.New("status " + line), recoil.StatusVerdict(code)
}

func (d *lineDriver) Guard(v recoil.Verdict) recoil.Verdict { return v }
func (d *lineDriver) Discard(string)                        {}

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
		s = c.Fail(now, err, c.Verdict(err, recoil.StatusVerdict(500)))
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
