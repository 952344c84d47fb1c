package idempotency_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/recoilhttp"
)

type problemBody struct {
	Type, Title, Detail, Code, Message string
	Status                             int
}

// counted answers 201 "charge N" and counts its runs.
type counted struct{ n atomic.Int64 }

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n := c.n.Add(1)
	w.Header().Set("X-Charge", fmt.Sprint(n))
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "charge %d", n)
}

// do sends a request from the client "Bearer client-a" unless header
// names another Authorization, or "" for none.
func do(h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer client-a")
	for i := 0; i+1 < len(header); i += 2 {
		switch {
		case header[i] == "Authorization" && header[i+1] == "":
			req.Header.Del("Authorization")
		case header[i] == "Authorization":
			req.Header.Set("Authorization", header[i+1])
		default:
			req.Header.Add(header[i], header[i+1])
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func mustMiddleware(t *testing.T, h http.Handler, cfg idempotency.Config) *idempotency.Middleware {
	t.Helper()
	m, err := idempotency.NewMiddleware(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMiddlewareRequests(t *testing.T) {
	tests := []struct {
		name       string
		cfg        idempotency.Config
		method     string
		body       string
		header     []string
		wantStatus int
		wantCode   string // problem code; empty for the handler's answer
		wantRuns   int64
	}{
		{"GET passes through", idempotency.Config{Required: true}, "GET", "", nil, 201, "", 1},
		{"POST without a key, not required", idempotency.Config{}, "POST", "x", nil, 201, "", 1},
		{"POST without a key, required", idempotency.Config{Required: true}, "POST", "x", nil, 400, "idempotency_key_missing", 0},
		{"quoted key", idempotency.Config{}, "POST", "x", []string{"Idempotency-Key", `"k"`}, 201, "", 1},
		{"bare key", idempotency.Config{}, "POST", "x", []string{"Idempotency-Key", "recoil-00ff"}, 201, "", 1},
		{"X-Idempotency-Key", idempotency.Config{Required: true}, "POST", "x", []string{"X-Idempotency-Key", `"k"`}, 201, "", 1},
		{"malformed key", idempotency.Config{}, "POST", "x", []string{"Idempotency-Key", `"k`}, 400, "idempotency_key_malformed", 0},
		{"two keys", idempotency.Config{}, "POST", "x", []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, 400, "idempotency_key_malformed", 0},
		{"key too long", idempotency.Config{MaxKeyLen: 3}, "POST", "x", []string{"Idempotency-Key", "abcd"}, 400, "idempotency_key_malformed", 0},
		{"body too large", idempotency.Config{MaxBody: 4}, "POST", "12345", []string{"Idempotency-Key", "k"}, 413, "request_too_large", 0},
		{"PUT not protected by default", idempotency.Config{Required: true}, "PUT", "x", nil, 201, "", 1},
		{"PUT protected when listed", idempotency.Config{Required: true, Methods: []string{"PUT"}}, "PUT", "x", nil, 400, "idempotency_key_missing", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &counted{}
			w := do(mustMiddleware(t, h, tt.cfg), tt.method, "/v1/charges", tt.body, tt.header...)
			if w.Code != tt.wantStatus || h.n.Load() != tt.wantRuns {
				t.Fatalf("status %d after %d runs, want %d after %d; body %s", w.Code, h.n.Load(), tt.wantStatus, tt.wantRuns, w.Body)
			}
			if tt.wantCode == "" {
				return
			}
			var p problemBody
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Header().Get("Content-Type") != "application/problem+json" ||
				p.Code != tt.wantCode || p.Status != tt.wantStatus || p.Detail == "" || p.Message != p.Detail || p.Type != idempotency.ProblemType {
				t.Fatalf("problem = %s (%v, %q); want application/problem+json with code %s", w.Body, err, w.Header().Get("Content-Type"), tt.wantCode)
			}
		})
	}
}

// brokenBody fails after its first bytes, as a client that hangs up
// mid-body does.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "{\"amo"), nil
	}
	return 0, io.ErrUnexpectedEOF
}

// TestMiddlewareBodyErrors: a body over a limit is 413, whichever limit
// (the middleware's or an http.MaxBytesReader before it); a body that
// cannot be read is 400; neither runs the handler nor stores the key.
func TestMiddlewareBodyErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     func(w http.ResponseWriter) io.ReadCloser
		wantCode int
		wantType string
	}{
		{"unreadable", func(http.ResponseWriter) io.ReadCloser { return io.NopCloser(&brokenBody{}) }, 400, "request_body_unreadable"},
		{"over a MaxBytesReader", func(w http.ResponseWriter) io.ReadCloser {
			return http.MaxBytesReader(w, io.NopCloser(strings.NewReader("0123456789")), 4)
		}, 413, "request_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &counted{}
			m := mustMiddleware(t, h, idempotency.Config{})
			w := httptest.NewRecorder()
			r := httptest.NewRequest("POST", "/v1/charges", nil)
			r.Body = tc.body(w)
			r.Header.Set("Idempotency-Key", "k")
			r.Header.Set("Authorization", "Bearer client-a")
			m.ServeHTTP(w, r)
			var p problemBody
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != tc.wantCode || p.Code != tc.wantType || h.n.Load() != 0 {
				t.Fatalf("%d %s (%v) after %d runs, want %d %s and no run", w.Code, w.Body, err, h.n.Load(), tc.wantCode, tc.wantType)
			}
			// The key was not taken: the same request, whole, runs.
			if again := do(m, "POST", "/v1/charges", "{}", "Idempotency-Key", "k"); again.Code != 201 || h.n.Load() != 1 {
				t.Fatalf("the same key after the failed read = %d after %d runs, want 201 after 1", again.Code, h.n.Load())
			}
		})
	}
}

