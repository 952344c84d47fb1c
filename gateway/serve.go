package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
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
	addr := g.cfg.Addr
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("gateway: address %q: %w", addr, err)
	}
	if !g.cfg.AllowRemote && !loopback(host) {
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
// the gateway (ending stalls and latency waits), lets answers in progress
// finish for up to ShutdownTimeout and closes ln. It returns nil after a
// stop caused by ctx, or the error that stopped serving otherwise. The
// server logs nothing.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           g,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		g.Close()
		return err
	case <-ctx.Done():
	}
	g.Close()
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
	ln, err := g.Listen()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
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
