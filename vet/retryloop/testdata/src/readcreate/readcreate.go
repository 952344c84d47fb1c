// want package:"offline"

// Package readcreate holds, written anew, loops that make two calls that
// can fail: a read whose failure ends the loop, then a write whose
// failure may go round.
package readcreate

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

type codeError interface {
	error
	Code() string
}

type volume struct{ id string }

type store interface {
	Find(ctx context.Context, name string) ([]volume, error)
	Make(ctx context.Context, name string) (*volume, error)
	Next(ctx context.Context) (string, error)
	Handle(ctx context.Context, msg string) error
}

const maxRaces = 10

// Finds the volume or makes it; a racing maker's duplicate goes round
// after a constant second, deaf to ctx.
//
// case: flag nojitter deafwait
func ensure(ctx context.Context, s store, name string) (string, error) {
	for race := 0; ; race++ {
		vs, err := s.Find(ctx, name)
		if err != nil {
			return "", err
		}
		if len(vs) > 0 {
			return vs[0].id, nil
		}
		v, err := s.Make(ctx, name)
		if err != nil {
			var ce codeError
			if errors.As(err, &ce) && ce.Code() == "Duplicate" && race < maxRaces {
				time.Sleep(time.Second) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop has a constant`
				continue
			}
			return "", err
		}
		return v.id, nil
	}
}

// The same with a random, ctx-aware wait.
//
// case: clean
func ensureJittered(ctx context.Context, s store, name string) (string, error) {
	for race := 0; ; race++ {
		vs, err := s.Find(ctx, name)
		if err != nil {
			return "", err
		}
		if len(vs) > 0 {
			return vs[0].id, nil
		}
		v, err := s.Make(ctx, name)
		if err == nil {
			return v.id, nil
		}
		var ce codeError
		if !errors.As(err, &ce) || ce.Code() != "Duplicate" || race >= maxRaces {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
}

// A consumer: a failed read ends it, a failed handling is logged and the
// next message read at once; no wait on any failure.
//
// case: clean
func consume(ctx context.Context, s store, errs chan<- error) error {
	for {
		msg, err := s.Next(ctx)
		if err != nil {
			return err
		}
		if err := s.Handle(ctx, msg); err != nil {
			errs <- err
		}
	}
}

// A consumer whose failed handling waits a constant five seconds before
// the next read: the wait is reached only on that failure.
//
// case: flag nojitter
func consumeSlow(ctx context.Context, s store) error {
	for {
		msg, err := s.Next(ctx)
		if err != nil {
			return err
		}
		if err := s.Handle(ctx, msg); err != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Second): // want `nojitter: this wait in a retry loop has a constant`
			}
		}
	}
}
