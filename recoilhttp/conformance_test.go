package recoilhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/internal/conformance"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/recoilhttp"
)

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closes atomic.Int32
}

func (b *closeCounter) Close() error { b.closes.Add(1); return nil }

// Every row of the conformance table through the Transport, over HTTP
// against a server that answers each attempt as the row's script says —
// a real http.Server and http.Transport talking over an in-memory
// connection, in a synctest bubble, so that the rows' timings hold however
// late a busy machine runs them:
// the same attempts, stop reason, error identity and waits as recoil.Do and
// the simulator. Each request is a PUT with a body that counts its Close
// calls, pinning the RoundTripper contract on every path: each body is
// closed exactly once, and a response the loop stopped on is returned with
// a nil error.
func TestConformanceTransport(t *testing.T) {
	conformance.Run(t, conformance.Transport, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) { transportRow(t, row, p) })
	})
}

// transportRow runs one row through the Transport, inside a bubble.
func transportRow(t *testing.T, row *conformance.Row, p *recoil.Policy) {
	var (
		seen  atomic.Int32
		mu    sync.Mutex // guards copies and route
		route []string   // the target each attempt reached, under a Fallback
	)
	pl := testsvc.NewPipeListener()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if target, _, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/v1/"); ok {
			mu.Lock()
			route = append(route, target)
			mu.Unlock()
		}
		o := row.Reached(int(seen.Add(1)), p)
		if o.After > 0 {
			tm := time.NewTimer(o.After)
			select {
			case <-tm.C:
			case <-r.Context().Done():
				tm.Stop()
				return
			}
		}
		switch o.Kind {
		case conformance.Hang:
			<-r.Context().Done()
			return
		case conformance.OK:
			io.WriteString(w, "ok")
			return
		}
		if o.RetryAfter > 0 {
			w.Header().Set("retry-after-ms", strconv.FormatInt(o.RetryAfter.Milliseconds(), 10))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(o.Status)
		io.WriteString(w, `{"error":{"type":"scripted","code":"`+o.Code+`","message":"scripted `+strconv.Itoa(o.Status)+`"}}`)
	}))
	_ = srv.Listener.Close()
	srv.Listener = pl
	srv.Start()
	defer srv.Close()
	if p.Fallback != nil {
		// Each target is a path on the one server: what it counts is
		// where each attempt arrived.
		for i := range p.Fallback.Targets {
			tg := &p.Fallback.Targets[i]
			ep, err := recoilhttp.NewEndpoint(srv.URL+"/"+tg.Name, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			tg.Value = ep
		}
	}
	base := &http.Transport{DialContext: pl.DialContext}
	defer base.CloseIdleConnections()

	tr := &recoilhttp.Transport{Base: base, Policy: p}

	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	if row.CancelAt > 0 {
		go func() {
			select {
			case <-ctx.Done():
			case <-afterDuration(row.CancelAt):
				cancel(conformance.ErrCallerLeft)
			}
		}()
	}
	if row.RequestBudget != nil {
		ctx = hop.WithAccount(ctx, hop.NewAccount(*row.RequestBudget))
	}
	body := &closeCounter{Reader: strings.NewReader("payload")}
	var copies []*closeCounter
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/v1/thing", body)
	req.GetBody = func() (io.ReadCloser, error) {
		c := &closeCounter{Reader: strings.NewReader("payload")}
		mu.Lock()
		copies = append(copies, c)
		mu.Unlock()
		return c, nil
	}
	resp, err := tr.RoundTrip(req)

	mu.Lock()
	defer mu.Unlock()
	if got := int(seen.Load()); got != row.Attempts {
		t.Errorf("the server saw %d attempts, want %d", got, row.Attempts)
	}
	if got := strings.Join(route, " "); p.Fallback != nil && got != row.Route {
		t.Errorf("the server saw attempts at %q, want %q", got, row.Route)
	}
	// The contract: a response in hand is returned with a nil error;
	// otherwise the error says why.
	last := conformance.Outcome{Kind: conformance.Hang}
	if row.Attempts > 0 {
		last = row.Next(row.Attempts)
	}
	answered := last.Kind != conformance.Hang && row.Reason != recoil.ReasonCanceled
	switch {
	case answered && (resp == nil || err != nil):
		t.Errorf("RoundTrip() = %v, %v; want the last response and a nil error", resp, err)
	case answered && last.Kind == conformance.Status && resp.StatusCode != last.Status:
		t.Errorf("returned status %d, want %d", resp.StatusCode, last.Status)
	case !answered && (resp != nil || !errors.Is(err, row.Is())):
		t.Errorf("RoundTrip() = %v, %v; want nil and an error that is %v", resp, err, row.Is())
	}
	if resp != nil {
		b, rerr := io.ReadAll(resp.Body)
		if rerr != nil || len(b) == 0 {
			t.Errorf("the returned body read %q, %v; want it whole", b, rerr)
		}
		resp.Body.Close()
		if row.Refused > 0 {
			if d, ok := recoilhttp.RefusedWait(resp); !ok || d != row.Refused {
				t.Errorf("RefusedWait(resp) = %v, %v; want %v", d, ok, row.Refused)
			}
		}
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("the request body was closed %d times, want once", n)
	}
	for i, c := range copies {
		if n := c.closes.Load(); n != 1 {
			t.Errorf("the body of attempt %d was closed %d times, want once", i+2, n)
		}
	}
}

// afterDuration is time.After, named for what the test waits on.
var afterDuration = time.After
