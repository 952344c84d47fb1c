// Package storetest is the conformance suite every idempotency.Store runs:
// the memory store's tests, redisstore's and pgstore's call Run with a
// fresh store (its own key prefix or table) per test, so the three are held
// to the same outcomes — one side effect for 100 concurrent duplicates, 422
// on a payload mismatch, the documented outcome of a handler that crashes
// after its side effect, fencing of a lease that was taken over.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// NewStore returns a store for one test, empty and apart from every other
// test's (a table or a key prefix of its own), and cleans it up with
// t.Cleanup.
type NewStore func(t *testing.T) idempotency.Store

// Run runs the suite against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		run  func(*testing.T, idempotency.Store)
	}{
		{"lifecycle", lifecycle},
		{"scopes", scopes},
		{"bytes kept exactly", exactBytes},
		{"clients apart", clientsApart},
		{"trailers replayed", trailers},
		{"lease taken over", leaseTakenOver},
		{"100 concurrent duplicates", concurrentDuplicates},
		{"payload mismatch", mismatch},
		{"crash after the side effect", crashAfterEffect},
		{"5xx releases the key", releaseOn5xx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newStore(t))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func lifecycle(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	b, err := s.Begin(c, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateNew || b.Token == "" {
		t.Fatalf("Begin on a free key = %+v, %v; want new with a token", b, err)
	}
	tok := b.Token
	if b, err = s.Begin(c, "client-1", "k1", "fp", time.Minute); err != nil || b.State != idempotency.StateRunning || b.RetryIn <= 0 || b.RetryIn > time.Minute {
		t.Fatalf("Begin on a held key = %+v, %v; want running, its lease's remainder in RetryIn", b, err)
	}
	if b, err = s.Begin(c, "client-1", "k1", "other", time.Minute); err != nil || b.State != idempotency.StateMismatch {
		t.Fatalf("Begin with another fingerprint = %+v, %v; want mismatch", b, err)
	}
	if err := s.Complete(c, "client-1", "k1", "not-the-token", &idempotency.Response{Status: 200}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Complete with a wrong token = %v, want ErrLeaseLost", err)
	}
	want := &idempotency.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}, "X-Two": {"a", "b"}}, Body: []byte(`{"id":"ch_1"}` + "\x00\xff")}
	if err := s.Complete(c, "client-1", "k1", tok, want); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := s.Complete(c, "client-1", "k1", tok, &idempotency.Response{Status: 500}); err != nil {
		t.Fatalf("Complete again under the same token = %v, want nil (and no change)", err)
	}
	b, err = s.Begin(c, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateDone {
		t.Fatalf("Begin on a finished key = %+v, %v; want done", b, err)
	}
	if !sameResponse(b.Response, want) {
		t.Fatalf("stored response = %+v, want %+v exactly", b.Response, want)
	}
	if b, err = s.Begin(c, "client-1", "k1", "other", time.Minute); err != nil || b.State != idempotency.StateMismatch {
		t.Fatalf("Begin on a finished key with another fingerprint = %+v, %v; want mismatch", b, err)
	}
	// Release frees a key for the next request.
	b, _ = s.Begin(c, "client-1", "k2", "fp", time.Minute)
	if err := s.Release(c, "client-1", "k2", "not-the-token"); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Release with a wrong token = %v, want ErrLeaseLost", err)
	}
	if err := s.Release(c, "client-1", "k2", b.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if b, err = s.Begin(c, "client-1", "k2", "fp2", time.Minute); err != nil || b.State != idempotency.StateNew {
		t.Fatalf("Begin after Release = %+v, %v; want new (any fingerprint)", b, err)
	}
}

func sameResponse(a, b *idempotency.Response) bool {
	return a != nil && b != nil && a.Status == b.Status && bytes.Equal(a.Body, b.Body) &&
		sameHeader(a.Header, b.Header) && sameHeader(a.Trailer, b.Trailer)
}

// sameHeader reports whether two headers hold the same names with the
// same values in the same order, byte for byte.
func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if !slices.Equal(a[k], v) {
			return false
		}
	}
	return true
}

