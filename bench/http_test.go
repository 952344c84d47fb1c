package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/recoil-go/recoil/recoilhttp"
)

// BenchmarkHTTP sends GET requests that succeed to a loopback server, through
// a plain http.Client and through each retrying client. Every client has its
// own http.Transport, each a clone of http.DefaultTransport with the same
// settings (MaxIdleConnsPerHost raised for the parallel run), so no client
// reuses another's connections; each builds its request per call with the
// same context, as real code does, reads the whole body, checks its length
// and closes it. The server counts requests, and each sub-benchmark fails unless
// it saw exactly one per call: nobody retries a success, and nobody skips
// the network.
//
// The server runs in the same process, so B/op, allocs/op and cpu-ns/op
// (the process's CPU time per call, which the queue for a CPU on a busy
// machine does not inflate) include its side of each request; what a
// client adds is its figure less bare's.
func BenchmarkHTTP(b *testing.B) {
	body := []byte(`{"ok":true,"id":"msg_0123456789"}` + "\n")
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json") // no sniffing
		w.Write(body)
	}))
	defer srv.Close()
	url := srv.URL + "/v1/messages"

	// newTransport is the Transport under every client: a default one with
	// room for the parallel run's connections.
	newTransport := func(b *testing.B) *http.Transport {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		b.Cleanup(tr.CloseIdleConnections)
		return tr
	}
	// stdDo sends through an http.Client.
	stdDo := func(c *http.Client) func(context.Context) (*http.Response, error) {
		return func(ctx context.Context) (*http.Response, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return nil, err
			}
			return c.Do(req)
		}
	}

	clients := []struct {
		name string
		new  func(*http.Transport) func(context.Context) (*http.Response, error)
	}{
		{"bare", func(tr *http.Transport) func(context.Context) (*http.Response, error) {
			return stdDo(&http.Client{Transport: tr})
		}},
		{"recoil", func(tr *http.Transport) func(context.Context) (*http.Response, error) {
			// The zero Policy: 3 attempts, its own retry budget.
			return stdDo(&http.Client{Transport: &recoilhttp.Transport{Base: tr}})
		}},
		{"recoil-hop", func(tr *http.Transport) func(context.Context) (*http.Response, error) {
			// The hop protocol's three headers on every attempt, which
			// means a clone of the request.
			return stdDo(&http.Client{Transport: &recoilhttp.Transport{Base: tr, Hop: true}})
		}},
		{"go-retryablehttp", func(tr *http.Transport) func(context.Context) (*http.Response, error) {
			c := retryablehttp.NewClient()
			c.HTTPClient = &http.Client{Transport: tr}
			c.Logger = nil // its default logs a [DEBUG] line per request
			c.RetryMax = 2 // 3 attempts, as the others
			return func(ctx context.Context) (*http.Response, error) {
				req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					return nil, err
				}
				return c.Do(req)
			}
		}},
		{"failsafehttp", func(tr *http.Transport) func(context.Context) (*http.Response, error) {
			// Its HTTP retry policy: 3 attempts, Retry-After honoured.
			rp := failsafehttp.NewRetryPolicyBuilder().Build()
			return stdDo(&http.Client{Transport: failsafehttp.NewRoundTripper(tr, rp)})
		}},
	}

	// Every request carries a deadline, as a caller's usually does; it is
	// what gives recoil-hop its third header (the remaining deadline).
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	// get makes one call and checks its answer.
	get := func(do func(context.Context) (*http.Response, error)) error {
		resp, err := do(ctx)
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || n != int64(len(body)) {
			b.Errorf("got status %d and %d bytes, want 200 and %d", resp.StatusCode, n, len(body))
		}
		return nil
	}
	// checkServed fails b unless the server saw one request per call.
	checkServed := func(b *testing.B) {
		b.Helper()
		if got := served.Load(); got != int64(b.N) {
			b.Fatalf("server saw %d requests in %d calls, want %d", got, b.N, b.N)
		}
	}

	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			b.Run("sequential", func(b *testing.B) {
				do := c.new(newTransport(b))
				if err := get(do); err != nil { // dial before timing
					b.Fatal(err)
				}
				served.Store(0)
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					if err := get(do); err != nil {
						b.Fatal(err)
					}
				}
				cpuPerOp(b, cpu)
				checkServed(b)
			})
			b.Run("parallel", func(b *testing.B) {
				do := c.new(newTransport(b))
				served.Store(0)
				b.SetParallelism(4) // 8 requests in flight on 2 cores
				b.ReportAllocs()
				cpu := cpuTime()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := get(do); err != nil {
							b.Error(err)
							return
						}
					}
				})
				cpuPerOp(b, cpu)
				checkServed(b)
			})
		})
	}
}
