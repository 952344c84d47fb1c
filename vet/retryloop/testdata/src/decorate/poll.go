package decorate

import (
	"context"
	"errors"
	"time"
)

// Job is a remote job's state.
type Job interface {
	Status(ctx context.Context) (string, error)
}

// The context is re-wrapped with a timeout in place: it is still the
// caller's, and the sleep cannot hear it.
//
// case: flag deafwait
func awaitDone(ctx context.Context, j Job, every time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
			st, err := j.Status(ctx)
			if err != nil {
				return err
			}
			if st != "done" {
				time.Sleep(every) // want `deafwait: time.Sleep ignores ctx`
				continue
			}
			return nil
		}
	}
}

// A context made here from Background has no caller behind it.
//
// case: clean
func awaitDetached(j Job, every time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 0; i < 10; i++ {
		st, err := j.Status(ctx)
		if err != nil || st == "done" {
			return err
		}
		time.Sleep(every)
	}
	return errors.New("not done")
}
