package sdktest

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/recoil-go/recoil/proxy"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// stormFailure is the share of the provider's answers that are 529 in the
// storm, as in tools/scenarios/sdk-behind-gateway.yaml.
const stormFailure = 0.8

// flaky is a provider answering a seeded stormFailure of its calls 529.
func flaky(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(1, 2))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		fail := rnd.Float64() < stormFailure
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if fail {
			w.WriteHeader(529)
			_, _ = io.WriteString(w, `{"error":{"message":"Overloaded","type":"server_error","code":null}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// TestStormLoad is the loopback measurement beside the simulator's
// sdk-behind-gateway scenario: 300 calls by openai-go clients with their
// default retries, against a provider failing 80 % of its calls, through a
// gateway that retries 3 times and through recoil proxy (one budget of 2
// retries for the chain, no retry budget, as in the scenario). It reports
// the attempts at the provider per call and the share of calls answered.
func TestStormLoad(t *testing.T) {
	if os.Getenv("RECOIL_LONG") != "1" {
		t.Skip("the storm under load waits on the SDK's own backoff: set RECOIL_LONG=1 to run it")
	}
	const calls, workers = 300, 60
	noBudget := fastPolicy()
	noBudget.Budget = &policyspec.Budget{Kind: policyspec.BudgetNone}
	for _, tc := range []struct {
		name      string
		via       func(t *testing.T, up string) string
		predicted float64 // attempts per call, from recoil sim sdk-behind-gateway
	}{
		{"SDK 3 × gateway 3", func(t *testing.T, up string) string { return retryingGateway(t, up).URL }, 4.20},
		{"recoil proxy, one layer", func(t *testing.T, up string) string {
			p, err := proxy.New(proxy.Config{
				Getenv: func(string) string { return "sk" },
				Routes: []proxy.Route{{Model: proxy.Wildcard, Policy: noBudget,
					Targets: []proxy.Target{{BaseURL: up + "/v1", APIKeyEnv: "KEY"}}}},
			}, proxy.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := httptest.NewServer(p)
			t.Cleanup(func() { s.Close(); _ = p.Close() })
			return s.URL
		}, 2.41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, hits := flaky(t)
			client := openai.NewClient(option.WithBaseURL(tc.via(t, up.URL)+"/v1"), option.WithAPIKey("sk-client"))
			var ok atomic.Int64
			var wg sync.WaitGroup
			next := make(chan int)
			for range workers {
				wg.Go(func() {
					for range next {
						_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
							Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
						})
						if err == nil {
							ok.Add(1)
						}
					}
				})
			}
			for i := range calls {
				next <- i
			}
			close(next)
			wg.Wait()
			per := float64(hits.Load()) / calls
			off := per/tc.predicted - 1
			t.Logf("%s: %d calls, %d attempts at the provider (%.2f a call; predicted %.2f, %+.1f %%), %.0f %% answered",
				tc.name, calls, hits.Load(), per, tc.predicted, 100*off, 100*float64(ok.Load())/calls)
			if off > 0.15 || off < -0.15 {
				t.Errorf("measured %.2f attempts a call, predicted %.2f: more than 15 %% apart", per, tc.predicted)
			}
		})
	}
}
