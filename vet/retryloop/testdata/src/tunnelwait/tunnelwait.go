// Package tunnelwait holds, written anew, waits for a tunnel to come up
// through a helper that reads the listing's status and, after a 200,
// says "not running yet" with a sentinel: a success may carry the error,
// so the loop polls; the same sentinel said under the status test is a
// failed answer, and the loop retries it.
package tunnelwait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

var errNotRunning = errors.New("tunnel not running")

type client struct {
	hc  *http.Client
	url string
}

// running lists the tunnels and looks for id among the running ones.
func (c *client) running(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/tunnels", nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("tunnels: status %d", resp.StatusCode)
	}
	var list []struct{ ID, Status string }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return err
	}
	for _, t := range list {
		if t.ID == id && t.Status == "running" {
			return nil
		}
	}
	return errNotRunning
}

// listed asks for the tunnel itself: anything but a 200 is "not running".
func (c *client) listed(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/tunnels/"+id, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errNotRunning
	}
	return nil
}

// awaitRunning polls every second until the deadline; the sleep does not
// hear ctx.
//
// case: flag deafwait
func (c *client) awaitRunning(ctx context.Context, id string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var err error
	for time.Now().Before(deadline) {
		if err = c.running(ctx, id); err == nil {
			return nil
		}
		time.Sleep(time.Second) // want `deafwait: time.Sleep`
	}
	return err
}

// awaitListed goes round on every failed answer, a 404 as much as a 503.
//
// case: flag unclassified nojitter deafwait retryafter
func (c *client) awaitListed(ctx context.Context, id string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var err error
	for time.Now().Before(deadline) { // want `unclassified: retry loop around client.listed retries on every error`
		if err = c.listed(ctx, id); err == nil {
			return nil
		}
		time.Sleep(time.Second) // want `deafwait: time.Sleep` `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
	return err
}
