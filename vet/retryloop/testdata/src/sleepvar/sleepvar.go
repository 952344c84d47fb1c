// want package:"offline"

// Package sleepvar holds, written anew, retry loops that pause through a
// function kept in a variable — a package variable its tests could swap,
// or a local literal — whose duration is the call's argument.
package sleepvar

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"
)

var pause = func(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func cubic(tries int) time.Duration {
	return time.Duration(tries*tries*tries) * 10 * time.Second
}

// retryRateLimited retries an operation the API turned away for its rate
// limit, waiting 10, 80, 270 s… through the package's pause: no rand.
//
// case: flag nojitter
func retryRateLimited(ctx context.Context, op func() error) error {
	for tries := 1; ; tries++ {
		err := op()
		if err == nil {
			return nil
		}
		if !strings.Contains(err.Error(), "rate limit") {
			return err
		}
		if err := pause(ctx, cubic(tries)); err != nil { // want `nojitter: pause in a retry loop has a constant or purely exponential duration`
			return err
		}
	}
}

// retryRateLimitedJittered is its twin with a random wait up to the cube.
//
// case: clean
func retryRateLimitedJittered(ctx context.Context, op func() error) error {
	for tries := 1; ; tries++ {
		err := op()
		if err == nil {
			return nil
		}
		if !strings.Contains(err.Error(), "rate limit") {
			return err
		}
		if err := pause(ctx, rand.N(cubic(tries))); err != nil {
			return err
		}
	}
}

// retryLocalPause keeps its pause in a local literal.
//
// case: flag nojitter
func retryLocalPause(ctx context.Context, op func() error) error {
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for tries := 1; tries <= 5; tries++ {
		err := op()
		if err == nil || !strings.Contains(err.Error(), "rate limit") {
			return err
		}
		if !wait(time.Duration(tries) * 2 * time.Second) { // want `nojitter: wait in a retry loop has a constant or purely exponential duration`
			return ctx.Err()
		}
	}
	return errors.New("rate limited five times")
}

// forkAndWait calls the retrying helper, and while the fork it asked for
// is not there yet, asks again after a fixed sleep: the helper is an
// attempt that may wait inside, and the loop's own sleep is a retry's.
//
// case: flag nojitter deafwait
func forkAndWait(ctx context.Context, get func() error) error {
	for i := 0; i < 10; i++ {
		if err := retryRateLimitedJittered(ctx, get); err != nil {
			time.Sleep(3 * time.Second) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop`
			continue
		}
		return nil
	}
	return errors.New("fork not ready")
}

// fetchOnce is an attempt that retries by itself: it waits only between
// its own tries.
func fetchOnce(ctx context.Context, get func(context.Context) error) error {
	var err error
	for try := range 3 {
		if err = get(ctx); err == nil {
			return nil
		}
		if err := pause(ctx, rand.N(time.Duration(try+1)*time.Second)); err != nil {
			return err
		}
	}
	return err
}

// syncAll retries the whole fetch after a fixed minute: fetchOnce's error
// is its attempt's, not a pause's.
//
// case: flag nojitter
func syncAll(ctx context.Context, get func(context.Context) error) error {
	for range 5 {
		err := fetchOnce(ctx, get)
		if err == nil {
			return nil
		}
		if err := pause(ctx, time.Minute); err != nil { // want `nojitter: pause in a retry loop has a constant or purely exponential duration`
			return err
		}
	}
	return errors.New("sync failed five times")
}
