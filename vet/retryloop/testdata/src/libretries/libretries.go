// Package libretries holds, written anew, calls that hand their work to a
// retry library (sethvargo/go-retry, avast/retry-go, Rican7/retry): the
// wait is the library's, its schedule the options the call gives it.
package libretries

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"time"

	rican "github.com/Rican7/retry"
	"github.com/Rican7/retry/backoff"
	"github.com/Rican7/retry/strategy"
	retrygo "github.com/avast/retry-go/v4"
	"github.com/sethvargo/go-retry"
)

var errBusy = errors.New("busy")

// A constant backoff, bounded, never jittered: every client that found
// the lock held probes again in step.
//
// case: flag nojitter
func lockConstant(ctx context.Context, try func(context.Context) (bool, error)) error {
	b := retry.WithMaxRetries(5, retry.NewConstant(time.Second))
	return retry.Do(ctx, b, func(ctx context.Context) error { // want `nojitter: retry.Do waits a constant or purely exponential schedule`
		ok, err := try(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return retry.RetryableError(errBusy)
		}
		return nil
	})
}

// The same backoff with WithJitterPercent inside the bound.
//
// case: clean
func lockJittered(ctx context.Context, try func(context.Context) error) error {
	return retry.Do(ctx, retry.WithMaxRetries(5, retry.WithJitterPercent(25, retry.NewConstant(time.Second))), func(ctx context.Context) error {
		if err := try(ctx); err != nil {
			return retry.RetryableError(err)
		}
		return nil
	})
}

// probe is a lock's probing configuration.
type probe struct {
	interval time.Duration
	max      uint64
}

var defaultProbe = probe{interval: 5 * time.Second, max: 60}

// backoff is the probe's schedule: its interval, every time.
func (p probe) backoff() retry.Backoff {
	constant := retry.BackoffFunc(func() (time.Duration, bool) {
		return p.interval, false
	})
	return retry.WithMaxRetries(p.max, constant)
}

// locker holds a lock by polling.
type locker struct{ probe probe }

// A backoff a method of the package builds from its own BackoffFunc:
// a constant interval.
//
// case: flag nojitter
func (l *locker) lock(ctx context.Context, try func(context.Context) (bool, error)) error {
	return retry.Do(ctx, l.probe.backoff(), func(ctx context.Context) error { // want `nojitter: retry.Do waits a constant or purely exponential schedule`
		ok, err := try(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return retry.RetryableError(errBusy)
		}
		return nil
	})
}

// A backoff the caller hands in: its schedule is the caller's.
//
// case: clean
func lockWith(ctx context.Context, b retry.Backoff, try func(context.Context) error) error {
	return retry.Do(ctx, b, func(ctx context.Context) error {
		return retry.RetryableError(try(ctx))
	})
}

// retry-go told to double its delay and nothing else: no RandomDelay;
// every 5xx goes round, a 503 too, on that schedule and not the server's.
//
// case: flag nojitter retryafter
func fetchDoubling(ctx context.Context, hc *http.Client, req *http.Request) error {
	return retrygo.Do(func() error { // want `nojitter: retry.Do waits a constant or purely exponential schedule` `retryafter: retry.Do retries 503 without reading Retry-After`
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			return errBusy
		}
		return nil
	}, retrygo.DelayType(retrygo.BackOffDelay), retrygo.Attempts(5), retrygo.Context(ctx))
}

// retry-go's default delay adds a RandomDelay to the doubling one.
//
// case: clean
func fetchDefault(ctx context.Context, do func(context.Context) error) error {
	return retrygo.Do(func() error { return do(ctx) }, retrygo.Attempts(5), retrygo.Context(ctx))
}

// A doubling delay combined with a random one.
//
// case: clean
func fetchCombined(ctx context.Context, do func(context.Context) error) error {
	return retrygo.Do(func() error { return do(ctx) },
		retrygo.DelayType(retrygo.CombineDelay(retrygo.BackOffDelay, retrygo.RandomDelay)), retrygo.Context(ctx))
}

