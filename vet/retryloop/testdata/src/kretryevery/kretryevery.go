// Package kretryevery holds, written anew, client-go retry.OnError calls
// whose retriable func answers true whatever the error, around a helper
// that turns every non-2xx answer into its error.
package kretryevery

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"example.com/mirror"
	"k8s.io/client-go/util/retry"
)

var errDrained = errors.New("listener already drained")

func drain(c *http.Client, admin string) error {
	resp, err := c.Post(admin+"/drain_listeners", "text/plain", strings.NewReader(""))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		return errDrained
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("drain: status %d", resp.StatusCode)
	}
	return nil
}

// drainProxy sends the drain again on every error, a 404 and a 503 alike.
//
// case: flag unclassified retryafter
func drainProxy(c *http.Client, admin string) error {
	return retry.OnError(retry.DefaultBackoff, func(error) bool { return true }, func() error { // want `unclassified: retry.OnError retries every error of drain` `retryafter: retry.OnError retries 429 and 503 without reading Retry-After`
		return drain(c, admin)
	})
}

// drainProxySorted is its twin whose retriable func says no to the
// conflict the helper names, and to nothing else: a classification the
// analyzer leaves to its author.
//
// case: clean
func drainProxySorted(c *http.Client, admin string) error {
	return retry.OnError(retry.DefaultBackoff, func(err error) bool { return !errors.Is(err, errDrained) }, func() error {
		return drain(c, admin)
	})
}

// copyImage retries another module's copy helper on every error: the
// helper may classify, and retry, inside, out of the retriable's sight.
//
// case: clean
func copyImage(src string) error {
	return retry.OnError(retry.DefaultBackoff, func(error) bool { return true }, func() error {
		return mirror.Copy(src)
	})
}
