// Package anthropic is a stub of anthropic-sdk-go.
package anthropic

import (
	"context"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/option"
)

type Client struct{ Messages MessageService }

type MessageService struct{}

type MessageNewParams struct{ Model string }

type Message struct{ ID string }

func (MessageService) New(ctx context.Context, p MessageNewParams, opts ...option.RequestOption) (*Message, error) {
	return nil, nil
}

type Error struct {
	StatusCode int
	Response   *http.Response
}

func (e *Error) Error() string { return "anthropic error" }

func NewClient(opts ...option.RequestOption) Client { return Client{} }