// A readiness wait: options spread from a slice the function builds
// before the caller's own, a doubling delay, and no retry.Context, so the
// library waits on a context of its own while ctx is in scope.
//
// case: flag nojitter deafwait
func waitReady(ctx context.Context, hc *http.Client, url string, opts ...retrygo.Option) error {
	return retrygo.Do(func() error { // want `nojitter: retry.Do waits` `deafwait: retry.Do waits on a context of its own \(context.Background\) and cannot hear ctx`
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errBusy
		}
		return nil
	}, append([]retrygo.Option{
		retrygo.DelayType(retrygo.BackOffDelay),
		retrygo.Delay(time.Second),
		retrygo.Attempts(20),
	}, opts...)...)
}

// rateLimited carries the server's wait.
type rateLimited struct{ RetryAfter time.Duration }

func (e *rateLimited) Error() string { return "rate limited" }

// options are the package's retry settings, with the server's wait when
// the error carries one and else a doubling delay.
func options(attempts uint, retryIf func(error) bool) []retrygo.Option {
	opts := []retrygo.Option{
		retrygo.Attempts(attempts),
		retrygo.DelayType(func(n uint, err error, c *retrygo.Config) time.Duration {
			var rl *rateLimited
			if errors.As(err, &rl) && rl.RetryAfter > 0 {
				return rl.RetryAfter
			}
			return retrygo.BackOffDelay(n, err, c)
		}),
	}
	if retryIf != nil {
		opts = append(opts, retrygo.RetryIf(retryIf))
	}
	return opts
}

// Options from a helper of the package: a doubling delay unless the
// server said when.
//
// case: flag nojitter
func send(attempts uint, do func() error, retryIf func(error) bool) error {
	return retrygo.Do(do, options(attempts, retryIf)...) // want `nojitter: retry.Do waits`
}

// Options only the caller gives: retry-go's default, jittered, decides.
//
// case: clean
func sendWith(do func() error, opts ...retrygo.Option) error {
	return retrygo.Do(do, opts...)
}

// An insert retried through a Rican7 strategy kept in a variable: a
// linear time.Sleep, no randomness, while ctx is in scope.
//
// case: flag nojitter deafwait
func insert(ctx context.Context, db *sql.DB, q string, retryable func(error) bool) error {
	wait := strategy.Backoff(backoff.Linear(100 * time.Millisecond))
	var err error
	for i := range uint(20) {
		_, err = db.ExecContext(ctx, q)
		if err == nil || !retryable(err) {
			return err
		}
		wait(i) // want `nojitter: wait in a retry loop` `deafwait: wait waits with time.Sleep and cannot hear ctx`
	}
	return err
}

// The same with BackoffWithJitter: still a time.Sleep, deaf to ctx.
//
// case: flag deafwait
func insertJittered(ctx context.Context, db *sql.DB, q string, retryable func(error) bool) error {
	wait := strategy.BackoffWithJitter(backoff.Linear(100 * time.Millisecond))
	var err error
	for i := range uint(20) {
		_, err = db.ExecContext(ctx, q)
		if err == nil || !retryable(err) {
			return err
		}
		wait(i) // want `deafwait: wait waits with time.Sleep`
	}
	return err
}

// newBackoff is a constructor in the shape of go-retry's first releases,
// which handed back an error beside the backoff.
func newBackoff(d time.Duration) (retry.Backoff, error) {
	return retry.NewExponential(d), nil
}

// A backoff taken from a pair (b, err := …): doubling, never jittered.
//
// case: flag nojitter
func lockPair(ctx context.Context, try func(context.Context) error) error {
	b, err := newBackoff(time.Second)
	if err != nil {
		return err
	}
	return retry.Do(ctx, b, func(ctx context.Context) error { // want `nojitter: retry.Do waits`
		return retry.RetryableError(try(ctx))
	})
}

// retry-go told to retry until it succeeds, with no context: only a
// success ends it.
//
// case: flag unbounded
func connectForever(connect func() error) error {
	return retrygo.Do(connect, retrygo.Attempts(0)) // want `unbounded: retry.Do retries until it succeeds`
}

// The same with a context: its end stops the retries.
//
// case: clean
func connectUntilDone(ctx context.Context, connect func() error) error {
	return retrygo.Do(connect, retrygo.UntilSucceeded(), retrygo.Context(ctx))
}

// Until it succeeds, but the caller's options may bring a count or a
// context.
//
// case: clean
func connectWith(connect func() error, opts ...retrygo.Option) error {
	return retrygo.Do(connect, append([]retrygo.Option{retrygo.UntilSucceeded()}, opts...)...)
}