// scopes: a key in one scope is a key of its own in every other, and no
// two scope and key pairs spell one stored key, whatever bytes they hold.
func scopes(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	for _, scope := range []string{"a", "b", ""} {
		if b, err := s.Begin(c, scope, "same", "fp", time.Minute); err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(scope %q) = %+v, %v; want new: scopes are apart", scope, b, err)
		}
	}
	for _, pair := range [][2][2]string{
		{{"a\x00b", "c"}, {"a", "b\x00c"}},
		{{"a:b", "c"}, {"a", "b:c"}},
		{{"1:a", "b"}, {"1", "a:b"}},
		{{"ab", "c"}, {"a", "bc"}},
	} {
		first, second := pair[0], pair[1]
		b, err := s.Begin(c, first[0], first[1], "fp-first", time.Minute)
		if err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(%q, %q) = %+v, %v; want new", first[0], first[1], b, err)
		}
		if err := s.Complete(c, first[0], first[1], b.Token, &idempotency.Response{Status: 201, Body: []byte("first")}); err != nil {
			t.Fatal(err)
		}
		if b, err := s.Begin(c, second[0], second[1], "fp-second", time.Minute); err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(%q, %q) after (%q, %q) finished = %+v, %v; want new: the pairs are two keys", second[0], second[1], first[0], first[1], b, err)
		}
	}
}

// exactBytes: scope, key and every byte of the response come back as
// they went in — a binary body, header values that are not UTF-8 (a
// Latin-1 filename), a name that is not either, repeated fields in their
// order, and a trailer.
func exactBytes(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	body := make([]byte, 512)
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := &idempotency.Response{
		Status: 200,
		Header: http.Header{
			"Content-Disposition": {"attachment; filename=\"caf\xe9 \xff.txt\""},
			"Set-Cookie":          {"z=1", "a=2", "m=3"},
			"X-Caf\xe9":           {"\x80\x00\x01", ""},
			"Trailer":             {"X-Checksum"},
		},
		Body:    body,
		Trailer: http.Header{"X-Checksum": {"\xfe\xed", "second"}, "Grpc-Status": {"0"}},
	}
	for _, k := range []struct{ scope, key string }{{"\xff\xfe scope", "\x80key"}, {"caf\xe9", "k"}} {
		b, err := s.Begin(c, k.scope, k.key, "fp", time.Minute)
		if err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(%q, %q) = %+v, %v; want new: any bytes are a scope and a key", k.scope, k.key, b, err)
		}
		if err := s.Complete(c, k.scope, k.key, b.Token, want); err != nil {
			t.Fatalf("Complete(%q, %q): %v", k.scope, k.key, err)
		}
		b, err = s.Begin(c, k.scope, k.key, "fp", time.Minute)
		if err != nil || b.State != idempotency.StateDone {
			t.Fatalf("Begin(%q, %q) on the finished key = %+v, %v; want done", k.scope, k.key, b, err)
		}
		if !sameResponse(b.Response, want) {
			t.Fatalf("stored (%q, %q) = %#v, want %#v byte for byte", k.scope, k.key, *b.Response, *want)
		}
	}
}

// eventually polls cond every 10 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("after %v: %s", timeout, what)
		case <-tick.C:
		}
	}
}

func leaseTakenOver(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	first, err := s.Begin(c, "", "k", "fp", 200*time.Millisecond)
	if err != nil || first.State != idempotency.StateNew {
		t.Fatalf("Begin = %+v, %v", first, err)
	}
	var second idempotency.Begun
	eventually(t, 5*time.Second, "the key was never taken over after its lease", func() bool {
		second, err = s.Begin(c, "", "k", "fp", time.Minute)
		return err == nil && second.State == idempotency.StateNew
	})
	if second.Token == first.Token {
		t.Fatal("the new holder got the old token")
	}
	if err := s.Complete(c, "", "k", first.Token, &idempotency.Response{Status: 200, Body: []byte("stale")}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Complete by the holder whose lease was taken over = %v, want ErrLeaseLost", err)
	}
	if err := s.Complete(c, "", "k", second.Token, &idempotency.Response{Status: 200, Body: []byte("fresh")}); err != nil {
		t.Fatalf("Complete by the new holder: %v", err)
	}
	if b, _ := s.Begin(c, "", "k", "fp", time.Minute); b.State != idempotency.StateDone || string(b.Response.Body) != "fresh" {
		t.Fatalf("stored = %+v, want the new holder's response", b)
	}
}

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
