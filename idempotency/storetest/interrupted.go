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
	var mu sync.Mutex
	effects := map[string]int{}
	total := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := idempotency.ClaimFrom(r.Context())
		mu.Lock()
		effects[c.Key]++
		total++
		n := total
		mu.Unlock()
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
	// Count the errors the server answered with while the store was
	// interrupted: the Transport retries them, so the final outcomes alone
	// would not show them.
	var served sync.Map // code → *atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			var p struct{ Code string }
			_ = json.Unmarshal(rec.Body.Bytes(), &p)
			n, _ := served.LoadOrStore(strconv.Itoa(rec.Code)+" "+p.Code, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{MaxAttempts: 8, Budget: recoil.NoBudget}}}

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
			results[i], errs[i] = post(t, client, srv.URL, "int-"+strconv.Itoa(i), "x")
		})
	}
	eventually(t, 20*time.Second, "10 side effects never happened", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return total >= 10
	})
	interrupt(t, srv.URL)
	wg.Wait()

	ok, failed := 0, 0
	for i := range n {
		key := "int-" + strconv.Itoa(i)
		mu.Lock()
		e := effects[key]
		mu.Unlock()
		if e > 1 {
			t.Errorf("key %s: side effect ran %d times", key, e)
		}
		if errs[i] != nil {
			t.Errorf("key %s: %v (want a response: the store's failures are answered, not dropped)", key, errs[i])
			continue
		}
		r := results[i]
		switch {
		case r.status == http.StatusCreated:
			ok++
			if e != 1 || !strings.HasSuffix(r.body, " for "+key) {
				t.Errorf("key %s: 201 %q with %d effects", key, r.body, e)
			}
			again, err := post(t, srv.Client(), srv.URL, key, "x")
			if err != nil || again.status != r.status || again.body != r.body {
				t.Errorf("key %s: repeat = %+v, %v; want the replay of %q", key, again, err, r.body)
			}
		case r.status >= 400 && r.header.Get("Content-Type") == "application/problem+json":
			failed++
			var p struct{ Code string }
			_ = json.Unmarshal([]byte(r.body), &p)
			t.Logf("key %s: %d %s (%d effects)", key, r.status, p.Code, e)
		default:
			t.Errorf("key %s: %d %q: neither the key's response nor a problem", key, r.status, r.body)
		}
	}
	mu.Lock()
	t.Logf("%d requests: %d succeeded, %d ended with a problem+json error; %d side effects in all", n, ok, failed, total)
	mu.Unlock()
	served.Range(func(k, v any) bool {
		t.Logf("answered %s ×%d while the store was interrupted (each retried by the Transport)", k, v.(*atomic.Int64).Load())
		return true
	})
	if ok == 0 {
		t.Error("no request succeeded: the store never came back")
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
