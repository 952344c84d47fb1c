package recoilhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
)

// A Transport under an http.Client: a 503 is retried, a validator's 400 is
// not, and either way the caller gets the response.
func ExampleTransport() {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: &recoilhttp.Transport{
		Base:   base,
		Policy: &recoil.Policy{Backoff: backoff.Constant(time.Millisecond)},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body), "after", calls, "attempts")
	// Output: 200 hello after 2 attempts
}

// Classify reads the provider's error body and restores it for the caller.
func ExampleClassify() {
	req, _ := http.NewRequest("POST", "https://api.example.com/v1/messages", nil)
	for _, r := range []struct {
		status int
		body   string
	}{
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.input_schema: unknown field \"strict\""}}`},
		{400, `<html><body>Request Header Or Cookie Too Large</body></html>`},
		{429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	} {
		resp := &http.Response{StatusCode: r.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(r.body))}
		v := recoilhttp.Classify(req, resp, nil, time.Now())
		fmt.Printf("%d: %v [%s]\n", r.status, v.Class, v.Code)
	}
	// Output:
	// 400: permanent [invalid_request_error]
	// 400: permanent [non_json_400]
	// 429: permanent [insufficient_quota]
	// 529: overloaded [overloaded_error]
}

// The Middleware puts the caller's retry budget into the handler's context;
// a Transport inside the handler spends from it and reports what it spent.
func ExampleNewMiddleware() {
	leaf := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer leaf.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	inner := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}}
	h := recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", leaf.URL, nil)
		resp, err := inner.RoundTrip(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	}), recoilhttp.MiddlewareConfig{})

	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Recoil-Retry-Budget", "1") // the edge allows one retry for the whole tree
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, "retries spent below:", w.Header().Get("Recoil-Retries-Spent"))
	// Output: 502 retries spent below: 1
}