// TestMiddlewareReplay: a finished key replays status, headers and body
// exactly, without running the handler; another client's same key is a
// key of its own.
func TestMiddlewareReplay(t *testing.T) {
	h := &counted{}
	m := mustMiddleware(t, h, idempotency.Config{Scope: idempotency.ScopeHeader("X-Client")})
	first := do(m, "POST", "/v1/charges", "x", "Idempotency-Key", "k1", "X-Client", "a")
	again := do(m, "POST", "/v1/charges", "x", "Idempotency-Key", `"k1"`, "X-Client", "a")
	if again.Code != first.Code || again.Body.String() != first.Body.String() || again.Header().Get("X-Charge") != "1" || h.n.Load() != 1 {
		t.Fatalf("replay = %d %q %v, want %d %q; handler ran %d times", again.Code, again.Body, again.Header(), first.Code, first.Body, h.n.Load())
	}
	other := do(m, "POST", "/v1/charges", "x", "Idempotency-Key", "k1", "X-Client", "b")
	if other.Body.String() != "charge 2" {
		t.Fatalf("another client's same key = %q, want its own run", other.Body)
	}
	if w := do(m, "POST", "/v1/charges?x=1", "x", "Idempotency-Key", "k1", "X-Client", "a"); w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("same key, another query = %d, want 422", w.Code)
	}
}

