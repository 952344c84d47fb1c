package recoilhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing/iotest"
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

// quick is a policy that retries without waiting, to keep the examples fast.
func quick() *recoil.Policy {
	return &recoil.Policy{Backoff: backoff.None{}, OverloadBackoff: backoff.None{}, Budget: recoil.NoBudget}
}

// A POST is not retried unless the caller vouches that running it twice is
// harmless: here the handler only reads, so the caller opts in.
func ExampleAllowRetry() {
	var calls atomic.Int32 // the handler runs on the server's goroutines
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	t := &recoilhttp.Transport{Base: base, Policy: quick()}

	for _, ctx := range []context.Context{context.Background(), recoilhttp.AllowRetry(context.Background())} {
		calls.Store(0)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/search", strings.NewReader(`{"q":"retry budgets"}`))
		resp, err := t.RoundTrip(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "after", calls.Load(), "attempt(s)")
	}
	// Output:
	// 503 after 1 attempt(s)
	// 200 after 2 attempt(s)
}

// A stream that fails before its first content event is as good as a
// failed status: FirstEvent finds the error past the pings, and the body it
// returns still yields every byte.
func ExampleFirstEvent() {
	stream := "event: ping\ndata: {}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	ev, body, err := recoilhttp.FirstEvent(io.NopCloser(strings.NewReader(stream)), 64<<10)
	defer body.Close()
	fmt.Println(ev.Name, err)
	pe, _, _ := recoilhttp.ParseErrorBody([]byte(ev.Data))
	fmt.Println(pe.Type)
	all, _ := io.ReadAll(body)
	fmt.Println(len(all) == len(stream))
	// Output:
	// error <nil>
	// overloaded_error
	// true
}

// A body that fails after some of it arrived says so: the *StreamError
// tells the caller it holds part of an answer, which a retry would not
// complete. (The idle limit, 15 s here, is not reached.)
func ExampleIdleBody() {
	partial := io.MultiReader(strings.NewReader(`{"rows":[1,2,`), iotest.ErrReader(io.ErrUnexpectedEOF))
	body := recoilhttp.IdleBody(io.NopCloser(partial), 15*time.Second)
	defer body.Close()
	_, err := io.ReadAll(body)
	var se *recoilhttp.StreamError
	if errors.As(err, &se) {
		fmt.Println("failed after", se.Delivered, "bytes:", se.Err)
	}
	// Output: failed after 13 bytes: unexpected EOF
}

// Pings are not content: a stream that fails after nothing but pings gave
// the caller nothing, and its error comes back unwrapped; once a content
// event got through, it is a *StreamError.
func ExampleSSEIdleBody() {
	for _, events := range []string{
		"event: ping\ndata: {}\n\n: keep-alive\n\n",
		"event: content_block_delta\ndata: {\"text\":\"Hel\"}\n\n",
	} {
		stream := io.MultiReader(strings.NewReader(events), iotest.ErrReader(io.ErrUnexpectedEOF))
		body := recoilhttp.SSEIdleBody(io.NopCloser(stream), 15*time.Second)
		_, err := io.ReadAll(body)
		body.Close()
		var se *recoilhttp.StreamError
		fmt.Println(errors.As(err, &se), err == io.ErrUnexpectedEOF)
	}
	// Output:
	// false true
	// true false
}

// The preset for a model API, under a provider's SDK with the SDK's own
// retries off. Each logical request gets one Idempotency-Key, the same on
// every attempt, so a provider that honours keys runs a retried generation
// once. (The policy here waits nothing, to keep the example fast.)
func ExampleModelAPI() {
	keys := make(chan string, 2) // the key of each attempt, from the server's goroutines
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		if len(keys) == 1 {
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		io.WriteString(w, `{"type":"message"}`)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	t := recoilhttp.ModelAPI(base)
	t.Policy = quick()
	client := &http.Client{Transport: t}
	resp, err := client.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"max_tokens":64}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	first, second := <-keys, <-keys
	fmt.Println(resp.StatusCode, first != "" && first == second, t.IdleTimeout)
	// Output: 200 true 15s
}

