// Package sdk holds retry loops around model SDK and gRPC calls.
package sdk

import (
	"context"
	"errors"
	"math/rand"
	"time"

	"example.com/pb"
	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// case: flag unclassified nojitter deafwait retryafter
func openaiEveryError(ctx context.Context, c openai.Client) (*openai.ChatCompletion, error) {
	var err error
	for i := 0; i < 3; i++ { // want `unclassified: retry loop around ChatCompletionService\.New retries on every error`
		var out *openai.ChatCompletion
		out, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt"})
		if err == nil {
			return out, nil
		}
		time.Sleep(time.Second * time.Duration(i+1)) // want `deafwait: time\.Sleep ignores ctx` `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
	}
	return nil, err
}

// case: clean
func openaiClassified(ctx context.Context, c openai.Client) (*openai.ChatCompletion, error) {
	for i := 0; i < 3; i++ {
		out, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt"})
		if err == nil {
			return out, nil
		}
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || (apiErr.StatusCode != 429 && apiErr.StatusCode < 500) {
			return nil, err
		}
		wait := time.Duration(rand.Int63n(int64(time.Second << i)))
		if h := apiErr.Response.Header.Get("Retry-After"); h != "" {
			wait = 5 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil, errors.New("gave up")
}

// case: flag unclassified retryafter
func anthropicPermanent(ctx context.Context, c anthropic.Client) (*anthropic.Message, error) {
	for attempt := 0; attempt < 4; attempt++ { // want `unclassified: retry loop around MessageService\.New retries on 422, which will not change on a retry`
		msg, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude"})
		var apiErr *anthropic.Error
		switch {
		case err == nil:
			return msg, nil
		case errors.As(err, &apiErr) && (apiErr.StatusCode == 422 || apiErr.StatusCode == 429):
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(rand.Int63n(int64(time.Second)))): // want `retryafter: retry loop retries 429 without reading Retry-After`
			}
		default:
			return nil, err
		}
	}
	return nil, errors.New("gave up")
}

// case: flag unclassified nojitter unbounded
func grpcForever(ctx context.Context, c pb.GreeterClient) (*pb.HelloReply, error) {
	backoff := 50 * time.Millisecond
	for { // want `unbounded: retry loop has no bound on attempts or total time` `unclassified: retry loop around GreeterClient\.SayHello retries on every error`
		r, err := c.SayHello(ctx, &pb.HelloRequest{Name: "x"})
		if err == nil {
			return r, nil
		}
		select {
		case <-time.After(backoff): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
		backoff *= 2
	}
}

// case: clean
func grpcClassified(ctx context.Context, c pb.GreeterClient) (*pb.HelloReply, error) {
	for i := 0; i < 3; i++ {
		r, err := c.SayHello(ctx, &pb.HelloRequest{Name: "x"})
		if err == nil {
			return r, nil
		}
		if status.Code(err) != codes.Unavailable {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(rand.Int63n(int64(100*time.Millisecond) << i))):
		}
	}
	return nil, errors.New("gave up")
}
