package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/proxy/internal/openloop"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// TestTwoReplicas is docs/proxy.md's "Two replicas, one allowance": two
// proxies share a route allowance of 50 calls a second through a Redis of
// the test's own, each driven at 150 calls a second (six times the
// allowance). The provider counts what it admits per 1 s window: never more
// than the fleet's overshoot bound (docs/fleet.md: Burst + Limit·t/Window +
// replicas × Lease, Burst being Limit) plus what a switch between Redis and
// the local share may admit on top, a burst each way: the replicas' local
// buckets start full when they fall back, and so does the shared one when
// a Redis that lost its state comes back. Mid-run the test kills Redis: both
// replicas fall back to their local share and say so on /metrics
// (recoil_proxy_fleet_shared 0) and /recoil/state (fleet_shared false),
// and rejoin, saying so too, once a new Redis answers on the same port.
func TestTwoReplicas(t *testing.T) {
	testsvc.SkipUnlessLong(t, "two proxy replicas under load with their Redis killed mid-run")
	const (
		limit  = 50
		window = time.Second
		rate   = 150 // each replica's
		// The load runs in slices until the test has seen the kill, the
		// fallback and the rejoin, then for tail more, so that the windows
		// after the rejoin are measured too. On a busy machine the three
		// take longer than on an idle one; maxRun is when the test gives up.
		slice  = 2 * time.Second
		tail   = 10 * time.Second
		maxRun = 3 * time.Minute
	)
	rds := startRedis(t)
	up := newCounter(t)
	var reps [2]*replica
	for i := range reps {
		cfg := oneRoute(OpenAI, up.URL, oneAttempt())
		cfg.Routes[0].Allowance = &Allowance{Limit: limit, Window: window}
		cfg.Fleet = &Fleet{Redis: rds.addr, Replicas: 2, Timeout: time.Second, Prefix: "proxyreplicas:"}
		reps[i] = startReplica(t, cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // before the servers close
	var enough atomic.Bool
	offered, answered := make([]int, len(reps)), make([]int, len(reps))
	for i, r := range reps {
		wg.Go(func() {
			client := openloop.Client()
			for stop := time.Now().Add(maxRun); !enough.Load() && ctx.Err() == nil && time.Now().Before(stop); {
				res := openloop.Run(ctx, client, r.url+"/v1/chat/completions", benchBody, rate, slice)
				offered[i], answered[i] = offered[i]+res.Calls, answered[i]+res.OK
			}
		})
	}
	deadline := time.After(maxRun)
	both := func(shared bool) func() bool {
		return func() bool { return reps[0].shared(t) == shared && reps[1].shared(t) == shared }
	}
	up.await(t, deadline, "both replicas sharing through Redis", func() bool { return both(true)() && up.total() >= 2*limit })
	rds.vanish(t)
	killed := time.Now()
	up.await(t, deadline, "both replicas on their local share once Redis was killed", both(false))
	lost := time.Now()
	rds.restart(t)
	up.await(t, deadline, "both replicas sharing again once Redis was back", both(true))
	back := time.Now()
	select {
	case <-time.After(tail):
	case <-deadline:
	}
	enough.Store(true)
	wg.Wait()

	windows := up.windows(window)
	lease := int64(max(1, limit*2/100))        // the fleet's default lease: 2 % of the limit
	bound := limit + limit + 2*lease + 2*limit // Burst + Limit + replicas × Lease, and a burst each way
	t.Logf("admitted per %v window: %v (bound %d); Redis killed at %.1f s, both replicas local by %.1f s, shared again by %.1f s",
		window, windows, bound, up.since(killed), up.since(lost), up.since(back))
	for i, n := range windows {
		if n > int64(bound) {
			t.Errorf("window %d admitted %d, over the bound %d", i, n, bound)
		}
	}
	sent, ok := 0, 0
	for i := range reps {
		sent, ok = sent+offered[i], ok+answered[i]
	}
	t.Logf("offered %d calls, %d answered 200", sent, ok)
	if ok == 0 || ok >= sent {
		t.Errorf("%d of %d calls answered: the allowance should admit some and refuse the rest", ok, sent)
	}
}

// oneAttempt sends each call once: what the allowance refuses is answered
// at once, not retried.
func oneAttempt() *policyspec.Spec {
	s := fast()
	s.MaxAttempts = 1
	return s
}

// replica is one proxy of TestTwoReplicas, with its metrics.
type replica struct {
	url string
}

func startReplica(t *testing.T, cfg Config) *replica {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Metrics: m})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer((&Server{Proxy: p, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}).Handler())
	t.Cleanup(func() { srv.Close(); _ = p.Close() })
	return &replica{url: srv.URL}
}

