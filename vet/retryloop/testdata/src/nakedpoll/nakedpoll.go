// Package nakedpoll holds, written anew, conditions handed to
// apimachinery's backoff that end in naked returns of named results: a
// failed probe returns with done still false (its zero value), and only a
// probe that got through sets done.
package nakedpoll

import (
	"context"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func probe(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

func state(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// reachable retries a failed probe every constant 4 s: the naked return
// on the failure gives (false, nil), "not yet".
//
// case: flag nojitter
func reachable(ctx context.Context, addr string) error {
	b := wait.Backoff{Duration: 4 * time.Second, Factor: 1, Steps: 3}
	return wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (done bool, _ error) { // want `nojitter: wait.ExponentialBackoffWithContext waits a constant or purely exponential schedule`
		if err := probe(ctx, addr); err != nil {
			return
		}
		done = true
		return
	})
}

// reachableJittered is its twin with a jittered backoff.
//
// case: clean
func reachableJittered(ctx context.Context, addr string) error {
	b := wait.Backoff{Duration: 4 * time.Second, Factor: 1, Jitter: 0.5, Steps: 3}
	return wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (done bool, _ error) {
		if err := probe(ctx, addr); err != nil {
			return
		}
		done = true
		return
	})
}

// up polls the peer's state: a failed read ends the wait with its error,
// and a state not "up" yet goes round, a success that says "not yet".
//
// case: clean
func up(ctx context.Context, addr string) error {
	b := wait.Backoff{Duration: time.Second, Factor: 1, Steps: 30}
	return wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (ready bool, err error) {
		var st string
		if st, err = state(ctx, addr); err != nil {
			return
		}
		ready = st == "up"
		return
	})
}
