package idempotency_test

import (
	"context"
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
