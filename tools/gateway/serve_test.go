package gateway

// Serving: listening, stalled streams and silent connections, the body scan,
// bad configurations.

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestListen(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"", false, true},
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"0.0.0.0:0", true, true},
		{"127.0.0.1", false, false}, // no port
	}
	for _, tt := range tests {
		ln, err := mustNew(t, Config{Addr: tt.addr, AllowRemote: tt.remote}).Listen()
		if got := err == nil; got != tt.ok {
			t.Errorf("Listen(%q, remote %v) = %v, want ok %v", tt.addr, tt.remote, err, tt.ok)
		}
		if err == nil {
			ln.Close()
		} else if tt.addr == "0.0.0.0:0" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Listen(%q) = %v, want ErrNotLoopback", tt.addr, err)
		}
	}
}

// serveUntil serves g on a loopback port in the background until cancel
// is called; done receives what Serve returned.
func serveUntil(t testing.TB, g *Gateway) (ln net.Listener, cancel func(), done <-chan error) {
	t.Helper()
	ln, err := g.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- g.Serve(ctx, ln) }()
	return ln, cancel, ch
}

func TestServeStopsStalledStreams(t *testing.T) {
	// A stream that stalls forever must not hold Serve up once its
	// context is done.
	g := mustNew(t, Config{Stream: Stream{StallRate: 1, StallAfter: 1}})
	ln, cancel, done := serveUntil(t, g)
	tr := client(t)
	resp, err := tr.RoundTrip(mustGet(t, "http://"+ln.Addr().String()+"/stream"))
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 16)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("reading a stalled stream after the gateway stopped: no error, want the connection cut")
	}
	resp.Body.Close()
}

// A connection that never sent a request — a client's transport dials
// spare ones when many callers send at once — must not hold a stop up:
// net/http's Shutdown alone waits five seconds for one. Serve closes it
// and returns as soon as the request in progress on another finishes.
func TestServeClosesSilentConnections(t *testing.T) {
	g := mustNew(t, Config{})
	ln, cancel, done := serveUntil(t, g)
	// One connection that served a request and is idle, three silent ones.
	tr := client(t)
	resp, err := tr.RoundTrip(mustGet(t, "http://"+ln.Addr().String()+"/v1/charges"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var silent []net.Conn
	var dialed time.Time // the last silent connection's dial
	for range 3 {
		dialed = time.Now()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	// The server has taken every silent connection before the stop: a
	// request on a fourth is answered only after the three were accepted.
	resp, err = client(t).RoundTrip(mustGet(t, "http://"+ln.Addr().String()+"/v1/charges"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	// net/http's Shutdown closes a silent connection once it is five
	// seconds old: a Serve that left them to it returns five seconds after
	// the last was dialed at the earliest, however fast the machine; one
	// that closes them returns as soon as the machine lets it.
	if took := time.Since(dialed); took >= 5*time.Second {
		t.Errorf("Serve stopped %v after the last silent connection was dialed, want before net/http's five seconds closed it", took)
	}
	for i, c := range silent {
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("silent connection %d: read succeeded after the stop, want it closed", i)
		}
	}
}

func TestScanBody(t *testing.T) {
	tests := []struct {
		body       string
		field      string
		wantStream bool
		wantWhere  string
		wantFound  bool
	}{
		{toolBody, "strict", false, "tools.0.input_schema", true},
		{`{"stream":true,"strict":1}`, "strict", true, "", true},
		{`{"a":{"stream":true}}`, "", false, "", false},
		{`{"a":[1,{"b":[{"x":1},{"strict":false}]}]}`, "strict", false, "a.1.b.1", true},
		{`{"a":"strict"}`, "strict", false, "", false},
		{`{"stream":"true"}`, "", false, "", false},
		{`not json`, "strict", false, "", false},
		{`{"a":1,`, "a", false, "", true},
		{``, "strict", false, "", false},
		{strings.Repeat(`{"a":`, 100) + `{"strict":1}` + strings.Repeat(`}`, 100), "strict", false, "", false}, // too deep
	}
	for _, tt := range tests {
		stream, where, found := scanBody([]byte(tt.body), tt.field)
		if stream != tt.wantStream || strings.Join(where, ".") != tt.wantWhere || found != tt.wantFound {
			t.Errorf("scanBody(%.40q, %q) = %v, %q, %v; want %v, %q, %v", tt.body, tt.field,
				stream, strings.Join(where, "."), found, tt.wantStream, tt.wantWhere, tt.wantFound)
		}
	}
	if got, want := rejection(nil, "strict"), `unknown field "strict"`; got != want {
		t.Errorf("rejection(nil) = %q, want %q", got, want)
	}
}

func TestNewRefusesInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{FailureRate: 2},
		{Window: -time.Millisecond},
		{Window: 2 * time.Minute},
		{Outages: []Outage{{Status: 200}}},
		{Serial: -1},
		{Charge: Charge{Path: "/stats"}},
	} {
		g, err := New(cfg)
		if g != nil || !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, %v; want nil and an ErrConfig", cfg, g, err)
		}
	}
}
