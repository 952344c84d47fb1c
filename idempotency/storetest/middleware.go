package storetest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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

// The suite's cases that run the Middleware over a store, end to end over
// HTTP, and the handlers and client they share with Interrupted.

// charges is a handler that performs a counted side effect per request
// and answers 201 with the charge's number.
type charges struct {
	n    atomic.Int64
	hold time.Duration // how long the work takes after the effect
}

func (h *charges) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := h.n.Add(1)
	if h.hold > 0 {
		t := time.NewTimer(h.hold) // the work's own duration, not a wait for a condition
		<-t.C
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Charge", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"id":"ch_%d","request":%q}`, n, body)
}

func serve(t *testing.T, s idempotency.Store, lease time.Duration, h http.Handler) *httptest.Server {
	m, err := idempotency.NewMiddleware(h, idempotency.Config{Store: s, Lease: lease, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv
}

// got is one response, read whole.
type got struct {
	status  int
	header  http.Header
	body    string
	trailer http.Header
}

// post sends a request from the client "Bearer client-a".
func post(t *testing.T, c *http.Client, url, key, body string) (got, error) {
	return postAs(t, c, "Bearer client-a", url, key, body)
}

// postAs sends a request with the Authorization given ("" for none).
func postAs(t *testing.T, c *http.Client, authorization, url, key, body string) (got, error) {
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return got{}, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", `"`+key+`"`)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := c.Do(req)
	if err != nil {
		return got{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return got{resp.StatusCode, resp.Header, string(b), resp.Trailer}, err
}

// scopeSpy records the scopes a store is given.
type scopeSpy struct {
	idempotency.Store
	mu     sync.Mutex
	scopes []string
}

func (s *scopeSpy) Begin(ctx context.Context, scope, key, fp string, lease time.Duration) (idempotency.Begun, error) {
	s.mu.Lock()
	s.scopes = append(s.scopes, scope)
	s.mu.Unlock()
	return s.Store.Begin(ctx, scope, key, fp, lease)
}

// clientsApart: under the Middleware's default scope (the caller's
// credentials), a client that sends another's key — reused or guessed —
// gets a run of its own: not the other's response, not its Set-Cookie,
// not a 422 that would tell it the key exists. Each client's repeat
// replays its own response. A key on a request without credentials is
// refused, and the store never sees a credential.
func clientsApart(t *testing.T, s idempotency.Store) {
	var runs atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := runs.Add(1)
		w.Header().Set("Set-Cookie", fmt.Sprintf("session=%s-%d", body, n))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "charge %d for %s", n, body)
	})
	spy := &scopeSpy{Store: s}
	srv := serve(t, spy, 10*time.Second, h)
	c := srv.Client()
	const alice, mallory = "Bearer alice-secret", "Bearer mallory-secret"
	steps := []struct {
		who, body  string
		status     int
		wantBody   string
		wantCookie string
	}{
		{alice, "alice", 201, "charge 1 for alice", "session=alice-1"},
		{mallory, "alice", 201, "charge 2 for alice", "session=alice-2"},                            // the same request, another client: its own run
		{mallory, "mallory", 422, "", ""},                                                           // its own key, reused: its own 422
		{"Bearer eve-secret", "other body", 201, "charge 3 for other body", "session=other body-3"}, // never 422 for another's key
		{alice, "alice", 201, "charge 1 for alice", "session=alice-1"},                              // alice's replay is alice's
		{mallory, "alice", 201, "charge 2 for alice", "session=alice-2"},
		{"", "alice", 400, "", ""}, // no credential: the key cannot be scoped
	}
	for i, st := range steps {
		r, err := postAs(t, c, st.who, srv.URL+"/v1/charges", "shared-key", st.body)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i+1, st.who, err)
		}
		if r.status != st.status || (st.wantBody != "" && (r.body != st.wantBody || r.header.Get("Set-Cookie") != st.wantCookie)) {
			t.Fatalf("step %d (%q sends %q) = %d %q Set-Cookie %q; want %d %q Set-Cookie %q", i+1, st.who, st.body,
				r.status, r.body, r.header.Get("Set-Cookie"), st.status, st.wantBody, st.wantCookie)
		}
		if st.status == 400 && !strings.Contains(r.body, "idempotency_scope_missing") {
			t.Fatalf("step %d: a key without credentials = %s; want idempotency_scope_missing", i+1, r.body)
		}
	}
	if runs.Load() != 3 {
		t.Fatalf("handler runs = %d, want 3 (one per client)", runs.Load())
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	for _, scope := range spy.scopes {
		if strings.Contains(scope, "secret") || strings.Contains(scope, "Bearer") {
			t.Fatalf("the store was given the scope %q: a credential in the clear", scope)
		}
	}
}

