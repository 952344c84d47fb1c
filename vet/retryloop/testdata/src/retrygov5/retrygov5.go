// Package retrygov5 holds, written anew, waits for a backend through
// retry-go's fifth version, whose Retrier is made with its options and
// then run: made in place, or kept in a variable first.
package retrygov5

import (
	"context"
	"net"
	"time"

	"github.com/avast/retry-go/v5"
)

func dial(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 250*time.Millisecond)
	if err != nil {
		return err
	}
	return conn.Close()
}

// waitBackend dials until the backend answers, on a doubling delay with
// no random part.
//
// case: flag nojitter
func waitBackend(ctx context.Context, addr string) error {
	return retry.New( // want `nojitter: Retrier.Do waits a constant or purely exponential schedule`
		retry.Context(ctx),
		retry.DelayType(retry.BackOffDelay),
		retry.Delay(500*time.Millisecond),
		retry.UntilSucceeded(),
	).Do(func() error { return dial(addr) })
}

// waitBackendKept is the same wait with the Retrier kept in a variable.
//
// case: flag nojitter
func waitBackendKept(ctx context.Context, addr string) error {
	r := retry.New(retry.Context(ctx), retry.DelayType(retry.BackOffDelay), retry.Attempts(8))
	return r.Do(func() error { return dial(addr) }) // want `nojitter: Retrier.Do waits a constant or purely exponential schedule`
}

// waitBackendJittered leaves the delay to retry-go's default, doubling
// and randomised.
//
// case: clean
func waitBackendJittered(ctx context.Context, addr string) error {
	return retry.New(retry.Context(ctx), retry.Attempts(8)).Do(func() error { return dial(addr) })
}
