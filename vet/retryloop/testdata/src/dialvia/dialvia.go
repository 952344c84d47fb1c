// Package dialvia holds, written anew, reconnect loops whose connection
// is reached through an HTTP call first: the gateway's address asked of
// an API, then the connection dialled and read until it fails.
package dialvia

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"example.com/wsdial"
)

type client struct {
	hc  *http.Client
	api string
}

// gateway asks the API where to connect; any answer but 200 is an error.
func (c *client) gateway(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.api+"/gateway", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("gateway: status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// connectAndRead asks for the gateway, dials it and reads lines until the
// connection fails: it always ends in an error.
func (c *client) connectAndRead(ctx context.Context, lines chan<- string) error {
	addr, err := c.gateway(ctx)
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		lines <- sc.Text()
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// A connection opened again after a wait that grows by a second a time,
// with no randomness: a reconnect whose way in is an HTTP call.
//
// case: flag nojitter
func (c *client) run(ctx context.Context, lines chan<- string) error {
	attempt := 0
	for {
		if err := c.connectAndRead(ctx, lines); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			attempt++
			delay := min(time.Duration(attempt)*time.Second, 30*time.Second)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay): // want `nojitter: this wait in a retry loop`
			}
			continue
		}
		attempt = 0
	}
}

// connectOnce only asks the API: there is no connection behind it, and
// every answer but 200 is an error.
func (c *client) connectOnce(ctx context.Context) error {
	_, err := c.gateway(ctx)
	return err
}

// The same loop around a call named connect that dials nothing: its
// every failed answer, a 404 as much as a 503, is asked again.
//
// case: flag unclassified nojitter retryafter
func (c *client) register(ctx context.Context) error {
	for attempt := 1; attempt <= 5; attempt++ { // want `unclassified: retry loop around client.connectOnce retries on every error`
		err := c.connectOnce(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
		}
	}
	return fmt.Errorf("register: gave up")
}

// A peer probed by dialling its websocket, the wait doubling from 250 ms
// with no randomness: a library's dial, whose handshake is an HTTP
// request, is a connection opened again, not a request to classify.
//
// case: flag nojitter
func probe(ctx context.Context, addr string) (*wsdial.Conn, error) {
	d := 250 * time.Millisecond
	for i := 0; i < 5; i++ {
		c, _, err := wsdial.Dial(ctx, "ws://"+addr, &wsdial.DialOptions{HTTPClient: &http.Client{Timeout: d}})
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d): // want `nojitter: this wait in a retry loop`
		}
		d *= 2
	}
	return nil, fmt.Errorf("probe %s: gave up", addr)
}
