// Package backoffevery holds, written anew, cenkalti/backoff retries whose
// operation hands the library every error of a model SDK's call, beside
// ones that stop on what will not change.
package backoffevery

import (
	"context"
	"errors"

	"github.com/cenkalti/backoff/v4"
	"github.com/openai/openai-go"
)

// complete asks again on every error, a 400 for a bad request and a 401
// for a revoked key as much as a 503, on the library's jittered schedule.
//
// case: flag unclassified retryafter
func complete(ctx context.Context, c openai.Client) (*openai.ChatCompletion, error) {
	var out *openai.ChatCompletion
	op := func() error {
		var err error
		out, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt"})
		return err
	}
	err := backoff.Retry(op, backoff.WithContext(backoff.NewExponentialBackOff(), ctx)) // want `unclassified: backoff.Retry retries every error of` `retryafter: backoff.Retry retries 429 and 503`
	return out, err
}

// completeClassified stops on every status the SDK reports but 429 and
// the 5xx.
//
// case: flag retryafter
func completeClassified(ctx context.Context, c openai.Client) (*openai.ChatCompletion, error) {
	var out *openai.ChatCompletion
	op := func() error {
		var err error
		out, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt"})
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.StatusCode != 429 && apiErr.StatusCode < 500 {
			return backoff.Permanent(err)
		}
		return err
	}
	err := backoff.Retry(op, backoff.WithContext(backoff.NewExponentialBackOff(), ctx)) // want `retryafter: backoff.Retry retries 429 and 503`
	return out, err
}

// completeOnce logs the error and hands the library nil: nothing is sent
// again.
//
// case: clean
func completeOnce(ctx context.Context, c openai.Client) (*openai.ChatCompletion, error) {
	var out *openai.ChatCompletion
	op := func() error {
		var err error
		if out, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt"}); err != nil {
			out = nil
		}
		return nil
	}
	err := backoff.Retry(op, backoff.WithContext(backoff.NewExponentialBackOff(), ctx))
	return out, err
}

// completeStops hands the library nil, keeping the error, for every
// status it reports but 429 and the 5xx: classified, though not through
// backoff.Permanent.
//
// case: flag retryafter
func completeStops(ctx context.Context, c openai.Client) (*openai.ChatCompletion, error) {
	var out *openai.ChatCompletion
	var stop error
	op := func() error {
		var err error
		out, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt"})
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.StatusCode < 500 && apiErr.StatusCode != 429 {
			stop = err
			return nil
		}
		return err
	}
	if err := backoff.Retry(op, backoff.WithContext(backoff.NewExponentialBackOff(), ctx)); err != nil { // want `retryafter: backoff.Retry retries 429 and 503`
		return nil, err
	}
	return out, stop
}
