// Package pkgopts holds, written anew, retry-go calls whose options are a
// package variable spread with one option added in place: the
// variable's initializer is the package's choice of schedule.
package pkgopts

import (
	"context"
	"net"
	"time"

	"github.com/avast/retry-go/v4"
)

var layerRetry = []retry.Option{
	retry.Attempts(6),
	retry.DelayType(retry.BackOffDelay),
	retry.Delay(5 * time.Second),
}

var manifestRetry = []retry.Option{
	retry.Attempts(6),
	retry.Delay(5 * time.Second),
}

func fetch(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// copyLayer retries on the package's doubling schedule, which has no
// random part.
//
// case: flag nojitter
func copyLayer(ctx context.Context, addr string) error {
	return retry.Do(func() error { return fetch(ctx, addr) }, append(layerRetry, retry.Context(ctx))...) // want `nojitter: retry.Do waits a constant or purely exponential schedule`
}

// copyManifest leaves the delay to retry-go's default, which adds a
// random part.
//
// case: clean
func copyManifest(ctx context.Context, addr string) error {
	return retry.Do(func() error { return fetch(ctx, addr) }, append(manifestRetry, retry.Context(ctx))...)
}
