// Package more holds further labelled cases: waits deaf to a context,
// bounds, helpers of the same package, and a stacked layer hidden behind a
// wrapper.
package more

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go"
	oaopt "github.com/openai/openai-go/option"
	"github.com/recoil-go/recoil/recoilhttp"
)

type status struct{ Done bool }

func check(ctx context.Context, c *http.Client) (status, error) { return status{}, nil }

// case: flag deafwait
func pollDeaf(ctx context.Context, c *http.Client) error {
	for {
		s, err := check(ctx, c)
		if err != nil {
			return err
		}
		if s.Done {
			return nil
		}
		time.Sleep(10 * time.Second) // want `deafwait: time\.Sleep ignores ctx`
	}
}

// case: flag deafwait
func closureDeaf(ctx context.Context, done chan<- struct{}) {
	go func() {
		time.Sleep(time.Second) // want `deafwait: time\.Sleep ignores ctx`
		close(done)
	}()
}

// case: clean
func startupDelay() {
	time.Sleep(2 * time.Second)
}

func jitter(n int) time.Duration {
	return time.Duration(rand.Int64N(int64(100*time.Millisecond) << min(n, 10)))
}

// case: flag unbounded deafwait
func foreverClassified(c *http.Client, req *http.Request) (*http.Response, error) {
	for n := 0; ; n++ { // want `unbounded: retry loop has no bound on attempts or total time`
		resp, err := c.Do(req)
		if err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
		if err != nil && errors.Is(err, http.ErrSchemeMismatch) {
			return nil, err
		}
		if err == nil {
			if resp.Header.Get("Retry-After") != "" {
				time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `deafwait: time\.Sleep ignores req\.Context\(\)`
				continue
			}
		}
		time.Sleep(jitter(n)) // want `deafwait: time\.Sleep ignores req\.Context\(\)`
	}
}

// case: clean
func ctxBoundedSelect(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	for n := 0; ; n++ {
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusGatewayTimeout {
			return resp, nil
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(jitter(n)):
		}
	}
}

// Only the transport's failures go round (classified since the ninth
// round); nothing bounds them.
//
// case: flag unbounded deafwait
func whileErr(c *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := c.Do(req)
	for err != nil { // want `unbounded: retry loop has no bound on attempts or total time`
		time.Sleep(jitter(3)) // want `deafwait: time\.Sleep ignores req\.Context\(\)`
		resp, err = c.Do(req)
	}
	return resp, nil
}

type loggingRT struct{ next http.RoundTripper }

func (l *loggingRT) RoundTrip(r *http.Request) (*http.Response, error) { return l.next.RoundTrip(r) } // want RoundTrip:`remote=1 waits=false`

// case: flag stacked
func stackedBehindWrapper() openai.Client {
	// Missed: the recoil Transport is wrapped by another RoundTripper.
	hc := &http.Client{Transport: &loggingRT{next: &recoilhttp.Transport{}}}
	return openai.NewClient(oaopt.WithHTTPClient(hc))
}

// case: clean
func anthropicRetriesOff() anthropic.Client {
	return anthropic.NewClient(option.WithHTTPClient(&http.Client{Transport: recoilhttp.ModelAPI(nil)}), option.WithMaxRetries(0))
}

func backoffFor(i int) time.Duration {
	return 100 * time.Millisecond * time.Duration(math.Pow(2, float64(i)))
}

// case: flag nojitter retryafter deafwait
func powHelper(c *http.Client, req *http.Request) (*http.Response, error) {
	for i := 0; i < 4; i++ {
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 500 {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(backoffFor(i)) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 503 without reading Retry-After` `deafwait: time\.Sleep ignores req\.Context\(\)`
	}
	return nil, errors.New("gave up")
}

// case: flag deafwait
func floatJitter(c *http.Client, req *http.Request) (*http.Response, error) {
	d := 100 * time.Millisecond
	for i := 0; i < 4; i++ {
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusBadGateway {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(time.Duration(float64(d) * (0.5 + rand.Float64()))) // want `deafwait: time\.Sleep ignores req\.Context\(\)`
		d *= 2
	}
	return nil, errors.New("gave up")
}

func retryAfterOf(resp *http.Response) time.Duration {
	if v := resp.Header.Get("Retry-After"); v != "" {
		return 5 * time.Second
	}
	return 0
}

// case: flag deafwait
func retryAfterHelper(c *http.Client, req *http.Request) (*http.Response, error) {
	for i := 0; i < 4; i++ {
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 429 {
			return resp, nil
		}
		resp.Body.Close()
		d := jitter(i)
		if ra := retryAfterOf(resp); ra > 0 {
			d = ra
		}
		time.Sleep(d) // want `deafwait: time\.Sleep ignores req\.Context\(\)`
	}
	return nil, errors.New("gave up")
}

// case: flag nojitter
func genericRetry(n int, f func() error) error {
	var err error
	for i := 0; i < n; i++ {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(time.Second << i) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
	}
	return err
}

// case: flag retryafter deafwait
func breakInSwitch(c *http.Client, req *http.Request) error {
	for i := 0; i < 3; i++ {
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusServiceUnavailable:
			time.Sleep(jitter(i)) // want `retryafter: retry loop retries 503 without reading Retry-After` `deafwait: time\.Sleep ignores req\.Context\(\)`
			continue
		case http.StatusNotModified:
			break
		}
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return errors.New("gave up")
}

// case: flag retryafter
func labelledSelect(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
retry:
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := c.Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		if err == nil && resp.StatusCode != 429 && resp.StatusCode != 503 {
			return nil, fmt.Errorf("status %d", resp.StatusCode)
		}
		var ne interface{ Timeout() bool }
		if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(jitter(attempt)): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			continue retry
		}
	}
	return nil, errors.New("gave up")
}

// A reconnect loop that goes round after every session, and after every
// failure with nothing to end it: no count, clock, context or stop.
//
// case: flag unbounded
func reconnectForever(addr string, serve func(*http.Response)) {
	for { // want `unbounded: retry loop has no bound`
		resp, err := http.Get(addr)
		if err != nil {
			time.Sleep(jitter(5))
			continue
		}
		serve(resp)
	}
}

// case: flag nojitter unbounded
func detachedDialContext(dial func(context.Context) error) {
	// A context made here for one attempt's timeout is not the caller's:
	// the sleep is not deaf to anyone. The fixed period is still a herd,
	// and nothing but success ends it.
	for { // want `unbounded: retry loop has no bound`
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := dial(ctx)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait`
	}
}

// case: flag deafwait
func sleepInGoroutine(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	// The goroutine's sleep is not the loop's wait (the loop never retries),
	// but it is deaf to ctx.
	for i := 0; i < 3; i++ {
		resp, err := c.Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		if err != nil {
			return nil, err
		}
		go func() {
			time.Sleep(time.Second) // want `deafwait: time\.Sleep ignores ctx`
		}()
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil, errors.New("gave up")
}

// reloadLater sleeps in a goroutine: its caller does not wait.
func reloadLater() {
	go func() {
		time.Sleep(time.Second)
	}()
}

// case: clean
func callsReloadLater(ctx context.Context) {
	// Not deaf: reloadLater returns at once.
	reloadLater()
}
