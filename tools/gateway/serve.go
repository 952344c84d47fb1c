package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// ErrNotLoopback is returned by Listen when Config.Addr is not a loopback
// address and Config.AllowRemote is not set: a gateway that injects faults
// should not be reachable from elsewhere by accident.
var ErrNotLoopback = errors.New("gateway: address is not loopback (set AllowRemote to bind it)")

// ShutdownTimeout bounds how long Serve waits, once its context is done,
// for answers in progress to finish before it closes their connections.
const ShutdownTimeout = 5 * time.Second

// Listen opens a TCP listener on Config.Addr (DefaultAddr, 127.0.0.1:0,
// when empty). A host other than a loopback address or "localhost" —
// including an empty host, which binds every interface — needs
// Config.AllowRemote.
func (g *Gateway) Listen() (net.Listener, error) {
	return listenOn(g.cfg.Addr, g.cfg.AllowRemote)
}

// listenOn opens a TCP listener on addr, refusing a host beyond loopback
// unless allowRemote.
func listenOn(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("gateway: address %q: %w", addr, err)
	}
	if !allowRemote && !loopback(host) {
		return nil, fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return net.Listen("tcp", addr)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves the gateway on ln until ctx is done, then stops: it closes
// the gateway (ending stalls and latency waits), closes ln and every
// connection with no request in progress, lets answers in progress finish
// for up to ShutdownTimeout, then closes their connections. It returns nil
// after a stop caused by ctx, or the error that stopped serving otherwise.
// The server logs nothing.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	return serveOn(ctx, ln, g, g.Close)
}

// serveOn serves h on ln until ctx is done, calling closeFn (which ends
// stalls and waits) before shutting down, as Serve documents.
func serveOn(ctx context.Context, ln net.Listener, h http.Handler, closeFn func()) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	// net/http's Shutdown closes idle connections at once but waits up to
	// five seconds for one that has not yet sent a request: a client's
	// transport dials spare connections when many callers send at once,
	// and without this every stop after a crowd took five seconds.
	var fresh conns
	srv.ConnState = fresh.track
	srv.RegisterOnShutdown(fresh.close)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		closeFn()
		return err
	case <-ctx.Done():
	}
	closeFn()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}

// Start listens with Listen and serves with Serve in the background, for a
// gateway in the same process as its callers (tests, recoil demo). It
// returns the gateway's base URL ("http://127.0.0.1:port") and a stop
// function that stops serving, waits for it to end and returns Serve's
// error.
func (g *Gateway) Start() (url string, stop func() error, err error) {
	return start(g.Listen, g.Serve)
}

// start listens and serves in the background (Start).
func start(listen func() (net.Listener, error), run func(context.Context, net.Listener) error) (url string, stop func() error, err error) {
	ln, err := listen()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error {
		cancel()
		return <-done
	}, nil
}

// ListenAndServe listens with Listen and serves with Serve until ctx is
// done. Use Listen and Serve instead to learn the address of a port the
// system chose.
func (g *Gateway) ListenAndServe(ctx context.Context) error {
	ln, err := g.Listen()
	if err != nil {
		return err
	}
	return g.Serve(ctx, ln)
}

// conns tracks the server's connections that have not yet sent a request
// (http.StateNew), to close them on shutdown: no answer is in progress on
// one, so closing it loses nothing.
type conns struct {
	mu    sync.Mutex
	fresh map[net.Conn]struct{}
}

func (c *conns) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st != http.StateNew {
		delete(c.fresh, conn)
		return
	}
	if c.fresh == nil {
		c.fresh = map[net.Conn]struct{}{}
	}
	c.fresh[conn] = struct{}{}
}

func (c *conns) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.fresh {
		_ = conn.Close()
	}
}