// delay is the package's DelayTypeFunc: the server's wait when the
// error carries one, else a doubling delay.
func delay(n uint, err error, c *retrygo.Config) time.Duration {
	var rl *rateLimited
	if errors.As(err, &rl) && rl.RetryAfter > 0 {
		return rl.RetryAfter
	}
	return retrygo.BackOffDelay(n, err, c)
}

// A DelayType that is a function of the package: doubling unless the
// server said when.
//
// case: flag nojitter
func sendDelay(ctx context.Context, do func() error) error {
	return retrygo.Do(do, retrygo.Context(ctx), retrygo.DelayType(delay)) // want `nojitter: retry.Do waits`
}

// jitteredDelay adds a random delay to the doubling one.
func jitteredDelay(n uint, err error, c *retrygo.Config) time.Duration {
	return retrygo.CombineDelay(retrygo.BackOffDelay, retrygo.RandomDelay)(n, err, c)
}

// A DelayType of the package's own that adds a RandomDelay.
//
// case: clean
func sendJitteredDelay(ctx context.Context, do func() error) error {
	return retrygo.Do(do, retrygo.Context(ctx), retrygo.DelayType(jitteredDelay))
}

// Rican7's Retry with a linear backoff strategy, bounded: its waits are
// time.Sleep, pure, and deaf to ctx.
//
// case: flag nojitter deafwait
func save(ctx context.Context, db *sql.DB, q string) error {
	return rican.Retry(func(uint) error { // want `nojitter: retry.Retry waits a constant` `deafwait: retry.Retry waits with time.Sleep in its strategies and cannot hear ctx`
		_, err := db.ExecContext(ctx, q)
		return err
	}, strategy.Limit(5), strategy.Backoff(backoff.Linear(100*time.Millisecond)))
}

// The same with BackoffWithJitter and no context in scope.
//
// case: clean
func saveJittered(db *sql.DB, q string) error {
	return rican.Retry(func(uint) error {
		_, err := db.Exec(q)
		return err
	}, strategy.Limit(5), strategy.BackoffWithJitter(backoff.Linear(100*time.Millisecond)))
}

// Only a limit: no wait at all, nothing to jitter or to hear.
//
// case: clean
func saveAtOnce(ctx context.Context, db *sql.DB, q string) error {
	return rican.Retry(func(uint) error {
		_, err := db.ExecContext(ctx, q)
		return err
	}, strategy.Limit(3))
}

// go-retry on context.Background with a doubling backoff no
// WithMaxRetries caps: only success ends it.
//
// case: flag nojitter unbounded
func register(try func(context.Context) error) error {
	ctx := context.Background()
	return retry.Do(ctx, retry.NewExponential(time.Second), func(ctx context.Context) error { // want `nojitter: retry.Do waits` `unbounded: retry.Do retries until it succeeds on context.Background`
		return retry.RetryableError(try(ctx))
	})
}

// The same, capped at five retries.
//
// case: flag nojitter
func registerCapped(try func(context.Context) error) error {
	return retry.Do(context.Background(), retry.WithMaxRetries(5, retry.NewExponential(time.Second)), func(ctx context.Context) error { // want `nojitter: retry.Do waits`
		return retry.RetryableError(try(ctx))
	})
}

// The caller's context can end it.
//
// case: flag nojitter
func registerUntil(ctx context.Context, try func(context.Context) error) error {
	return retry.Constant(ctx, time.Second, func(ctx context.Context) error { // want `nojitter: retry.Constant waits`
		return retry.RetryableError(try(ctx))
	})
}

// retry.Constant on context.TODO: a constant second, forever.
//
// case: flag nojitter unbounded
func registerForever(try func(context.Context) error) error {
	return retry.Constant(context.TODO(), time.Second, func(ctx context.Context) error { // want `nojitter: retry.Constant waits` `unbounded: retry.Constant retries until it succeeds`
		return retry.RetryableError(try(ctx))
	})
}

// Only a Delay before the first attempt: a time.Sleep deaf to ctx, but no
// wait between attempts to jitter.
//
// case: flag deafwait
func saveLater(ctx context.Context, db *sql.DB, q string) error {
	return rican.Retry(func(uint) error { // want `deafwait: retry.Retry waits with time.Sleep`
		_, err := db.ExecContext(ctx, q)
		return err
	}, strategy.Limit(3), strategy.Delay(time.Second))
}
