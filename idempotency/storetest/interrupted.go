package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/recoilhttp"
)

// Interrupted runs 40 logical requests, each with a key of its own and
// retried by recoil's Transport, against a Middleware on s whose handler
// performs one counted side effect per run and takes 100 ms; once 10
// effects have happened, with others in flight, it calls interrupt (which
// restarts the store, or kills its connections, and returns once the
// store is back) with the server's URL. Then it checks what must hold
// whatever the interruption hit: no key's effect happened twice; every
// request ended with its key's one response or a problem+json error
// (never a second, different success); and a repeat of every key that
// succeeded replays that response without running the handler.
func Interrupted(t *testing.T, s idempotency.Store, interrupt func(t *testing.T, url string)) {
	rig := newChargeRig(t, s)
	client := &http.Client{Transport: &recoilhttp.Transport{Base: rig.base, Policy: &recoil.Policy{MaxAttempts: 8, Budget: recoil.NoBudget}}}

	const n = 40
	results := make([]got, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Spread over 400 ms, so that requests are at every stage when
			// the interruption comes.
			tm := time.NewTimer(time.Duration(i) * 10 * time.Millisecond)
			<-tm.C
			results[i], errs[i] = post(t, client, rig.srv.URL, "int-"+strconv.Itoa(i), "x")
		})
	}
	eventually(t, 20*time.Second, "10 side effects never happened", func() bool {
		return rig.total() >= 10
	})
	interrupt(t, rig.srv.URL)
	wg.Wait()

	ok, failed := 0, 0
	for i := range n {
		switch rig.check(t, "int-"+strconv.Itoa(i), results[i], errs[i]) {
		case outcomeOK:
			ok++
		case outcomeProblem:
			failed++
		}
	}
	t.Logf("%d requests: %d succeeded, %d ended with a problem+json error; %d side effects in all", n, ok, failed, rig.total())
	rig.served.Range(func(k, v any) bool {
		t.Logf("answered %s ×%d while the store was interrupted (each retried by the Transport)", k, v.(*atomic.Int64).Load())
		return true
	})
	if ok == 0 {
		t.Error("no request succeeded: the store never came back")
	}
}

// chargeRig is Interrupted's server: a Middleware on the store in front of
// a handler that performs one counted side effect per run, and a count of
// the errors the server answered with.
type chargeRig struct {
	mu      sync.Mutex
	effects map[string]int // key → side effects
	runs    int
	// served counts the errors the server answered with while the store
	// was interrupted: the Transport retries them, so the final outcomes
	// alone would not show them. Code → *atomic.Int64.
	served sync.Map
	srv    *httptest.Server
	base   *http.Transport
}

// newChargeRig starts a chargeRig on s, closed when t ends.
func newChargeRig(t *testing.T, s idempotency.Store) *chargeRig {
	rig := &chargeRig{effects: map[string]int{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := idempotency.ClaimFrom(r.Context())
		rig.mu.Lock()
		rig.effects[c.Key]++
		rig.runs++
		n := rig.runs
		rig.mu.Unlock()
		tm := time.NewTimer(100 * time.Millisecond) // the work's own duration
		<-tm.C
		w.Header().Set("X-Charge", strconv.Itoa(n))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "charge %d for %s", n, c.Key)
	})
	m, err := idempotency.NewMiddleware(h, idempotency.Config{Store: s, Lease: 30 * time.Second, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	rig.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			var p struct{ Code string }
			_ = json.Unmarshal(rec.Body.Bytes(), &p)
			n, _ := rig.served.LoadOrStore(strconv.Itoa(rec.Code)+" "+p.Code, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(rig.srv.Close)
	rig.base = &http.Transport{}
	t.Cleanup(rig.base.CloseIdleConnections)
	return rig
}

// total is how many side effects have happened.
func (rig *chargeRig) total() int {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	return rig.runs
}

// An outcome is how one of Interrupted's requests ended.
type outcome int

const (
	outcomeWrong   outcome = iota // an error, or neither of the others
	outcomeOK                     // the key's one response
	outcomeProblem                // a problem+json error
)

// check judges the request under key, which ended with r or err: its
// side effect ran at most once, and it ended with its key's one response
// (which a repeat replays) or a problem+json error.
func (rig *chargeRig) check(t *testing.T, key string, r got, err error) outcome {
	rig.mu.Lock()
	e := rig.effects[key]
	rig.mu.Unlock()
	if e > 1 {
		t.Errorf("key %s: side effect ran %d times", key, e)
	}
	if err != nil {
		t.Errorf("key %s: %v (want a response: the store's failures are answered, not dropped)", key, err)
		return outcomeWrong
	}
	switch {
	case r.status == http.StatusCreated:
		if e != 1 || !strings.HasSuffix(r.body, " for "+key) {
			t.Errorf("key %s: 201 %q with %d effects", key, r.body, e)
		}
		again, err := post(t, rig.srv.Client(), rig.srv.URL, key, "x")
		if err != nil || again.status != r.status || again.body != r.body {
			t.Errorf("key %s: repeat = %+v, %v; want the replay of %q", key, again, err, r.body)
		}
		return outcomeOK
	case r.status >= 400 && r.header.Get("Content-Type") == "application/problem+json":
		var p struct{ Code string }
		_ = json.Unmarshal([]byte(r.body), &p)
		t.Logf("key %s: %d %s (%d effects)", key, r.status, p.Code, e)
		return outcomeProblem
	default:
		t.Errorf("key %s: %d %q: neither the key's response nor a problem", key, r.status, r.body)
		return outcomeWrong
	}
}

// ExpectUnavailable posts under a fresh key to url, whose store is down,
// and fails t unless the answer is 503 problem+json with Retry-After: the
// clear error a request gets while the store cannot be reached.
func ExpectUnavailable(t *testing.T, url string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(c, http.MethodPost, url, strings.NewReader("x"))
	req.Header.Set("Idempotency-Key", `"while-down"`)
	req.Header.Set("Authorization", "Bearer client-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST while the store is down: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("POST while the store is down = %d %v; want 503 problem+json with Retry-After", resp.StatusCode, resp.Header)
	}
}
