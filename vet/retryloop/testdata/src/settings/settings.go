// Package settings holds retry loops whose waits come from a setting only
// the user gives, a ticker made for one tick, and a helper that grows the
// wait it is handed. Written for these tests.
package settings

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Params says how a sender retries: Period is the user's, never set here.
type Params struct {
	Period time.Duration
	Tries  int
}

func (p *Params) pause(ctx context.Context, n int) error {
	t := time.NewTicker(p.Period << n)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// case: flag nojitter
func (p *Params) send(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	for n := 0; ; n++ {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusGatewayTimeout {
			return resp, nil
		}
		if n >= p.Tries {
			return resp, nil
		}
		resp.Body.Close()
		if err := p.pause(ctx, n); err != nil { // want `nojitter: pause in a retry loop`
			return nil, err
		}
	}
}

var errBusy = errors.New("busy")

// Opener opens a stream.
type Opener interface {
	Open(ctx context.Context) error
}

// grow waits half as long again as last time when the server was busy,
// and returns the wait.
func grow(d time.Duration, err error) time.Duration {
	if errors.Is(err, errBusy) {
		d += d / 2
		time.Sleep(d)
	}
	return d
}

// case: flag nojitter deafwait
func openStream(ctx context.Context, o Opener) error {
	d := 10 * time.Millisecond
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := o.Open(ctx)
		if err == nil {
			return nil
		}
		d = grow(d, err) // want `nojitter: grow in a retry loop` `deafwait: grow waits with time.Sleep and cannot hear ctx`
	}
}

// Policy is how a publisher retries; Every is given only through
// WithEvery, by the user.
type Policy struct {
	every time.Duration
	tries int
}

// WithEvery returns a policy that waits every, doubled each time, between
// at most tries tries.
func WithEvery(every time.Duration, tries int) *Policy {
	return &Policy{every: every, tries: tries}
}

func (p *Policy) wait(n int) time.Duration { return p.every << n }

// case: flag nojitter
func (p *Policy) publish(ctx context.Context, o Opener) error {
	var err error
	for n := 0; n < p.tries; n++ {
		if err = o.Open(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.wait(n)): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
	}
	return err
}
