// Package policyparams holds, written anew, calls of a retry helper of
// another package that waits what a BackOff policy handed to it says: a
// constant policy is jitterless at the call, a random one is not.
package policyparams

import (
	"context"
	"net"
	"time"

	"example.com/policyretry"
)

// join dials a peer until it answers, every 300 ms: every member that
// lost the peer together dials it together.
//
// case: flag nojitter
func join(ctx context.Context, addr string) error {
	return policyretry.Until(ctx, policyretry.Interval(300*time.Millisecond), func(ctx context.Context) error { // want `nojitter: policyretry.Until waits a constant or purely exponential schedule between attempts: clients that failed together retry together; hand Until a policy that randomises its waits`
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// joinJittered hands the helper a random policy.
//
// case: clean
func joinJittered(ctx context.Context, addr string) error {
	return policyretry.Until(ctx, policyretry.Jitter(time.Second), func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// joinWith hands on a policy its own caller chose: nothing to judge here.
//
// case: clean
func joinWith(ctx context.Context, addr string, b policyretry.BackOff) error {
	return policyretry.Until(ctx, b, func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// joinOdd hands the helper a policy whose two waits disagree (Next at
// random, Peek its ceiling): which one the helper waits is not in sight.
//
// case: clean
func joinOdd(ctx context.Context, addr string) error {
	return policyretry.Until(ctx, &policyretry.OddBackOff{}, func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}
