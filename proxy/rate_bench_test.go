package proxy

import (
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"testing"

	"github.com/recoil-go/recoil/proxy/internal/openloop"
)

// BenchmarkProxyRate is the performance table of docs/benchmarks.md ("recoil
// proxy"): with an open-loop load at increasing rates it finds the highest
// rate httputil.ReverseProxy sustains on this machine with every call
// answered and p99 under 5 ms; at that rate it sends each due call to the
// bare proxy or to recoil proxy by a seeded coin, on the same upstream, and
// reports the latency recoil proxy adds — p50 and p99 less the bare
// proxy's, slice by slice (1 s slices), median and quartiles over the
// slices — then runs each alone in short slices, in seeded order, for the
// process's allocations and CPU time per call and their differences round
// by round, and each one's closed-loop throughput. It takes over a minute:
// run it with -benchtime 1x. RECOIL_PROXY_RATES (a comma-separated list of
// calls a second), RECOIL_PROXY_SLICE, RECOIL_PROXY_SLICES,
// RECOIL_PROXY_ALONE, RECOIL_PROXY_SEED and RECOIL_PROXY_RUN change the
// plan (openloop.PlanFromEnv). RECOIL_PROXY_CONTROL=1 adds a control: a
// second httputil.ReverseProxy, identical to the first, on the same coin
// (each of the three then gets a third of the calls), whose "added" figures
// are what the method reports for no difference at all — the noise floor
// against which recoil proxy's are read (a p99 is set by a few dozen calls
// that met the machine's worst moments, so it moves between identical
// servers too).
func BenchmarkProxyRate(b *testing.B) {
	up := benchUpstream(b)
	u, _ := url.Parse(up.URL)
	bare := httptest.NewServer(bareProxy(u))
	b.Cleanup(bare.Close)
	p, err := New(oneRoute(OpenAI, up.URL, nil), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	rp := httptest.NewServer(p)
	b.Cleanup(rp.Close)
	servers := []openloop.Server{
		{Name: "httputil.ReverseProxy", Tag: "bare", URL: bare.URL + "/v1/chat/completions"},
		{Name: "recoil proxy", Tag: "recoil", URL: rp.URL + "/v1/chat/completions"},
	}
	if v := os.Getenv("RECOIL_PROXY_CONTROL"); v != "" && v != "0" {
		ctl := httptest.NewServer(bareProxy(u))
		b.Cleanup(ctl.Close)
		servers = append(servers, openloop.Server{Name: "ReverseProxy (control)", Tag: "control", URL: ctl.URL + "/v1/chat/completions"})
	}
	for b.Loop() {
		openloop.Report(b, servers, openloop.PlanFromEnv(benchBody))
	}
}

// bareProxy is the reference: httputil.ReverseProxy to u with the
// transport recoil proxy sends on (keep-alive connections enough for every
// call in flight, where ReverseProxy's default keeps 2) and a pool of copy
// buffers, so that the difference measured is the proxies' own work, not
// their connection pools. Its error log is discarded: the closed-loop
// runs end by cancelling calls in flight.
func bareProxy(u *url.URL) *httputil.ReverseProxy {
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = newBase()
	rp.BufferPool = bufferPool{}
	rp.ErrorLog = log.New(io.Discard, "", 0)
	return rp
}

// bufferPool is an httputil.BufferPool over the proxy's own pool.
type bufferPool struct{}

func (bufferPool) Get() []byte  { return *bufs.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { bufs.Put(&b) }
