package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
		// Classify before retrying (seed 002): only 429 and 5xx are worth a second try.
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
