// Package ctrlapi stands in for a go-swagger generated API client.
package ctrlapi

import "github.com/go-openapi/runtime"

// Client sends the API's operations.
type Client struct{ transport runtime.ClientTransport }

// New returns a client over t.
func New(t runtime.ClientTransport) *Client { return &Client{transport: t} }

// Identity is the caller's identity.
type Identity struct{ Name string }

// CurrentIdentity asks who the caller is; a non-2xx answer comes back as
// a typed error.
func (a *Client) CurrentIdentity() (*Identity, error) {
	r, err := a.transport.Submit(&runtime.ClientOperation{ID: "getCurrentIdentity", Method: "GET", PathPattern: "/current-identity"})
	if err != nil {
		return nil, err
	}
	id, _ := r.(*Identity)
	return id, nil
}
