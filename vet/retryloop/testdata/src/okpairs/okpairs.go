// want package:"offline"

// Package okpairs holds, written anew, conditions of apimachinery's
// ExponentialBackoff that answer with a helper's "it worked" beside its
// error (done, last = c.syncOnce(ctx)): false there is a failure, so the
// condition goes round on failures only, a retry; and the library's
// time.Sleep between tries, which no caller's context reaches.
package okpairs

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

type source interface {
	List(ctx context.Context) ([]string, error)
	Ready(ctx context.Context) (bool, error)
}

type cache struct {
	src   source
	items []string
	err   error
}

func (c *cache) store(items []string) error {
	if len(items) == 0 {
		return errors.New("empty listing")
	}
	c.items = items
	return nil
}

// syncOnce answers false with every error and true only with none.
func (c *cache) syncOnce(ctx context.Context) (bool, error) {
	items, err := c.src.List(ctx)
	if err != nil {
		return false, err
	}
	if err := c.store(items); err != nil {
		return false, err
	}
	return true, nil
}

// readyOnce answers false, nil while the source is not ready yet.
func (c *cache) readyOnce(ctx context.Context) (bool, error) {
	ok, err := c.src.Ready(ctx)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, nil
	}
	return true, nil
}

// sync fills the cache, five tries two seconds apart, keeping the last
// error beside the condition's answer; its own error is set only when
// the caller is gone.
//
// case: flag nojitter deafwait
func (c *cache) sync(ctx context.Context) {
	b := wait.Backoff{Duration: 2 * time.Second, Factor: 1, Steps: 5}
	var last error
	err := wait.ExponentialBackoff(b, func() (done bool, err error) { // want `deafwait: wait.ExponentialBackoff waits with time.Sleep and cannot hear ctx: the caller's cancellation and deadline go unheard; use its WithContext variant, handed ctx` `nojitter: wait.ExponentialBackoff waits a constant or purely exponential schedule`
		done, last = c.syncOnce(ctx)
		select {
		case <-ctx.Done():
			err = context.Canceled
		default:
		}
		return
	})
	if err != nil {
		c.err = last
	}
}

// syncPair says the same with a variable of its own.
//
// case: flag nojitter deafwait
func (c *cache) syncPair(ctx context.Context) error {
	b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 4}
	var last error
	err := wait.ExponentialBackoff(b, func() (bool, error) { // want `deafwait: wait.ExponentialBackoff waits with time.Sleep` `nojitter: wait.ExponentialBackoff waits a constant`
		var done bool
		done, last = c.syncOnce(ctx)
		return done, nil
	})
	if err != nil {
		return errors.Join(err, last)
	}
	return nil
}

// syncDetached has no context to hear: its schedule is still bare.
//
// case: flag nojitter
func (c *cache) syncDetached() {
	b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 4}
	_ = wait.ExponentialBackoff(b, func() (bool, error) { // want `nojitter: wait.ExponentialBackoff waits a constant`
		done, _ := c.syncOnce(context.Background())
		return done, nil
	})
}

// awaitReady polls until the source is ready: false also means "not
// yet", so the interval paces a poll, not a retry; its sleep still does
// not hear ctx.
//
// case: flag deafwait
func (c *cache) awaitReady(ctx context.Context) error {
	b := wait.Backoff{Duration: time.Second, Factor: 1, Steps: 30}
	return wait.ExponentialBackoff(b, func() (bool, error) { // want `deafwait: wait.ExponentialBackoff waits with time.Sleep`
		ready, _ := c.readyOnce(ctx)
		return ready, nil
	})
}

// syncHeard hears ctx and jitters its waits.
//
// case: clean
func (c *cache) syncHeard(ctx context.Context) error {
	b := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 4}
	return wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (bool, error) {
		done, _ := c.syncOnce(ctx)
		return done, nil
	})
}
