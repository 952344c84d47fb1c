package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// doScope is the scope of Do's keys, apart from every HTTP client's.
const doScope = "do"

// Do runs fn at most once per key in store (nil means a process-wide
// Memory store) and returns its result; a later call under the same key
// returns the stored result without running fn. It is the function form of
// Middleware, for side effects that are not HTTP requests: a tool call, an
// agent's step, a charge.
//
// The result is stored as JSON, so T must survive encoding/json (a
// repeat returns the decoded copy). If fn fails, nothing is stored and
// the key is released: a later call runs fn again, so fn must fail only
// before its side effect (or use recovery points, pgstore.Store.Phase,
// which find the claim in fn's context). While another call holds the key
// Do returns an *InProgressError (ErrInProgress) at once, without
// waiting. fn's context ends when the lease (DefaultLease) does. If the
// result cannot be stored, Do returns fn's result with the store's error:
// the key stays locked until the lease runs out.
func Do[T any](ctx context.Context, store Store, key string, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if store == nil {
		store = defaultMemory()
	}
	b, err := store.Begin(ctx, doScope, key, "", DefaultLease)
	if err != nil {
		return zero, err
	}
	switch b.State {
	case StateDone:
		var v T
		if err := json.Unmarshal(b.Response.Body, &v); err != nil {
			return zero, errors.New("idempotency: stored result does not decode: " + err.Error())
		}
		return v, nil
	case StateRunning:
		return zero, &InProgressError{Key: key, RetryIn: b.RetryIn}
	case StateMismatch:
		return zero, ErrMismatch
	}
	c := Claim{Scope: doScope, Key: key, Token: b.Token}
	leaseEnd := time.Now().Add(DefaultLease)
	fctx, cancel := context.WithDeadline(WithClaim(ctx, c), leaseEnd)
	v, err := fn(fctx)
	cancel()
	sctx := context.WithoutCancel(ctx)
	if err != nil {
		_ = store.Release(sctx, doScope, key, c.Token)
		return v, err
	}
	body, err := json.Marshal(v)
	if err != nil {
		return v, errors.New("idempotency: result does not encode: " + err.Error())
	}
	return v, Complete(sctx, store, c, &Response{Status: 200, Body: body}, earlier(leaseEnd, time.Now().Add(DefaultStoreTimeout)))
}

// defaultMemory is the Memory store Do uses when given none.
var defaultMemory = sync.OnceValue(func() *Memory {
	m, _ := NewMemory(MemoryConfig{})
	return m
})

// RunReaper calls r.Reap every interval until ctx is done, and returns
// context.Cause(ctx). Errors from Reap are passed to onError if it is not
// nil, and the next tick tries again. Run it in a goroutine of your own:
//
//	go idempotency.RunReaper(ctx, time.Minute, store, nil)
//
// An interval of zero or less is an error, returned at once.
func RunReaper(ctx context.Context, interval time.Duration, r Reaper, onError func(error)) error {
	if interval <= 0 {
		return fmt.Errorf("idempotency: RunReaper interval %v: must be positive", interval)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case now := <-t.C:
			if _, err := r.Reap(ctx, now); err != nil && onError != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}