// Error bodies differ by provider and by what stood in between: OpenAI's
// quota error, and a proxy's HTML page, which is not JSON at all.
func ExampleParseErrorBody() {
	for _, body := range []string{
		`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
		`<html><body><h1>502 Bad Gateway</h1></body></html>`,
	} {
		pe, isJSON, ok := recoilhttp.ParseErrorBody([]byte(body))
		fmt.Printf("json=%t found=%t type=%q quota=%t\n", isJSON, ok, pe.Type, pe.QuotaExhausted())
	}
	// Output:
	// json=true found=true type="insufficient_quota" quota=true
	// json=false found=false type="" quota=false
}

// Log the start of an error body without taking it from the code that
// reads it next.
func ExamplePeekBody() {
	resp := &http.Response{StatusCode: 400, Body: io.NopCloser(strings.NewReader(
		`{"type":"error","error":{"type":"invalid_request_error","message":"messages: at least one message is required"}}`))}
	head, err := recoilhttp.PeekBody(resp, 40)
	fmt.Printf("%s… %v\n", head, err)
	all, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(len(all))
	// Output:
	// {"type":"error","error":{"type":"invalid… <nil>
	// 112
}

// A rate limit that asks for two minutes, against a policy that waits at
// most one: the Transport returns the 429 at once, and says what it
// refused, so the caller can requeue the work for then.
func ExampleRefusedWait() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	t := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{MaxServerWait: time.Minute}}

	resp, err := (&http.Client{Transport: t}).Get(srv.URL + "/v1/exports")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	wait, ok := recoilhttp.RefusedWait(resp)
	fmt.Println(resp.StatusCode, wait, ok)
	// Output:
	// 429 2m0s true
}

// Providers say "wait" in several headers; ServerWait reads them in a
// fixed order of preference.
func ExampleServerWait() {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, h := range []http.Header{
		{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}},                            // the finer one wins
		{"Retry-After": {"Tue, 01 Dec 2026 12:00:30 GMT"}},                            // an HTTP-date, from now
		{"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"6m0s"}}, // the exhausted limit's reset
		{"Retry-After": {"soon"}},                                                     // malformed: absent
	} {
		fmt.Println(recoilhttp.ServerWait(h, now))
	}
	// Output:
	// 1.5s true
	// 30s true
	// 6m0s true
	// 0s false
}

// One log line per logical request, with the provider's own message; the
// handler here drops the time and the host, which change on every run.
func ExampleSlogObserver() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "host" || a.Key == "elapsed" {
				return slog.Attr{}
			}
			return a
		},
	}))
	t := &recoilhttp.Transport{Base: base, Observe: recoilhttp.SlogObserver(logger)}
	resp, err := (&http.Client{Transport: t}).Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"max_tokens":0}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	// Output:
	// level=WARN msg="call gave up" attempts=1 waited=0s reason="permanent error" class=permanent why="400 invalid_request_error: max_tokens: must be positive" code=invalid_request_error error="400 Bad Request invalid_request_error: max_tokens: must be positive" method=POST status=400 provider="max_tokens: must be positive"
}

// A Transport that falls back from a retired model at one provider to a
// self-hosted server: the calling code posts to the primary as always.
// The self-hosted server gets the model it serves and none of the
// primary's credentials.
func ExampleNewTarget() {
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"model_not_found","message":"The model old-model does not exist"}}`)
	}))
	defer primary.Close()
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("local got %s %s, Authorization %q\n", r.URL.Path, body, r.Header.Get("Authorization"))
		io.WriteString(w, `{"choices":[]}`)
	}))
	defer local.Close()

	first, _ := recoilhttp.NewTarget("primary", primary.URL+"/v1", nil, "")
	second, err := recoilhttp.NewTarget("local", local.URL+"/openai/v1", nil, "llama-3")
	if err != nil {
		fmt.Println(err)
		return
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{
		Fallback: &recoil.Fallback{Targets: []recoil.Target{first, second}},
	}}}
	req, _ := http.NewRequest(http.MethodPost, primary.URL+"/v1/chat/completions", strings.NewReader(`{"model":"old-model","messages":[]}`))
	req.Header.Set("Authorization", "Bearer sk-primary")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// local got /openai/v1/chat/completions {"model":"llama-3","messages":[]}, Authorization ""
	// 200
}

// An Endpoint is the Value of a recoil.Target: here, an Azure OpenAI
// deployment whose api-version rides in the base URL's query and whose key
// goes in its own header. Credentials in the URL itself are refused.
func ExampleNewEndpoint() {
	ep, err := recoilhttp.NewEndpoint("https://example.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21",
		http.Header{"Api-Key": {"azure-key"}}, "")
	fmt.Println(ep.BaseURL(), err)
	_, err = recoilhttp.NewEndpoint("https://user:secret@example.com/v1", nil, "")
	fmt.Println(err)
	// Output:
	// https://example.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21 <nil>
	// recoilhttp: endpoint base URL "https://user:xxxxx@example.com/v1": put credentials in the header, not the URL, where they would reach logs
}
