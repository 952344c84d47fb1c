// Package heldpolicy holds, written anew, loops paced by another
// package's Retry that keeps the Backoff policy its constructor is handed:
// a steady policy built in sight paces every client alike, a spread one
// does not, and one the caller hands in is the caller's to judge.
package heldpolicy

import (
	"context"
	"errors"
	"net/http"
	"time"

	"example.com/heldretry"
)

var errRejected = errors.New("rejected")

// send posts once and hands back a transport error or a refusal.
func send(ctx context.Context, c *http.Client, req *http.Request) error {
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return errRejected
	}
	return nil
}

// A webhook re-sent on a transport error every five seconds, three times
// at most: every replica that lost the receiver together comes back
// together.
//
// case: flag nojitter
func notifySteady(ctx context.Context, c *http.Client, req *http.Request) error {
	retry := heldretry.NewRetry(3, heldretry.Steady(5*time.Second))
	for retry.WaitNext(ctx) { // want `nojitter: WaitNext in a retry loop has a constant or purely exponential duration`
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return errRejected
		}
		return nil
	}
	return ctx.Err()
}

// The same webhook paced by a spread policy.
//
// case: clean
func notifySpread(ctx context.Context, c *http.Client, req *http.Request) error {
	retry := heldretry.NewRetry(3, heldretry.Spread(time.Second, time.Minute))
	for retry.WaitNext(ctx) {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return errRejected
		}
		return nil
	}
	return ctx.Err()
}

// The webhook handed to Do on a steady minute, the policy built a line
// before.
//
// case: flag nojitter
func pushSteady(ctx context.Context, c *http.Client, req *http.Request) error {
	every := heldretry.Steady(time.Minute)
	_, err := heldretry.NewRetry(4, every).Do(ctx, func() (any, error) { // want `nojitter: Retry.Do waits a constant or purely exponential schedule between attempts: clients that failed together retry together; build it with a policy that randomises its waits`
		return nil, send(ctx, c, req)
	})
	return err
}

// The same handed to Do on a spread policy.
//
// case: clean
func pushSpread(ctx context.Context, c *http.Client, req *http.Request) error {
	r := heldretry.NewRetry(4, heldretry.Spread(time.Second, time.Minute))
	_, err := r.Do(ctx, func() (any, error) {
		return nil, send(ctx, c, req)
	})
	return err
}

// A policy the caller hands in: its schedule is the caller's choice.
//
// case: clean
func pushWith(ctx context.Context, c *http.Client, req *http.Request, b heldretry.Backoff) error {
	_, err := heldretry.NewRetry(4, b).Do(ctx, func() (any, error) {
		return nil, send(ctx, c, req)
	})
	return err
}

// A Retry the caller hands in, whatever it was built with.
//
// case: clean
func notifyWith(ctx context.Context, c *http.Client, req *http.Request, retry heldretry.Retry) error {
	for retry.WaitNext(ctx) {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			continue
		}
		resp.Body.Close()
		return nil
	}
	return ctx.Err()
}
