// Package openai is a stub of openai-go.
package openai

import (
	"context"
	"net/http"

	"github.com/openai/openai-go/option"
)

type Client struct {
	Chat ChatService
}

type ChatService struct{ Completions ChatCompletionService }

type ChatCompletionService struct{}

type ChatCompletionNewParams struct{ Model string }

type ChatCompletion struct{ ID string }

func (ChatCompletionService) New(ctx context.Context, p ChatCompletionNewParams, opts ...option.RequestOption) (*ChatCompletion, error) {
	return nil, nil
}

// Error is the SDK's error for a non-2xx response.
type Error struct {
	StatusCode int
	Response   *http.Response
}

func (e *Error) Error() string { return "openai error" }

func NewClient(opts ...option.RequestOption) Client { return Client{} }
