// Package pkgzrepeat holds, written anew, retries through go-pkgz's
// repeater and requester's middleware: Do goes round on every error but
// the critical ones it is handed, on its strategy's schedule, which only a
// Backoff with Jitter randomises.
package pkgzrepeat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-pkgz/repeater"
	"github.com/go-pkgz/repeater/strategy"
	"github.com/go-pkgz/requester/middleware"
)

var errNotFound = errors.New("not found")

// lookup asks a reputation API, three tries on a jittered backoff, and
// goes round on every status but 200.
//
// case: flag unclassified retryafter
func lookup(client *http.Client, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	rptr := repeater.New(&strategy.Backoff{Repeats: 3, Duration: 500 * time.Millisecond, Factor: 2, Jitter: true})
	err := rptr.Do(context.Background(), func() error { // want `unclassified: Repeater.Do retries 400, 401, 403, 404, 413, 422, statuses that will not change: return them as one of the critical errors Do is handed` `retryafter: Repeater.Do retries 429 and 503 without reading Retry-After`
		var err error
		if resp, err = client.Do(req); err != nil {
			return err
		}
		if resp.StatusCode >= 500 {
			resp.Body.Close()
			return fmt.Errorf("server error %d", resp.StatusCode)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	return resp, err
}

// fetch retries 5xx (503 among them) and 429 five times a second apart.
//
// case: flag nojitter retryafter
func fetch(ctx context.Context, client *http.Client, url string) error {
	return repeater.NewDefault(5, time.Second).Do(ctx, func() error { // want `nojitter: Repeater.Do waits a constant` `retryafter: Repeater.Do retries 429 and 503 without reading Retry-After`
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// flush retries a local write on a backoff left without jitter.
//
// case: flag nojitter
func flush(ctx context.Context, write func() error) error {
	strtg := &strategy.Backoff{Repeats: 4, Duration: 100 * time.Millisecond, Factor: 2}
	return repeater.New(strtg).Do(ctx, write) // want `nojitter: Repeater.Do waits a constant or purely exponential schedule between attempts: clients that failed together retry together; make it with a strategy.Backoff whose Jitter is true`
}

// viaDefault takes the package's default strategy: ten tries, five
// seconds apart.
//
// case: flag nojitter
func viaDefault(ctx context.Context, op func() error) error {
	r := repeater.New(nil)
	return r.Do(ctx, op) // want `nojitter: Repeater.Do waits a constant`
}

// once asks for a single try: nothing is retried.
//
// case: clean
func once(client *http.Client, url string) error {
	return repeater.New(&strategy.Once{}).Do(context.Background(), func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// single is a fixed delay of one repeat: one try, no retry.
//
// case: clean
func single(ctx context.Context, client *http.Client, url string) error {
	return repeater.NewDefault(1, time.Second).Do(ctx, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// critical hands Do the error it stops on, and returns it on 404: which
// answers go round is the code's own reading.
//
// case: clean
func critical(ctx context.Context, client *http.Client, url string) error {
	r := repeater.New(&strategy.Backoff{Repeats: 3, Jitter: true})
	return r.Do(ctx, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return errNotFound
		}
		if resp.StatusCode >= 500 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}, errNotFound)
}

// jitteredServerErrors retries only 502 and 504 on a jittered backoff.
//
// case: clean
func jitteredServerErrors(ctx context.Context, client *http.Client, url string) error {
	r := repeater.New(&strategy.Backoff{Repeats: 3, Duration: time.Second, Jitter: true})
	return r.Do(ctx, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusGatewayTimeout {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// apiClient re-sends every request that fails with 400 or above, ten
// times five seconds apart.
//
// case: flag unclassified nojitter retryafter
func apiClient() http.RoundTripper {
	rpt := repeater.NewDefault(10, 5*time.Second)
	return middleware.Repeater(rpt)(http.DefaultTransport) // want `unclassified: middleware.Repeater re-sends every status of 400 and above` `nojitter: middleware.Repeater waits a constant` `retryafter: middleware.Repeater re-sends 429 and 503 without reading Retry-After`
}

// gatewayClient re-sends 502, 503 and 504 on a jittered backoff.
//
// case: flag retryafter
func gatewayClient() http.RoundTripper {
	rpt := repeater.New(&strategy.Backoff{Repeats: 4, Duration: time.Second, Factor: 2, Jitter: true})
	return middleware.Repeater(rpt, 502, 503, 504)(http.DefaultTransport) // want `retryafter: middleware.Repeater re-sends 503 without reading Retry-After`
}

// badGatewayClient re-sends only 502, jittered.
//
// case: clean
func badGatewayClient() http.RoundTripper {
	rpt := repeater.New(&strategy.Backoff{Repeats: 4, Duration: time.Second, Jitter: true})
	return middleware.Repeater(rpt, http.StatusBadGateway)(http.DefaultTransport)
}

// onceClient hands the middleware a repeater that tries once.
//
// case: clean
func onceClient() http.RoundTripper {
	return middleware.Repeater(repeater.NewDefault(0, time.Second))(http.DefaultTransport)
}
