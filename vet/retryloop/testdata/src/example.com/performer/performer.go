// Package performer stands in for an API client package that hands its
// callers an interface, made in the package by one HTTP client, and
// another interface that two of its types make.
package performer

import (
	"context"
	"net/http"
	"os"
)

// RequestPerformer sends requests to the API.
type RequestPerformer interface {
	PerformRequest(ctx context.Context, method, path string) (*http.Response, error)
}

// Client is the package's RequestPerformer.
type Client struct {
	BaseURL string
	HC      *http.Client
}

// PerformRequest sends one request.
func (c *Client) PerformRequest(ctx context.Context, method, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, nil)
	if err != nil {
		return nil, err
	}
	return c.HC.Do(req)
}

// Fetcher fetches a document from somewhere.
type Fetcher interface {
	Fetch(ctx context.Context, name string) (*http.Response, error)
}

// Remote fetches documents over HTTP.
type Remote struct{ HC *http.Client }

// Fetch gets the named document.
func (r Remote) Fetch(ctx context.Context, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, name, nil)
	if err != nil {
		return nil, err
	}
	return r.HC.Do(req)
}

// Disk fetches documents from this machine's disk.
type Disk struct{}

// Fetch opens the named file.
func (Disk) Fetch(ctx context.Context, name string) (*http.Response, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK, Body: f}, nil
}