// TestMiddlewareScopes: who shares a key under each Scope. Two requests
// under one key and with one body are sent by two callers; the second
// gets the first's replay only when both are one client.
func TestMiddlewareScopes(t *testing.T) {
	certA := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("public key A"), Raw: []byte("cert A")}
	certA2 := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("public key A"), Raw: []byte("cert A, renewed")}
	certB := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("public key B"), Raw: []byte("cert A")}
	type caller struct {
		header []string
		cert   *x509.Certificate
	}
	bearer := func(v string) caller { return caller{header: []string{"Authorization", v}} }
	none := caller{header: []string{"Authorization", ""}}
	tests := []struct {
		name          string
		scope         func(*http.Request) string
		first, second caller
		want          string // the second's answer: "replay", "own run", or a problem code
	}{
		{"one bearer token", nil, bearer("Bearer a"), bearer("Bearer a"), "replay"},
		{"two bearer tokens", nil, bearer("Bearer a"), bearer("Bearer b"), "own run"},
		{"two API keys", nil, caller{header: []string{"Authorization", "", "X-Api-Key", "sk-a"}}, caller{header: []string{"Authorization", "", "X-Api-Key", "sk-b"}}, "own run"},
		{"token and the same token as API key", nil, bearer("sk-a"), caller{header: []string{"Authorization", "", "X-Api-Key", "sk-a"}}, "own run"},
		{"one client key, certificate renewed", nil, caller{header: none.header, cert: certA}, caller{header: none.header, cert: certA2}, "replay"},
		{"two client keys", nil, caller{header: none.header, cert: certA}, caller{header: none.header, cert: certB}, "own run"},
		{"no credentials", nil, bearer("Bearer a"), none, "idempotency_scope_missing"},
		{"ScopeHeader, header absent", idempotency.ScopeHeader("X-Account"), caller{header: []string{"X-Account", "acct_1"}}, bearer("Bearer a"), "idempotency_scope_missing"},
		{"ScopeHeader, two accounts", idempotency.ScopeHeader("X-Account"), caller{header: []string{"X-Account", "acct_1"}}, caller{header: []string{"X-Account", "acct_2"}}, "own run"},
		{"InsecureSharedScope", idempotency.InsecureSharedScope, bearer("Bearer a"), none, "replay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &counted{}
			m := mustMiddleware(t, h, idempotency.Config{Scope: tt.scope})
			send := func(c caller) *httptest.ResponseRecorder {
				req := httptest.NewRequest("POST", "/v1/charges", strings.NewReader("x"))
				req.Header.Set("Idempotency-Key", "k")
				for i := 0; i+1 < len(c.header); i += 2 {
					if c.header[i+1] != "" {
						req.Header.Set(c.header[i], c.header[i+1])
					}
				}
				if c.cert != nil {
					req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c.cert}}
				}
				w := httptest.NewRecorder()
				m.ServeHTTP(w, req)
				return w
			}
			if w := send(tt.first); w.Code != 201 || w.Body.String() != "charge 1" {
				t.Fatalf("first = %d %s", w.Code, w.Body)
			}
			w := send(tt.second)
			var p problemBody
			_ = json.Unmarshal(w.Body.Bytes(), &p)
			got := p.Code
			switch {
			case w.Code == 201 && w.Body.String() == "charge 1":
				got = "replay"
			case w.Code == 201 && w.Body.String() == "charge 2":
				got = "own run"
			}
			if got != tt.want {
				t.Fatalf("second = %d %s (%s); want %s", w.Code, w.Body, got, tt.want)
			}
		})
	}
}

// TestMiddlewareInProgress: while the first request holds the key, a
// duplicate gets 409 with Retry-After, then the replay.
func TestMiddlewareInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			fmt.Fprint(w, "done")
		})
		m := mustMiddleware(t, h, idempotency.Config{RetryAfter: 3 * time.Second})
		done := make(chan *httptest.ResponseRecorder)
		go func() { done <- do(m, "POST", "/", "x", "Idempotency-Key", "k") }()
		synctest.Wait()
		w := do(m, "POST", "/", "x", "Idempotency-Key", "k")
		if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "3" || !strings.Contains(w.Body.String(), "idempotency_key_in_use") {
			t.Fatalf("duplicate while running = %d %v %s; want 409 with Retry-After 3", w.Code, w.Header(), w.Body)
		}
		close(release)
		if first := <-done; first.Body.String() != "done" {
			t.Fatalf("first = %q", first.Body)
		}
		if w := do(m, "POST", "/", "x", "Idempotency-Key", "k"); w.Code != 200 || w.Body.String() != "done" {
			t.Fatalf("after = %d %q, want the replay", w.Code, w.Body)
		}
	})
}

