package recoilhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/recoilhttp"
)

func ExampleParseUsage() {
	u, err := recoilhttp.ParseUsage([]byte(`{"id":"msg_1","usage":{"input_tokens":2095,"output_tokens":503}}`))
	fmt.Println(u.Total, err)
	// Output: 2598 <nil>
}

func ExampleEstimateTokens() {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Hello"}]}`)
	fmt.Println(recoilhttp.EstimateTokens(body)) // 94 bytes: 24 tokens of prompt, and the 1024 the answer may take
	// Output: 1048
}

// A Transport under a budget that charges by cost (a budget.Rate of the
// provider's tokens per minute, or a fleet.Guard over a Tokens allowance)
// charges each attempt the request's estimated tokens and settles the
// charge by the usage the response reports once the caller has read it.
func ExampleTransport_tokens() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}}`)
	}))
	defer srv.Close()
	tokens := budget.Must(budget.NewRate(budget.RateConfig{Limit: 30_000, Window: 1000 * time.Hour}))
	client := &http.Client{Transport: &recoilhttp.Transport{Policy: &recoil.Policy{Budget: tokens}}}

	body := `{"model":"gpt-4.1","max_tokens":500,"messages":[{"role":"user","content":"Hi"}]}`
	req, _ := http.NewRequestWithContext(context.Background(), "POST", srv.URL, strings.NewReader(body))
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("charged before reading:", 30_000-tokens.State().Available)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Println("charged after reading:", 30_000-tokens.State().Available)
	// Output:
	// charged before reading: 520
	// charged after reading: 42
}
