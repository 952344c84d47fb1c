// Package clean holds loops that wait and call remote endpoints but are
// not retry storms: polling, pagination, reconnect loops with a jittered
// backoff library and a context, loops around recoil.
package clean

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"example.com/pb"
	"github.com/cenkalti/backoff/v4"
	"github.com/recoil-go/recoil"
)

type job struct {
	Done bool `json:"done"`
}

// case: clean
func pollJob(ctx context.Context, c *http.Client, url string) error {
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()
	for {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		var j job
		err = json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if j.Done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// case: clean
func pollWithAfter(ctx context.Context, c *http.Client, url string) error {
	for {
		resp, err := c.Get(url)
		if err != nil {
			return fmt.Errorf("poll: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("poll: status %d", resp.StatusCode)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

type page struct {
	Items []string `json:"items"`
	Next  string   `json:"next"`
}

// case: clean
func paginate(ctx context.Context, c *http.Client, url string) ([]string, error) {
	var all []string
	for url != "" {
		resp, err := c.Get(url)
		if err != nil {
			return nil, err
		}
		var p page
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		url = p.Next
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond): // the API's rate limit
		}
	}
	return all, nil
}

// case: clean
func reconnect(ctx context.Context, c pb.GreeterClient, handle func(*pb.HelloReply)) error {
	b := backoff.NewExponentialBackOff()
	for {
		r, err := c.SayHello(ctx, &pb.HelloRequest{Name: "watch"})
		if err == nil {
			handle(r)
			b.Reset()
			continue
		}
		d := b.NextBackOff()
		if d == backoff.Stop {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// case: clean
func reconnectWithRetry(ctx context.Context, c pb.GreeterClient) (*pb.HelloReply, error) {
	var out *pb.HelloReply
	err := backoff.Retry(func() error {
		r, err := c.SayHello(ctx, &pb.HelloRequest{})
		out = r
		return err
	}, backoff.WithContext(backoff.NewExponentialBackOff(), ctx))
	return out, err
}

// case: clean
func aroundRecoil(ctx context.Context, p *recoil.Policy, c *http.Client, urls []string) error {
	for _, u := range urls {
		err := recoil.Do(ctx, p, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return err
			}
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// case: clean
func recoilInLoopRetryingBatches(ctx context.Context, p *recoil.Policy, c *http.Client, url string) error {
	for i := 0; i < 3; i++ {
		err := recoil.Do(ctx, p, func(ctx context.Context) error {
			resp, err := c.Get(url)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Minute):
		}
	}
	return errors.New("gave up")
}

// case: clean
func failover(c *http.Client, mirrors []string) (*http.Response, error) {
	for _, m := range mirrors {
		resp, err := c.Get(m)
		if err == nil && resp.StatusCode == http.StatusOK {
			return resp, nil
		}
	}
	return nil, errors.New("no mirror answered")
}

// case: clean
func fanOut(ctx context.Context, c *http.Client, urls []string) []error {
	errs := make([]error, len(urls))
	for i, u := range urls {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err != nil {
			errs[i] = err
			continue
		}
		resp.Body.Close()
	}
	return errs
}

// case: clean
func heartbeat(ctx context.Context, c *http.Client, url string) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		resp, err := c.Get(url)
		if err != nil {
			continue
		}
		resp.Body.Close()
	}
}