// TestMiddlewareCrash: a handler that dies after its side effect leaves
// the key locked for the lease; 409 until then (Retry-After no longer than
// what is left of it), and the handler runs again after.
func TestMiddlewareCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if runs.Add(1) == 1 {
				panic("dies after its side effect")
			}
			fmt.Fprint(w, "second run")
		})
		m := mustMiddleware(t, h, idempotency.Config{Lease: 10 * time.Second, RetryAfter: 5 * time.Second})
		func() {
			defer func() { _ = recover() }()
			do(m, "POST", "/", "x", "Idempotency-Key", "k")
		}()
		for _, tt := range []struct {
			after      time.Duration
			status     int
			retryAfter string
		}{{0, 409, "5"}, {8 * time.Second, 409, "2"}, {2 * time.Second, 200, ""}} {
			time.Sleep(tt.after)
			w := do(m, "POST", "/", "x", "Idempotency-Key", "k")
			if w.Code != tt.status || w.Header().Get("Retry-After") != tt.retryAfter {
				t.Fatalf("at +%v: %d, Retry-After %q; want %d, %q", tt.after, w.Code, w.Header().Get("Retry-After"), tt.status, tt.retryAfter)
			}
		}
		if runs.Load() != 2 {
			t.Fatalf("runs = %d, want 2: at least once after a crash", runs.Load())
		}
	})
}

// TestMiddlewareLeaseEndsHandler: the handler's context ends with the
// lease, and a request whose lease was taken over stores nothing.
func TestMiddlewareLeaseEndsHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := runs.Add(1)
			if n == 1 {
				<-r.Context().Done()
				time.Sleep(time.Second) // overruns its lease and ignores it
				fmt.Fprint(w, "late")
				return
			}
			fmt.Fprint(w, "second")
		})
		m := mustMiddleware(t, h, idempotency.Config{Lease: time.Second})
		first := make(chan *httptest.ResponseRecorder)
		go func() { first <- do(m, "POST", "/", "x", "Idempotency-Key", "k") }()
		time.Sleep(1500 * time.Millisecond) // the first's lease is over
		if w := do(m, "POST", "/", "x", "Idempotency-Key", "k"); w.Body.String() != "second" {
			t.Fatalf("takeover = %q", w.Body)
		}
		w := <-first
		var p problemBody
		_ = json.Unmarshal(w.Body.Bytes(), &p)
		if w.Code != 500 || p.Code != "idempotency_lease_lost" {
			t.Fatalf("the overrun request = %d %s, want 500 idempotency_lease_lost", w.Code, w.Body)
		}
		if w := do(m, "POST", "/", "x", "Idempotency-Key", "k"); w.Body.String() != "second" {
			t.Fatalf("replay = %q, want the takeover's", w.Body)
		}
	})
}

// failing is a store whose calls fail, for the middleware's answers when
// the store is down.
type failing struct {
	idempotency.Store
	begin, complete bool
}

var errDown = errors.New("store down")

func (f *failing) Begin(ctx context.Context, scope, key, fp string, lease time.Duration) (idempotency.Begun, error) {
	if f.begin {
		return idempotency.Begun{}, errDown
	}
	return f.Store.Begin(ctx, scope, key, fp, lease)
}

func (f *failing) Complete(ctx context.Context, scope, key, token string, r *idempotency.Response) error {
	if f.complete {
		return errDown
	}
	return f.Store.Complete(ctx, scope, key, token, r)
}

func TestMiddlewareStoreDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
		st := &failing{Store: mem, begin: true}
		h := &counted{}
		m := mustMiddleware(t, h, idempotency.Config{Store: st, Lease: time.Minute, StoreTimeout: 2 * time.Second})
		w := do(m, "POST", "/", "x", "Idempotency-Key", "k")
		if w.Code != 503 || w.Header().Get("Retry-After") != "1" || h.n.Load() != 0 {
			t.Fatalf("store down at begin = %d %v, %d runs; want 503 with Retry-After and no run", w.Code, w.Header(), h.n.Load())
		}
		st.begin, st.complete = false, true
		start := time.Now()
		w = do(m, "POST", "/", "x", "Idempotency-Key", "k")
		var p problemBody
		_ = json.Unmarshal(w.Body.Bytes(), &p)
		if w.Code != 500 || p.Code != "idempotency_outcome_not_stored" || h.n.Load() != 1 || time.Since(start) != 2*time.Second {
			t.Fatalf("store down at complete = %d %s after %v; want 500 idempotency_outcome_not_stored after trying for StoreTimeout (2s)", w.Code, w.Body, time.Since(start))
		}
		st.complete = false
		if w := do(m, "POST", "/", "x", "Idempotency-Key", "k"); w.Code != 409 || h.n.Load() != 1 {
			t.Fatalf("retry = %d after %d runs; want 409: the key stays locked, the effect is not repeated within the lease", w.Code, h.n.Load())
		}
	})
}

