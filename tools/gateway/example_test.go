package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/gateway"
)

// A gateway that is down for an hour, and one caller that retries three
// times without waiting: the gateway counts every attempt, and when they
// arrived.
func Example() {
	g, err := gateway.New(gateway.Config{
		Outages: []gateway.Outage{{Duration: time.Hour}}, // 503 from the first attempt
	})
	if err != nil {
		panic(err)
	}
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
	// s.Peak is the most attempts in any one s.Window (200ms): 3 here when
	// the machine sends the three within 200ms, which a busy one may not,
	// so the example does not print it.
	stop()
	fmt.Println("serve:", <-served)
	// Output:
	// status: 503
	// attempts: 3 accepted: 0
	// by attempt number: [1 1 1 0]
	// from caller-1: 3
	// serve: <nil>
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

// Bare is the ceiling a benchmark compares the gateway with: the same
// success, with no counting and no faults behind it.
func ExampleBare() {
	rec := httptest.NewRecorder()
	gateway.Bare().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(rec.Body.String())
	// Output:
	// 200 application/json
	// {"id":"msg_gateway","type":"message","role":"assistant","model":"gateway","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}
}

// A Gateway is an http.Handler too: a test can drive it without a listener.
// Here its validator rejects any request that uses the field "strict",
// with a 400 in the provider's shape, as a real one does.
func ExampleNew() {
	g, err := gateway.New(gateway.Config{RejectField: "strict"})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	for _, body := range []string{
		`{"tools":[{"name":"lookup","input_schema":{"type":"object"}}]}`,
		`{"tools":[{"name":"lookup","input_schema":{"type":"object","strict":true}}]}`,
	} {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body)))
		if rec.Code != http.StatusOK {
			fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
			continue
		}
		fmt.Println(rec.Code)
	}
	fmt.Println("attempts:", g.Stats().Attempts)
	// Output:
	// 200
	// 400 {"type":"error","error":{"type":"invalid_request_error","message":"tools.0.input_schema: unknown field \"strict\""}}
	// attempts: 2
}

// A timeline kept next to a load test, read from its file: an outage for
// the first two seconds, then random 500s for one attempt in ten.
func ExampleLoadTimeline() {
	f, err := os.CreateTemp("", "gateway-*.yaml")
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString("outages:\n  - duration: 2s\nfailure: {rate: 0.1}\n"); err != nil {
		panic(err)
	}
	f.Close()
	cfg, err := gateway.LoadTimeline(f.Name())
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Outages[0].Duration, cfg.FailureRate)

	_, err = gateway.LoadTimeline(f.Name() + ".missing")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// 2s 0.1
	// true
}

// Two providers on one port: the primary spent its quota an hour ago, the
// backup is healthy. A Transport with a fallback chain of the two sends
// the caller's request on to the backup, and each target counts its own.
func ExampleNewSet() {
	set, err := gateway.NewSet("", false, []gateway.Target{
		{Name: "primary", Config: gateway.Config{Outages: []gateway.Outage{{Duration: time.Hour, Status: 429, Code: "insufficient_quota"}}}},
		{Name: "backup"},
	})
	if err != nil {
		panic(err)
	}
	url, stop, err := set.Start()
	if err != nil {
		panic(err)
	}
	defer stop()

	primary, _ := recoilhttp.NewTarget("primary", url+"/primary", nil, "")
	backup, _ := recoilhttp.NewTarget("backup", url+"/backup", nil, "")
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	rt := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{
		Fallback: &recoil.Fallback{Targets: []recoil.Target{primary, backup}},
	}}
	resp, err := rt.RoundTrip(httptest.NewRequest(http.MethodGet, url+"/primary/v1/models", nil).WithContext(context.Background()))
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	fmt.Println("status:", resp.StatusCode)
	for _, t := range set.Stats() {
		fmt.Printf("%s: %d attempts, %d accepted\n", t.Name, t.Stats.Attempts, t.Stats.Accepted)
	}
	// Output:
	// status: 200
	// primary: 1 attempts, 0 accepted
	// backup: 1 attempts, 1 accepted
}