// shared reads whether the replica decides through Redis, where its
// operator would: on /metrics and on the page's /recoil/state. The two
// must agree.
func (r *replica) shared(t *testing.T) bool {
	t.Helper()
	metric := ""
	_, text := get(t, r.url+"/metrics")
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(line, "recoil_proxy_fleet_shared "); ok {
			metric = strings.TrimSpace(v)
		}
	}
	var st struct {
		Shared bool `json:"fleet_shared"`
	}
	_, state := get(t, r.url+"/recoil/state")
	if err := json.Unmarshal([]byte(state), &st); err != nil {
		t.Fatalf("/recoil/state: %v", err)
	}
	if testing.Verbose() {
		t.Logf("%s: recoil_proxy_fleet_shared %s, fleet_shared %v", r.url, metric, st.Shared)
	}
	if (metric == "1") != st.Shared {
		// The two are read one after the other: a switch between the
		// reads is no disagreement; read again.
		return r.shared(t)
	}
	return st.Shared
}

// counter is a provider that answers every call at once and records when
// each arrived.
type counter struct {
	*httptest.Server
	mu       sync.Mutex
	arrivals []time.Time
	arrived  chan struct{} // a call arrived: what the test's waits are paced by
}

func newCounter(t *testing.T) *counter {
	c := &counter{arrived: make(chan struct{}, 1)}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c.mu.Lock()
		c.arrivals = append(c.arrivals, time.Now())
		c.mu.Unlock()
		select {
		case c.arrived <- struct{}{}:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchAnswer)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.arrivals)
}

// since returns the seconds from the first arrival to at.
func (c *counter) since(at time.Time) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.arrivals) == 0 {
		return 0
	}
	return at.Sub(c.arrivals[0]).Seconds()
}

// await checks cond after each arrival until it holds, failing the test,
// with what it waited for, when deadline comes first.
func (c *counter) await(t *testing.T, deadline <-chan time.Time, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-c.arrived:
		case <-deadline:
			t.Fatalf("the run ended before %s: %d calls arrived at the provider", what, c.total())
		}
	}
}

// windows counts the arrivals in each whole window from the first.
func (c *counter) windows(w time.Duration) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.arrivals) == 0 {
		return nil
	}
	first, last := c.arrivals[0], c.arrivals[len(c.arrivals)-1]
	out := make([]int64, int(last.Sub(first)/w)) // the last, partial window left out
	for _, at := range c.arrivals {
		if i := int(at.Sub(first) / w); i < len(out) {
			out[i]++
		}
	}
	return out
}

// redisServer is a redis-server of the test's own, which it can kill and
// start again on the same port.
type redisServer struct {
	addr, port string
	cmd        *exec.Cmd
	exited     chan struct{} // closed once cmd has exited
	// hold keeps the port while Redis is down (see vanish), so that no
	// other test's server can start on it meanwhile and be taken for
	// this one coming back.
	hold net.Listener
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if testsvc.Required() {
			t.Fatalf("no redis-server: %v", err)
		}
		t.Skipf("no redis-server to start and kill: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	r := &redisServer{addr: addr, port: port}
	r.restart(t)
	t.Cleanup(func() { r.kill(t) })
	return r
}

// restart starts redis-server on r's port and returns once it says it
// accepts connections.
func (r *redisServer) restart(t *testing.T) {
	t.Helper()
	if r.hold != nil {
		r.hold.Close()
		r.hold = nil
	}
	cmd := exec.Command("redis-server", "--port", r.port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	ready := &readyWriter{marker: []byte("Ready to accept connections"), ready: make(chan struct{})}
	cmd.Stdout = ready
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(r.exited)
	select {
	case <-ready.ready:
	case <-r.exited:
		r.cmd = nil
		t.Fatalf("redis-server on port %s exited before accepting connections", r.port)
	}
}

// readyWriter takes a process's output and closes ready once marker has
// appeared in it.
type readyWriter struct {
	marker []byte
	mu     sync.Mutex
	seen   []byte
	ready  chan struct{}
	done   bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.seen = append(w.seen, p...)
		if bytes.Contains(w.seen, w.marker) {
			w.done, w.seen = true, nil
			close(w.ready)
		}
	}
	return len(p), nil
}

// kill stops the running redis-server, if any, at once (SIGKILL: no
// goodbye to its clients).
// vanish kills the server and keeps its port: a listener that closes every
// connection it accepts, so a client sees a Redis that went away, and a
// redis-server another package's test starts at the same moment (tests run
// in parallel, each on a port the kernel picked) cannot take the port and
// answer for it. restart lets the port go.
func (r *redisServer) vanish(t *testing.T) {
	t.Helper()
	r.kill(t)
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatalf("holding Redis's port %s once it is killed: %v", r.port, err)
	}
	r.hold = ln
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func (r *redisServer) kill(t *testing.T) {
	t.Helper()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}
