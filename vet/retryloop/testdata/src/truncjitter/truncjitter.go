// want package:"offline"

// Package truncjitter holds, written anew, retry loops whose random part
// is a float in [0, 1) scaled by constants and converted to an integer
// before it scales the wait: a factor that stays between -1 and 1 is
// always 0 once converted, so the wait is as jitterless as without it.
package truncjitter

import (
	"context"
	"math"
	"math/rand"
	"time"
)

const (
	jitter      = 0.2
	minInterval = 100.0
	maxInterval = 5000
)

// store is a key-value store's client.
type store interface {
	Put(ctx context.Context, key, val string) error
}

// pause waits a grown interval "with jitter": 1 + int(±0.2) is 1.
func pause(ctx context.Context, attempt int) error {
	ms := int(minInterval * math.Exp(float64(attempt)))
	ms *= 1 + int(jitter*(rand.Float64()*2-1))
	if ms > maxInterval {
		ms = maxInterval
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
	return nil
}

// put tries again after pause: every caller that failed together comes
// back together, the random part being lost to the conversion.
//
// case: flag nojitter
func put(ctx context.Context, s store, key, val string) error {
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = s.Put(ctx, key, val); err == nil {
			return nil
		}
		if perr := pause(ctx, attempt); perr != nil { // want `nojitter: pause in a retry loop`
			return perr
		}
	}
	return err
}

// putInline waits the same way in the loop itself.
//
// case: flag nojitter
func putInline(ctx context.Context, s store, key, val string) error {
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = s.Put(ctx, key, val); err == nil {
			return nil
		}
		d := time.Duration(200*attempt) * time.Millisecond
		d *= time.Duration(1 + int64(jitter*(2*rand.Float64()-1)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration \(its random part`
		}
	}
	return err
}

// putScaled is putInline with the factor kept a float until the wait is
// scaled by it: ±20 % of the wait, jittered.
//
// case: clean
func putScaled(ctx context.Context, s store, key, val string) error {
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = s.Put(ctx, key, val); err == nil {
			return nil
		}
		d := time.Duration(200*attempt) * time.Millisecond
		d = time.Duration(float64(d) * (1 + jitter*(2*rand.Float64()-1)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return err
}

// putSpread converts a float that reaches past 1: int(rand.Float64()*3)
// is 0, 1 or 2, a spread of whole seconds.
//
// case: clean
func putSpread(ctx context.Context, s store, key, val string) error {
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = s.Put(ctx, key, val); err == nil {
			return nil
		}
		d := time.Duration(1+int(rand.Float64()*3)) * time.Second
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return err
}
