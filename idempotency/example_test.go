package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/recoil-go/recoil/idempotency"
)

// A charge endpoint behind the middleware: the retry under the same key
// gets the first response, and the card is charged once.
func ExampleNewMiddleware() {
	charged := 0
	charges := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		charged++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"ch_%d"}`, charged)
	})
	h, err := idempotency.NewMiddleware(charges, idempotency.Config{Required: true})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, key := range []string{`"order-42"`, `"order-42"`, ""} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/charges", strings.NewReader(`{"amount":100}`))
		req.Header.Set("Authorization", "Bearer sk-client-1") // keys are scoped by the caller's credentials
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), strings.Contains(string(body), "ch_1"))
	}
	fmt.Println("charged", charged)
	// Output:
	// 201 application/json true
	// 201 application/json true
	// 400 application/problem+json false
	// charged 1
}

// A tool call in an agent's loop, retried: the second run returns the
// first's result.
func ExampleDo() {
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
	sendEmail := func(ctx context.Context) (string, error) {
		fmt.Println("sending")
		return "msg-1", nil
	}
	for range 2 {
		id, err := idempotency.Do(context.Background(), store, "turn-7/send-email", sendEmail)
		fmt.Println(id, err)
	}
	// Output:
	// sending
	// msg-1 <nil>
	// msg-1 <nil>
}

func ExampleParseKey() {
	for _, v := range []string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, "recoil-0af3", `"unterminated`} {
		key, err := idempotency.ParseKey([]string{v}, 0)
		fmt.Printf("%q %v\n", key, err)
	}
	// Output:
	// "8e03978e-40d5-43e8-bc93-6894a57f9324" <nil>
	// "recoil-0af3" <nil>
	// "" idempotency: malformed key "\"unterminated": no closing quote
}

// A memory store with a reaper that runs until the context ends.
func ExampleRunReaper() {
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{MaxEntries: 10_000, Retention: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := idempotency.RunReaper(ctx, 10*time.Millisecond, store, func(err error) { fmt.Println("reap:", err) })
	fmt.Println(err, store.Len())
	// Output:
	// context deadline exceeded 0
}

// A memory store bounded to two keys: a finished key makes room for a new
// one, a running key does not.
func ExampleNewMemory() {
	store, err := idempotency.NewMemory(idempotency.MemoryConfig{MaxEntries: 2, Retention: time.Hour})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	done, _ := store.Begin(ctx, "", "order-1", "fp", time.Minute)
	_ = store.Complete(ctx, "", "order-1", done.Token, &idempotency.Response{Status: http.StatusCreated})
	_, _ = store.Begin(ctx, "", "order-2", "fp", time.Minute) // still running
	for _, key := range []string{"order-3", "order-4"} {
		b, err := store.Begin(ctx, "", key, "fp", time.Minute)
		if err != nil {
			fmt.Println(key, err)
			continue
		}
		fmt.Println(key, b.State) // order-1, finished, was evicted for it
	}
	// Output:
	// order-3 new
	// order-4 idempotency: memory store full of running requests
}

// DefaultKeep stores every outcome but those that say "nothing was done,
// try again". A Keep of your own can start from it: here a 409 from a
// handler that lost an optimistic-locking race releases the key too.
func ExampleDefaultKeep() {
	var kept []string
	for _, status := range []int{201, 400, 408, 409, 429, 500, 503} {
		kept = append(kept, fmt.Sprint(status, ":", idempotency.DefaultKeep(status)))
	}
	fmt.Println(strings.Join(kept, " "))

	cfg := idempotency.Config{Keep: func(status int) bool {
		return status != http.StatusConflict && idempotency.DefaultKeep(status)
	}}
	fmt.Println(cfg.Keep(409))
	// Output:
	// 201:true 400:true 408:false 409:true 429:false 500:false 503:false
	// false
}

// A client that reuses a key for a different request is caught by the
// fingerprint: path, query and body all count.
func ExampleFingerprint() {
	first := idempotency.Fingerprint("POST", "/v1/charges", []byte(`{"amount":100}`))
	retry := idempotency.Fingerprint("POST", "/v1/charges", []byte(`{"amount":100}`))
	reused := idempotency.Fingerprint("POST", "/v1/charges", []byte(`{"amount":1000}`))
	fmt.Println(first == retry, first == reused)
	// Output: true false
}

// A Store of your own hands out a fresh token with each lease, so a holder
// that lost its lease cannot complete the key.
func ExampleNewToken() {
	a, b := idempotency.NewToken(), idempotency.NewToken()
	fmt.Println(len(a), a != b)
	// Output: 32 true
}

// Two accounts that both pick the key "order-1" get two keys, not each
// other's response.
func ExampleScopeHeader() {
	orders := 0
	h, err := idempotency.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orders++
		fmt.Fprintf(w, "order %d for %s", orders, r.Header.Get("X-Account-Id"))
	}), idempotency.Config{Scope: idempotency.ScopeHeader("X-Account-Id")})
	if err != nil {
		panic(err)
	}
	for _, account := range []string{"acct_a", "acct_b", "acct_a"} {
		r := httptest.NewRequest(http.MethodPost, "/v1/orders", strings.NewReader(`{}`))
		r.Header.Set("X-Account-Id", account)
		r.Header.Set("Idempotency-Key", `"order-1"`)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(rec.Body.String())
	}
	// Output:
	// order 1 for acct_a
	// order 2 for acct_b
	// order 1 for acct_a
}

