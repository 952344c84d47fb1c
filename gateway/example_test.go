package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/gateway"
	"github.com/recoil-go/recoil/recoilhttp"
)

// A gateway that is down for an hour, and one caller that retries three
// times without waiting: the gateway counts every attempt, and when they
// arrived.
func Example() {
	g := gateway.New(gateway.Config{
		Outages: []gateway.Outage{{Duration: time.Hour}}, // 503 from the first attempt
	})
	ln, err := g.Listen() // 127.0.0.1, a port the system chooses
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln) }()

	base := &http.Transport{}
	rt := &recoilhttp.Transport{
		Base: base,
		Policy: &recoil.Policy{MaxAttempts: 3, Backoff: backoff.None{}, OverloadBackoff: backoff.None{},
			Budget: recoil.NoBudget},
		Hop: true, // send Recoil-Attempt, which the gateway counts by
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/v1/models", nil)
	req.Header.Set("X-Client-Id", "caller-1")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	base.CloseIdleConnections()

	s := g.Stats()
	fmt.Println("status:", resp.StatusCode)
	fmt.Println("attempts:", s.Attempts, "accepted:", s.Accepted)
	fmt.Println("by attempt number:", s.AttemptNumbers[:4])
	fmt.Println("from caller-1:", s.Clients["caller-1"].Attempts)
	fmt.Println("peak in one", s.Window, "window:", s.Peak)
	stop()
	fmt.Println("serve:", <-served)
	// Output:
	// status: 503
	// attempts: 3 accepted: 0
	// by attempt number: [1 1 1 0]
	// from caller-1: 3
	// peak in one 200ms window: 3
	// serve: <nil>
}

// Window counts on its own: here, the receiving side's question — how many
// landed within the same 200 ms — for attempts at known instants. Fixed windows
// from 0 would count 6 and 3; the burst straddles their boundary, and the
// sliding window finds all 8 of it.
func ExampleWindow() {
	w := gateway.NewWindow(200 * time.Millisecond)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ms := range []int{0, 150, 160, 170, 180, 190, 210, 220, 230} {
		w.AddAt(start.Add(time.Duration(ms) * time.Millisecond))
	}
	n, at := w.Peak()
	fmt.Println("attempts:", w.Total())
	fmt.Printf("peak: %d, in the span from %v\n", n, at)
	// Output:
	// attempts: 9
	// peak: 8, in the span from 31ms
}

func ExampleParseTimeline() {
	cfg, err := gateway.ParseTimeline("gateway-outage.yaml", []byte(`
outages:
  - duration: 700ms
    recovery: {below: 5, for: 300ms}
`))
	if err != nil {
		panic(err)
	}
	o := cfg.Outages[0]
	fmt.Println("outage:", o.Start, "to at least", o.Start+o.Duration)
	fmt.Println("then until below", o.Recovery.Below, "per window for", o.Recovery.For)

	_, err = gateway.ParseTimeline("bad.yaml", []byte("outages:\n  - start: 0s\n    durration: 700ms\n"))
	var te *gateway.TimelineError
	fmt.Println(errors.As(err, &te), te.Line, te.Field)
	// Output:
	// outage: 0s to at least 700ms
	// then until below 5 per window for 300ms
	// true 3 outages[0].durration
}