// trailers: a response's trailer — declared in a Trailer header, or set
// under http.TrailerPrefix — is stored and replayed with it.
func trailers(t *testing.T, s idempotency.Store) {
	var runs atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		w.Header().Set("Trailer", "X-Checksum")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "run %d", n)
		w.Header().Set("X-Checksum", fmt.Sprintf("sum-%d", n))
		w.Header().Add(http.TrailerPrefix+"X-Usage", "tokens=42")
		w.Header().Add(http.TrailerPrefix+"X-Usage", "cached=7")
	})
	srv := serve(t, s, 10*time.Second, h)
	var first got
	for i := range 2 {
		r, err := post(t, srv.Client(), srv.URL, "t-1", "x")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = r
			if r.body != "run 1" || r.trailer.Get("X-Checksum") != "sum-1" || !slices.Equal(r.trailer.Values("X-Usage"), []string{"tokens=42", "cached=7"}) {
				t.Fatalf("first = %q trailer %v; want run 1 with its trailer", r.body, r.trailer)
			}
			continue
		}
		if r.body != first.body || !sameHeader(r.trailer, first.trailer) || runs.Load() != 1 {
			t.Fatalf("replay = %q trailer %v after %d runs; want %q trailer %v after 1", r.body, r.trailer, runs.Load(), first.body, first.trailer)
		}
	}
}

func concurrentDuplicates(t *testing.T, s idempotency.Store) {
	h := &charges{hold: 50 * time.Millisecond}
	srv := serve(t, s, 10*time.Second, h)
	// Each duplicate retries through recoil's Transport, which waits out
	// the 409's Retry-After and asks again under the same key.
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	tr := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{MaxAttempts: 10, Budget: recoil.NoBudget}}
	client := &http.Client{Transport: tr}
	const n = 100
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make([]got, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = post(t, client, srv.URL+"/v1/charges", "dup-1", `{"amount":100}`)
		})
	}
	close(start)
	wg.Wait()
	if got := h.n.Load(); got != 1 {
		t.Errorf("side effects = %d, want exactly 1", got)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("duplicate %d: %v", i, errs[i])
		}
		r := results[i]
		if r.status != http.StatusCreated || r.body != results[0].body || r.header.Get("X-Charge") != "1" || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("duplicate %d = %d %v %s; want the same 201 as the first, %s", i, r.status, r.header, r.body, results[0].body)
		}
	}
}

func mismatch(t *testing.T, s idempotency.Store) {
	h := &charges{}
	srv := serve(t, s, 10*time.Second, h)
	c := srv.Client()
	if r, err := post(t, c, srv.URL+"/v1/charges", "m-1", `{"amount":100}`); err != nil || r.status != http.StatusCreated {
		t.Fatalf("first = %+v, %v", r, err)
	}
	for _, tt := range []struct{ path, body string }{{"/v1/charges", `{"amount":999}`}, {"/v1/refunds", `{"amount":100}`}} {
		r, err := post(t, c, srv.URL+tt.path, "m-1", tt.body)
		if err != nil || r.status != http.StatusUnprocessableEntity || r.header.Get("Content-Type") != "application/problem+json" || !strings.Contains(r.body, "idempotency_key_reused") {
			t.Fatalf("POST %s %s under the same key = %+v, %v; want 422 problem+json", tt.path, tt.body, r, err)
		}
	}
	if h.n.Load() != 1 {
		t.Fatalf("side effects = %d, want 1", h.n.Load())
	}
}

// crashAfterEffect: the handler performs its side effect and dies before
// answering (a panic; the process dying is the same to the store: nothing
// is stored, nothing released). The documented outcome: a retry within
// the lease gets 409 with Retry-After; once the lease runs out a retry
// runs the handler again — the effect is at least once — and every retry
// after that replays the second run's response.
func crashAfterEffect(t *testing.T, s idempotency.Store) {
	var effects atomic.Int64
	crash := atomic.Bool{}
	crash.Store(true)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := effects.Add(1)
		if crash.Load() {
			panic(http.ErrAbortHandler) // dies after the effect
		}
		fmt.Fprintf(w, "charged %d", n)
	})
	const lease = 500 * time.Millisecond
	srv := serve(t, s, lease, h)
	c := srv.Client()
	began := time.Now()
	if _, err := post(t, c, srv.URL, "crash-1", "x"); err == nil {
		t.Fatal("the crashed request got a response")
	}
	crash.Store(false)
	r, err := post(t, c, srv.URL, "crash-1", "x")
	if time.Since(began) < lease && (err != nil || r.status != http.StatusConflict || r.header.Get("Retry-After") == "") {
		t.Fatalf("retry within the lease = %+v, %v; want 409 with Retry-After", r, err)
	}
	eventually(t, 10*time.Second, "no retry ran after the lease ran out", func() bool {
		r, err = post(t, c, srv.URL, "crash-1", "x")
		return err == nil && r.status != http.StatusConflict
	})
	if r.status != http.StatusOK || r.body != "charged 2" || effects.Load() != 2 {
		t.Fatalf("after the lease = %d %q, effects %d; want the handler run again (at least once: 2 effects)", r.status, r.body, effects.Load())
	}
	if r, err = post(t, c, srv.URL, "crash-1", "x"); err != nil || r.body != "charged 2" || effects.Load() != 2 {
		t.Fatalf("a later retry = %+v, %v, effects %d; want the replay", r, err, effects.Load())
	}
}

func releaseOn5xx(t *testing.T, s idempotency.Store) {
	var calls atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "dependency down, nothing done", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	srv := serve(t, s, 10*time.Second, h)
	c := srv.Client()
	for i, want := range []int{503, 201, 201} {
		if r, err := post(t, c, srv.URL, "r-1", "x"); err != nil || r.status != want {
			t.Fatalf("request %d = %+v, %v; want %d", i+1, r, err, want)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("handler calls = %d, want 2 (the 503 released the key; the 201 was stored)", calls.Load())
	}
}
