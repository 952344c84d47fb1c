// Package deciders holds, written anew, model-API retry loops that ask a
// decider of their own whether to go round: it answers yes, the wait and
// no error, or no and the error to hand back. The loop leaves on that
// error when the decider says no, not whenever the call failed.
package deciders

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
)

const maxTries = 6

var errTooMany = errors.New("too many tries")

// decide answers a 429 or a 529 with the next wait: the server's
// Retry-After when it sent one, else 1 s doubling plus a fixed fifth of
// itself, an "extra" with no randomness in it.
func decide(tries int, err error) (bool, int64, error) {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return false, 0, err
	}
	if apiErr.StatusCode != 429 && apiErr.StatusCode != 529 {
		return false, 0, err
	}
	if tries > maxTries {
		return false, 0, errTooMany
	}
	if secs, err := strconv.Atoi(apiErr.Response.Header.Get("Retry-After")); err == nil {
		return true, int64(secs) * 1000, nil
	}
	baseMs := 1000 * (1 << (tries - 1))
	extraMs := int(float64(baseMs) * 0.2)
	waitMs := baseMs + extraMs
	return true, int64(waitMs), nil
}

// decideSpread is decide with its own wait spread by full jitter.
func decideSpread(tries int, err error) (bool, int64, error) {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || (apiErr.StatusCode != 429 && apiErr.StatusCode != 529) {
		return false, 0, err
	}
	if tries > maxTries {
		return false, 0, errTooMany
	}
	if secs, err := strconv.Atoi(apiErr.Response.Header.Get("Retry-After")); err == nil {
		return true, int64(secs) * 1000, nil
	}
	return true, rand.Int64N(int64(1000) << tries), nil
}

// A message sent again on the decider's unrandomised schedule.
//
// case: flag nojitter
func ask(ctx context.Context, c anthropic.Client, p anthropic.MessageNewParams) (*anthropic.Message, error) {
	tries := 0
	for {
		tries++
		msg, err := c.Messages.New(ctx, p)
		if err == nil {
			return msg, nil
		}
		retry, waitMs, refusal := decide(tries, err)
		if refusal != nil {
			return nil, refusal
		}
		if retry {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(waitMs) * time.Millisecond): // want `nojitter: this wait in a retry loop`
				continue
			}
		}
		return nil, refusal
	}
}

// The same loop on the spread decider.
//
// case: clean
func askSpread(ctx context.Context, c anthropic.Client, p anthropic.MessageNewParams) (*anthropic.Message, error) {
	tries := 0
	for {
		tries++
		msg, err := c.Messages.New(ctx, p)
		if err == nil {
			return msg, nil
		}
		retry, waitMs, refusal := decideSpread(tries, err)
		if refusal != nil {
			return nil, refusal
		}
		if retry {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(waitMs) * time.Millisecond):
				continue
			}
		}
		return nil, refusal
	}
}

// check answers true with the error it was given: its error is the
// attempt's, not a refusal.
func check(err error) (bool, error) {
	if err != nil {
		return true, err
	}
	return false, nil
}

// A loop that leaves on the error check hands back, the call's own: every
// failure leaves, so the wait after it paces successes only.
//
// case: clean
func poll(ctx context.Context, c anthropic.Client, p anthropic.MessageNewParams) error {
	for i := 0; i < 3; i++ {
		_, err := c.Messages.New(ctx, p)
		again, err := check(err)
		if err != nil {
			return err
		}
		if !again {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return nil
}