// A queue consumer is a front end of its own: it begins the key, does the
// work, and stores the outcome with Complete, which rides out a store that
// blinks. The broker's redelivery then finds the outcome, not the work.
func ExampleComplete() {
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
	ctx := context.Background()
	deliver := func(msgID string, body []byte) {
		fp := idempotency.Fingerprint("QUEUE", "/payouts", body)
		b, err := store.Begin(ctx, "", msgID, fp, time.Minute)
		if err != nil {
			panic(err)
		}
		if b.State == idempotency.StateDone {
			fmt.Println("redelivered; already", string(b.Response.Body))
			return
		}
		fmt.Println("paying out")
		claim := idempotency.Claim{Key: msgID, Token: b.Token}
		err = idempotency.Complete(ctx, store, claim, &idempotency.Response{Status: 200, Body: []byte("paid")}, time.Now().Add(2*time.Second))
		fmt.Println("stored:", err)
	}
	deliver("msg-5511", []byte(`{"amount":250}`))
	deliver("msg-5511", []byte(`{"amount":250}`))
	// Output:
	// paying out
	// stored: <nil>
	// redelivered; already paid
}

// The work under a key can pass the key on: here a step forwards it to a
// payment provider, so the provider deduplicates a repeat too.
func ExampleClaimFrom() {
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
	charge := func(ctx context.Context) (string, error) {
		c, ok := idempotency.ClaimFrom(ctx)
		if !ok {
			return "", fmt.Errorf("charge outside an idempotent call")
		}
		return "Idempotency-Key: " + c.Key + "/charge", nil // the provider's header
	}
	header, err := idempotency.Do(context.Background(), store, "checkout-88", charge)
	fmt.Println(header, err)
	_, err = charge(context.Background())
	fmt.Println(err)
	// Output:
	// Idempotency-Key: checkout-88/charge <nil>
	// charge outside an idempotent call
}

// A front end other than the middleware and Do (a job runner, say) puts
// the key it holds in the work's context, where code that records recovery
// points looks for it.
func ExampleWithClaim() {
	ctx := idempotency.WithClaim(context.Background(), idempotency.Claim{Scope: "tenant-4", Key: "nightly-invoice-2026-12-01"})
	c, _ := idempotency.ClaimFrom(ctx)
	fmt.Println(c.Scope, c.Key)
	// Output: tenant-4 nightly-invoice-2026-12-01
}

// The default scope is the caller's credentials: two API keys that pick
// the same Idempotency-Key get two runs, and a key on a request with no
// credentials is refused rather than shared.
func ExampleScopeByCredentials() {
	runs := 0
	h, err := idempotency.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		fmt.Fprintf(w, "run %d", runs)
	}), idempotency.Config{}) // Scope: nil means idempotency.ScopeByCredentials
	if err != nil {
		panic(err)
	}
	for _, auth := range []string{"Bearer sk-alice", "Bearer sk-bob", "Bearer sk-alice", ""} {
		r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(`{}`))
		r.Header.Set("Idempotency-Key", `"charge-1"`)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(rec.Code, strings.SplitN(rec.Body.String(), ",", 2)[0])
	}
	// Output:
	// 200 run 1
	// 200 run 2
	// 200 run 1
	// 400 {"type":"https://github.com/recoil-go/recoil/blob/main/docs/idempotency.md#errors"
}

// An internal service whose only clients are your own, each sending a
// random key, may share one scope — and says so in its configuration.
func ExampleInsecureSharedScope() {
	runs := 0
	h, err := idempotency.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		fmt.Fprintf(w, "run %d", runs)
	}), idempotency.Config{Scope: idempotency.InsecureSharedScope})
	if err != nil {
		panic(err)
	}
	for range 2 {
		r := httptest.NewRequest(http.MethodPost, "/internal/jobs", strings.NewReader(`{}`))
		r.Header.Set("Idempotency-Key", `"6f1c9e0a-5b7d-4e2a-9f3c-1d2e3f4a5b6c"`)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(rec.Body.String())
	}
	// Output:
	// run 1
	// run 1
}

// A gRPC front end, or any other, scopes a caller the way the HTTP
// Middleware does, and hands the store only the hash.
func ExampleCredentialScope() {
	alice := idempotency.CredentialScope(nil, []string{"Bearer sk-alice"}, nil)
	bob := idempotency.CredentialScope(nil, []string{"Bearer sk-bob"}, nil)
	none := idempotency.CredentialScope(nil, nil, nil)
	fmt.Println(alice != bob, none == "")
	fmt.Println(len(idempotency.HashScope(alice)), strings.Contains(idempotency.HashScope(alice), "alice"))
	// Output:
	// true true
	// 64 false
}

// One scope is always one hash, and two scopes two hashes.
func ExampleHashScope() {
	a, again, b := idempotency.HashScope("acct_1"), idempotency.HashScope("acct_1"), idempotency.HashScope("acct_2")
	fmt.Println(a == again, a == b, len(a))
	// Output: true false 64
}

// A store keeps a header exactly: a Latin-1 filename survives, as JSON
// would not let it.
func ExampleMarshalHeader() {
	h := http.Header{"Content-Disposition": {"attachment; filename=\"caf\xe9.txt\""}, "Set-Cookie": {"b=2", "a=1"}}
	back, err := idempotency.UnmarshalHeader(idempotency.MarshalHeader(h))
	fmt.Printf("%q %q %v\n", back.Get("Content-Disposition"), back.Values("Set-Cookie"), err)
	// Output: "attachment; filename=\"caf\xe9.txt\"" ["b=2" "a=1"] <nil>
}

// A header stored as JSON by an earlier version still replays.
func ExampleUnmarshalHeader() {
	h, err := idempotency.UnmarshalHeader([]byte(`{"Content-Type":["application/json"]}`))
	fmt.Println(h.Get("Content-Type"), err)
	_, err = idempotency.UnmarshalHeader([]byte{0x01, 0x05})
	fmt.Println(errors.Is(err, idempotency.ErrHeaderEncoding))
	// Output:
	// application/json <nil>
	// true
}
