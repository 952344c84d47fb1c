package load

import (
	"net/http"
	"testing"

	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/tools/gateway"
)

// serveInBubble serves a gateway for cfg over in-memory connections
// (net.Pipe pairs) and returns it, its URL and the transport that dials it,
// for a run's Config.Base. Inside a synctest bubble both ends of every
// connection wait durably, so the bubble's clock runs only when the callers
// and the gateway are all waiting: what the gateway counts in a window is
// what the policy sends in it, however late a busy machine runs the test,
// where on loopback a stall of the process longer than a window shows the
// gateway a quiet window the policy never made. The gateway, the server
// and the transport's connections are closed when the test ends.
func serveInBubble(t *testing.T, cfg gateway.Config) (*gateway.Gateway, string, http.RoundTripper) {
	t.Helper()
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, tr := handleInBubble(t, g, g.Close)
	return g, url, tr
}

// handleInBubble serves h as serveInBubble does, calling closeFn when the
// test ends.
func handleInBubble(t *testing.T, h http.Handler, closeFn func()) (string, http.RoundTripper) {
	t.Helper()
	pl := testsvc.NewPipeListener()
	srv := &http.Server{Handler: h}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(pl) }()
	tr := &http.Transport{DialContext: pl.DialContext}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		closeFn()
		if err := srv.Close(); err != nil {
			t.Errorf("closing the server: %v", err)
		}
		if err := <-served; err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://gateway.test", tr
}
