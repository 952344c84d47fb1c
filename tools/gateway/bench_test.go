package gateway

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkGateway measures requests per second over loopback: the counting
// gateway against a bare net/http handler that returns the same body
// (Bare). Both are real servers on 127.0.0.1 driven by the same parallel
// clients through one keep-alive pool, so client and server share the
// machine's cores; the ratio of the two is what carries over.
//
//	go test -run xxx -bench Gateway -benchmem -count 6 -cpu 2 ./gateway/
func BenchmarkGateway(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		ln, stop := serveHandler(b, Bare())
		defer stop()
		drive(b, "http://"+ln.Addr().String()+"/v1/messages")
	})
	b.Run("counting", func(b *testing.B) {
		g := mustNew(b, Config{})
		ln, cancel, done := serveUntil(b, g)
		defer func() { cancel(); <-done }()
		drive(b, "http://"+ln.Addr().String()+"/v1/messages")
		if s := g.Stats(); s.Attempts < int64(b.N) {
			b.Fatalf("gateway counted %d attempts, want at least %d", s.Attempts, b.N)
		}
	})
}

func serveHandler(b *testing.B, h http.Handler) (net.Listener, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	// The settings Gateway.Serve uses, so only the handler differs.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return ln, func() { srv.Close(); <-done }
}

// drive sends b.N GET requests from parallel clients, each with a client
// id, a fresh request id and an attempt number, as the load driver does.
func drive(b *testing.B, url string) {
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 256}
	defer tr.CloseIdleConnections()
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		client := "client-" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("X-Client-Id", client)
			req.Header.Set("X-Request-Id", "r-"+strconv.FormatInt(seq.Add(1), 10))
			req.Header.Set("Recoil-Attempt", "1")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkHandler measures the handler alone, without the network: what
// counting adds to each attempt, in nanoseconds, with parallel callers
// each sending a fresh request id (the gateway stops tracking new ids
// past Config.MaxKeys, so long runs measure mostly the untracked path).
//
//	go test -run xxx -bench Handler -benchmem ./gateway/
func BenchmarkHandler(b *testing.B) {
	for _, tc := range []struct {
		name string
		h    func() http.Handler
	}{
		{"bare", Bare},
		{"counting", func() http.Handler { return mustNew(b, Config{}) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := tc.h()
			var seq atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/v1/messages", nil)
				req.Header.Set("X-Client-Id", "client-"+strconv.FormatInt(seq.Add(1), 10))
				req.Header.Set("Recoil-Attempt", "1")
				w := discardWriter{http.Header{}}
				for pb.Next() {
					req.Header.Set("X-Request-Id", "r-"+strconv.FormatInt(seq.Add(1), 10))
					h.ServeHTTP(w, req)
				}
			})
		})
	}
}
