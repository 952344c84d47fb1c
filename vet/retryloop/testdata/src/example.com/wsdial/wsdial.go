// Package wsdial is a stand-in for a websocket library whose Dial makes
// its handshake as an HTTP request through the *http.Client it is given.
package wsdial

import (
	"context"
	"fmt"
	"net/http"
)

// DialOptions holds the client the handshake is sent through.
type DialOptions struct{ HTTPClient *http.Client }

// Conn is an open websocket.
type Conn struct{}

// Dial opens a websocket to u.
func Dial(ctx context.Context, u string, opts *DialOptions) (*Conn, *http.Response, error) {
	hc := http.DefaultClient
	if opts != nil && opts.HTTPClient != nil {
		hc = opts.HTTPClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, resp, fmt.Errorf("handshake: status %d", resp.StatusCode)
	}
	return &Conn{}, resp, nil
}
