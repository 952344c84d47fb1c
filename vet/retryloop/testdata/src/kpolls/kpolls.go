// want package:"offline"

// Package kpolls holds, written anew, apimachinery wait calls around a
// condition: a poll goes round until the condition says done, and is a
// retry where the condition answers "not yet" on a failure it tested.
package kpolls

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
)

type object struct{ ready bool }

type client struct{ name string }

func (c *client) update(ctx context.Context) error                 { return nil }
func (c *client) get(ctx context.Context) (*object, error)         { return &object{}, nil }
func (c *client) create(ctx context.Context, o *object) error      { return nil }
func (c *client) deleteGroup(ctx context.Context, id string) error { return nil }

var errDependency = errors.New("dependency violation")

// Every failed update goes round after the same two seconds.
//
// case: flag nojitter
func retryUpdate(ctx context.Context, c *client) error {
	return wait.PollUntilContextTimeout(ctx, 2*time.Second, time.Minute, true, func(ctx context.Context) (bool, error) { // want `nojitter: wait.PollUntilContextTimeout goes round on a failure \(err != nil\) every constant interval`
		if err := c.update(ctx); err != nil {
			return false, nil
		}
		return true, nil
	})
}

// Waits for the object to appear and be ready: not found goes round, any
// other error ends it.
//
// case: clean
func waitReady(ctx context.Context, c *client) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		o, err := c.get(ctx)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return o.ready, nil
	})
}

// Waits for the object to go: goes round while it is still there (a
// success).
//
// case: clean
func waitDeleted(ctx context.Context, c *client) error {
	return wait.PollUntilContextCancel(ctx, time.Second, false, func(ctx context.Context) (bool, error) {
		_, err := c.get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, nil
	})
}

// A method value whose conflict goes round every constant 500ms.
//
// case: flag nojitter
func (c *client) createAll(ctx context.Context) error {
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, c.tryCreate) // want `nojitter: wait.PollUntilContextCancel goes round on a failure \(apierrors.IsConflict\(err\)\)`
}

func (c *client) tryCreate(ctx context.Context) (bool, error) {
	err := c.create(ctx, &object{})
	if apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// The context in scope is never heard, and every failure goes round on a
// constant second.
//
// case: flag nojitter deafwait
func retryDeaf(ctx context.Context, c *client) error {
	return wait.PollImmediate(time.Second, time.Minute, func() (bool, error) { // want `deafwait: wait.PollImmediate polls on a context of its own \(context.Background\) and cannot hear ctx` `nojitter: wait.PollImmediate goes round on a failure`
		return c.update(ctx) == nil, nil
	})
}

// Polls state with a context it cannot hear: deaf, but not a retry.
//
// case: flag deafwait
func readyDeaf(ctx context.Context, c *client) error {
	return wait.PollImmediate(time.Second, time.Minute, func() (bool, error) { // want `deafwait: wait.PollImmediate polls on a context of its own`
		o, err := c.get(ctx)
		if err != nil {
			return false, err
		}
		return o.ready, nil
	})
}

// No context anywhere to hear, and a state poll.
//
// case: clean
func readyLocal(c *client) error {
	return wait.PollImmediate(time.Second, time.Minute, func() (bool, error) {
		o, err := c.get(context.Background())
		return err == nil && o.ready, err
	})
}

// Returns when it worked; what follows runs only on a failure, which
// goes round on a doubling schedule with no Jitter.
//
// case: flag nojitter
func tagBackoff(c *client) error {
	b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 9}
	return wait.ExponentialBackoff(b, func() (bool, error) { // want `nojitter: wait.ExponentialBackoff waits a constant or purely exponential schedule`
		err := c.update(context.Background())
		if err == nil {
			return true, nil
		}
		return false, nil
	})
}

// The same retry with a Jitter.
//
// case: clean
func tagJittered(ctx context.Context, c *client) error {
	b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 9, Jitter: 0.5}
	return wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (bool, error) {
		if err := c.update(ctx); err != nil {
			return false, nil
		}
		return true, nil
	})
}

// A doubling schedule that waits for readiness: a not-ready answer goes
// round, an error ends it. A poll, not a retry.
//
// case: clean
func readyBackoff(ctx context.Context, c *client) error {
	b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 9}
	return wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (bool, error) {
		o, err := c.get(ctx)
		if err != nil {
			return false, err
		}
		return o.ready, nil
	})
}

// Each client polls on an interval of its own, jittered once.
//
// case: clean
func retryJitteredInterval(ctx context.Context, c *client) error {
	return wait.PollUntilContextCancel(ctx, wait.Jitter(time.Second, 1), true, func(ctx context.Context) (bool, error) {
		return c.update(ctx) == nil, nil
	})
}

// A tagless switch: a conflict goes round, every constant 100ms.
//
// case: flag nojitter
func switchConflict(ctx context.Context, c *client) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, false, func(ctx context.Context) (bool, error) { // want `nojitter: wait.PollUntilContextTimeout goes round on a failure \(apierrors.IsConflict\(err\)\)`
		err := c.update(ctx)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsConflict(err):
			return false, nil
		default:
			return false, err
		}
	})
}

// Deletes each group; only a dependency violation (the load balancer
// still detaching) goes round, every constant five seconds.
//
// case: flag nojitter
func deleteGroups(ctx context.Context, c *client, ids []string) error {
	cond := func(ctx context.Context) (bool, error) {
		for _, id := range ids {
			if err := c.deleteGroup(ctx, id); err != nil {
				if errors.Is(err, errDependency) {
					return false, nil
				}
				return false, err
			}
		}
		return true, nil
	}
	return wait.PollUntilContextTimeout(ctx, 5*time.Second, 10*time.Minute, true, cond) // want `nojitter: wait.PollUntilContextTimeout goes round on a failure \(errors.Is\(err, errDependency\)\)`
}

// An error ends it; what goes round is a success that is not yet ready,
// after the earlier test returned.
//
// case: clean
func readyAfterCheck(ctx context.Context, c *client) error {
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		o, err := c.get(ctx)
		if err != nil {
			return false, err
		}
		if !o.ready {
			return false, nil
		}
		return true, nil
	})
}

// Polls readiness and rides out a failed read on the same interval: the
// interval paces the polling as much as the retries, as one wait at the
// end of a polling loop does.
//
// case: clean
func readyOrRetry(ctx context.Context, c *client) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		o, err := c.get(ctx)
		if err != nil {
			return false, nil
		}
		return o.ready, nil
	})
}