func TestMiddlewareLargeResponse(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "0123456789") })
	m := mustMiddleware(t, h, idempotency.Config{MaxResponse: 5})
	if w := do(m, "POST", "/", "x", "Idempotency-Key", "k"); w.Code != 200 || w.Body.String() != "0123456789" {
		t.Fatalf("first = %d %q, want the whole response", w.Code, w.Body)
	}
	w := do(m, "POST", "/", "x", "Idempotency-Key", "k")
	if w.Code != 500 || !strings.Contains(w.Body.String(), "idempotency_response_too_large") {
		t.Fatalf("replay of a response too large to store = %d %s", w.Code, w.Body)
	}
}

func TestNewMiddlewareRejects(t *testing.T) {
	tests := []struct {
		field string
		cfg   idempotency.Config
	}{
		{"Lease", idempotency.Config{Lease: -1}}, {"RetryAfter", idempotency.Config{RetryAfter: -1}},
		{"MaxBody", idempotency.Config{MaxBody: -1}}, {"MaxKeyLen", idempotency.Config{MaxKeyLen: -1}},
		{"MaxResponse", idempotency.Config{MaxResponse: -1}}, {"StoreTimeout", idempotency.Config{StoreTimeout: -1}},
	}
	for _, tt := range tests {
		_, err := idempotency.NewMiddleware(http.NotFoundHandler(), tt.cfg)
		if err == nil || !strings.Contains(err.Error(), "Config."+tt.field+" ") {
			t.Errorf("NewMiddleware(%+v) = %v, want an error naming Config.%s", tt.cfg, err, tt.field)
		}
	}
}

// TestTransportHonoursInProgress runs recoil's Transport against the
// middleware over a real HTTP connection: the Transport's generated key is
// sent bare, the duplicate's 409 is retried after its Retry-After, and the
// logical request ends with the replay of the one run. It runs in a
// synctest bubble over an in-memory connection, so the handler's 500 ms of
// work, the attempt's 200 ms cut-off and the 1 s Retry-After keep their
// order however late a busy machine runs the goroutines.
func TestTransportHonoursInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &counted{}
		gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tm := time.NewTimer(500 * time.Millisecond) // the handler's work
			<-tm.C
			h.ServeHTTP(w, r)
		})
		pl := testsvc.NewPipeListener()
		srv := &http.Server{Handler: mustMiddleware(t, gate, idempotency.Config{Required: true})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(pl) }()
		base := &http.Transport{DialContext: pl.DialContext}
		defer func() {
			base.CloseIdleConnections()
			if err := srv.Close(); err != nil {
				t.Errorf("closing the server: %v", err)
			}
			if err := <-served; err != http.ErrServerClosed {
				t.Errorf("Serve: %v", err)
			}
		}()
		var attempts atomic.Int64
		// The first attempt is cut off by its own timeout while the handler
		// runs; the Transport retries under the same key into a 409, waits
		// its Retry-After, and finds the replay.
		tr := &recoilhttp.Transport{Base: base, IdempotencyKey: true,
			Policy: &recoil.Policy{MaxAttempts: 5, Budget: recoil.NoBudget, AttemptTimeout: 200 * time.Millisecond,
				OnAttempt: func(context.Context, recoil.AttemptEvent) { attempts.Add(1) }}}
		req, _ := http.NewRequest(http.MethodPost, "http://charges.test/v1/charges", strings.NewReader(`{"amount":1}`))
		req.Header.Set("Authorization", "Bearer client-a")
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(`{"amount":1}`)), nil }
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || string(body) != "charge 1" || h.n.Load() != 1 {
			t.Fatalf("= %d %q after %d runs, want 201 charge 1 after one", resp.StatusCode, body, h.n.Load())
		}
		if attempts.Load() < 3 || time.Since(start) < time.Second {
			t.Fatalf("%d attempts in %v: want a timeout, a 409 waited out for its Retry-After (1 s), then the replay", attempts.Load(), time.Since(start))
		}
	})
}
