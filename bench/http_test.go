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
	url, served := httpServer(b, body)

	// newTransport is the Transport under every client: a default one with
	// room for the parallel run's connections.
	newTransport := func(b *testing.B) *http.Transport {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		b.Cleanup(tr.CloseIdleConnections)
		return tr
	}
	clients := httpClients(url)

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

// httpServer starts BenchmarkHTTP's loopback server, closed when b ends,
// answering every request with body; it returns the URL to send to and
// the count of requests served.
func httpServer(b *testing.B, body []byte) (string, *atomic.Int64) {
	served := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json") // no sniffing
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/v1/messages", served
}

// httpClient is one client of BenchmarkHTTP: new makes its call function
// over a Transport of its own.
type httpClient struct {
	name string
	new  func(*http.Transport) func(context.Context) (*http.Response, error)
}

// httpClients returns BenchmarkHTTP's clients, each sending GET url.
func httpClients(url string) []httpClient {
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

	return []httpClient{
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
}

// BenchmarkHTTPIdleLimit measures the Transport's idle limit alone: the
// Transport over a base that answers from memory (no network), its body
// read to the end and closed, with the limit off (NoIdleTimeout) and at
// its default, beside the base called directly. "one read" reads a short
// body at once; "64 reads" reads a stream of 64 chunks one at a time, each
// a read that restarts the limit. What the limit costs is default's figure
// less no-limit's.
func BenchmarkHTTPIdleLimit(b *testing.B) {
	short := []byte(`{"ok":true,"id":"msg_0123456789"}` + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com/v1/messages", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, reads := range []int{1, 64} {
		base := memoryRT{body: short, chunks: reads}
		arms := []struct {
			name string
			rt   http.RoundTripper
		}{
			{"base", base},
			{"recoil-no-limit", &recoilhttp.Transport{Base: base, IdleTimeout: recoilhttp.NoIdleTimeout}},
			{"recoil-default", &recoilhttp.Transport{Base: base}},
		}
		name := "one read"
		if reads > 1 {
			name = "64 reads"
		}
		for _, arm := range arms {
			b.Run(name+"/"+arm.name, func(b *testing.B) {
				buf := make([]byte, len(short))
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					resp, err := arm.rt.RoundTrip(req)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for {
						k, err := resp.Body.Read(buf)
						n += k
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					resp.Body.Close()
					if n != reads*len(short) {
						b.Fatalf("read %d bytes, want %d", n, reads*len(short))
					}
				}
				cpuPerOp(b, cpu)
			})
		}
	}
}

// memoryRT answers every request with status 200 and a body of chunks
// copies of body, each returned by a read of its own.
type memoryRT struct {
	body   []byte
	chunks int
}

func (m memoryRT) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &chunked{body: m.body, left: m.chunks}}, nil
}

// chunked returns body, left times, one copy per read.
type chunked struct {
	body []byte
	left int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	c.left--
	return copy(p, c.body), nil
}

func (c *chunked) Close() error { return nil }
