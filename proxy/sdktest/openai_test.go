package sdktest

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestOpenAIGo counts what one chat completion costs the provider during
// a 529 storm, with openai-go's default retries (2): straight to the
// provider, through a gateway that retries too, and through recoil proxy.
func TestOpenAIGo(t *testing.T) {
	for _, tc := range []struct {
		name string
		via  func(t *testing.T, up string) (string, *recorder)
		want int64
		sdk  int // the SDK's attempts at the proxy
	}{
		{"direct", func(t *testing.T, up string) (string, *recorder) { return up, nil }, 3, 0},
		{"retrying gateway", func(t *testing.T, up string) (string, *recorder) { return retryingGateway(t, up).URL, nil }, 3 * gatewayAttempts, 0},
		{"recoil proxy", startProxy, 3, 1},
		{"recoil proxy, x-should-retry lost on the way back", startProxyStripped, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newOverloaded(t)
			base, rec := tc.via(t, up.URL)
			client := openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("sk-client"))
			_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
				Model:    "gpt-4o-mini",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 {
				t.Fatalf("err = %v, want the provider's 529", err)
			}
			if got := up.hits.Load(); got != tc.want {
				t.Errorf("attempts at the provider = %d, want %d", got, tc.want)
			}
			if rec != nil {
				if rec.n != tc.sdk {
					t.Errorf("SDK attempts at the proxy = %d, want %d", rec.n, tc.sdk)
				}
				t.Logf("openai-go %s: provider attempts %d, SDK attempts %d, answer: %s", tc.name, up.hits.Load(), rec.n, headerLine(rec.last))
			} else {
				t.Logf("openai-go %s: provider attempts %d", tc.name, up.hits.Load())
			}
		})
	}
}
