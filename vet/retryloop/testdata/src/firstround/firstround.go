// Package firstround holds, written anew, retry loops whose condition goes
// on while the first round has not run or the last one failed
// (for i := 0; (i == 0 || err != nil) && i < n; i++): at every go-round
// the counter has moved past its start, so a success leaves the loop and
// the wait before each later round is a retry's.
package firstround

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"example.com/attempts"
)

var errGone = errors.New("report endpoint gone")

func post(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusGone:
		return errGone
	case resp.StatusCode >= 500:
		return fmt.Errorf("report: status %d", resp.StatusCode)
	}
	return nil
}

// pushReport waits the same two seconds before every round but the first.
//
// case: flag nojitter
func pushReport(ctx context.Context, c *http.Client, url string) error {
	var err error
	for attempt := 0; (attempt == 0 || err != nil) && attempt < 4; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second): // want `nojitter: this wait in a retry loop`
			}
		}
		if err = post(ctx, c, url); errors.Is(err, errGone) {
			return err
		}
	}
	return err
}

// pushReportJittered is pushReport's twin with a full-jitter wait.
//
// case: clean
func pushReportJittered(ctx context.Context, c *http.Client, url string) error {
	var err error
	for attempt := 0; (attempt == 0 || err != nil) && attempt < 4; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rand.N(2 * time.Second)):
			}
		}
		if err = post(ctx, c, url); errors.Is(err, errGone) {
			return err
		}
	}
	return err
}

// pushReportPlan hands the post to a stepwise retry library that waits a
// fixed five seconds between attempts with time.Sleep, while ctx is in
// scope.
//
// case: flag nojitter deafwait
func pushReportPlan(ctx context.Context, c *http.Client, url string) error {
	return attempts.Times(3).Every(5 * time.Second).Run(func(uint) (error, bool) { // want `deafwait: Run waits with time.Sleep and cannot hear ctx` `nojitter: Plan.Run waits a constant or purely exponential schedule`
		err := post(ctx, c, url)
		return err, errors.Is(err, errGone)
	})
}

// refreshUntil re-reads a feed while its counter has not reached the
// round it was told to stop at: a counter compared with another value
// than its start says nothing of the first round, and the loop is a
// poll that leaves only when the rounds run out.
//
// case: clean
func refreshUntil(ctx context.Context, c *http.Client, url string, rounds int) error {
	var err error
	for i := 0; i != rounds; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Minute):
			}
		}
		err = post(ctx, c, url)
	}
	return err
}
