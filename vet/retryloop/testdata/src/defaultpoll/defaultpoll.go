// Package defaultpoll holds, written anew, polls whose round is a
// select's default clause beside the context's Done: a failed read that
// waits the poll's own interval is paced like a pending answer, not
// retried on a schedule of its own.
package defaultpoll

import (
	"context"
	"net/http"
	"time"
)

type task struct{ Done bool }

type api struct{ http *http.Client }

func (a *api) get(ctx context.Context, id string) (*task, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.example/tasks/"+id, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return &task{Done: resp.StatusCode == http.StatusOK}, nil
}

// A failed read waits the poll's interval, as a pending task does; both
// waits are deaf to ctx.
//
// case: flag deafwait
func (a *api) wait(ctx context.Context, id string) (*task, error) {
	interval := 2 * time.Second
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
			t, err := a.get(ctx, id)
			if err != nil {
				time.Sleep(interval) // want `deafwait: time.Sleep ignores ctx`
				continue
			}
			if t.Done {
				return t, nil
			}
			time.Sleep(interval) // want `deafwait: time.Sleep ignores ctx`
		}
	}
}

// Its twin waits a second of its own after a failure: a retry schedule
// with no jitter.
//
// case: flag nojitter deafwait
func (a *api) waitRetrying(ctx context.Context, id string) (*task, error) {
	interval := 2 * time.Second
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
			t, err := a.get(ctx, id)
			if err != nil {
				time.Sleep(time.Second) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop`
				continue
			}
			if t.Done {
				return t, nil
			}
			time.Sleep(interval) // want `deafwait: time.Sleep ignores ctx`
		}
	}
}
