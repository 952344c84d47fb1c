// Package swaggerops holds, written anew, loops around a go-swagger
// generated client, whose operations hand back every non-2xx answer as
// an error, as a model SDK's methods do.
package swaggerops

import (
	"context"
	"math/rand/v2"
	"time"

	"example.com/ctrlapi"
)

// whoAmI asks again after a second on every error, a 401 for a revoked
// certificate as much as a 503.
//
// case: flag unclassified nojitter retryafter
func whoAmI(c *ctrlapi.Client) (*ctrlapi.Identity, error) {
	var err error
	for i := 0; i < 5; i++ { // want `unclassified: retry loop around Client.CurrentIdentity retries on every error`
		var id *ctrlapi.Identity
		if id, err = c.CurrentIdentity(); err == nil {
			return id, nil
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
	return nil, err
}

// waitNamed returns every error at once and asks again, after a random
// wait, only while the identity has no name yet: a poll of the answer.
//
// case: clean
func waitNamed(ctx context.Context, c *ctrlapi.Client) (*ctrlapi.Identity, error) {
	for {
		id, err := c.CurrentIdentity()
		if err != nil {
			return nil, err
		}
		if id != nil && id.Name != "" {
			return id, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(time.Second)))):
		}
	}
}
