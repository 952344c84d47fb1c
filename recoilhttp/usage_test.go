package recoilhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
)

// Bodies as the providers send them (abridged).
const (
	openAIChat = `{
  "id": "chatcmpl-1",
  "object": "chat.completion",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "the \"usage\": {\"total_tokens\": 1} in words"}}],
  "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}
}`
	anthropicMessage = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],` +
		`"usage":{"input_tokens":2095,"output_tokens":503,"cache_creation_input_tokens":100,"cache_read_input_tokens":4000}}`
	anthropicStream = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":25,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}` + "\n\n" +
		"event: message_stop\n" +
		`data: {"type":"message_stop"}` + "\n\n"
	openAIStream = `data: {"id":"c","choices":[{"delta":{"content":"Hi"}}],"usage":null}` + "\n\n" +
		`data: {"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}` + "\n\n" +
		"data: [DONE]\n\n"
)

func TestParseUsage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Usage
		err  bool
	}{
		{"openai chat", openAIChat, Usage{19, 10, 29}, false},
		{"anthropic message: cache writes count, reads do not", anthropicMessage, Usage{2195, 503, 2698}, false},
		{"anthropic message_start", `{"type":"message_start","message":{"usage":{"input_tokens":25,"output_tokens":1}}}`, Usage{25, 1, 26}, false},
		{"anthropic message_delta", `{"type":"message_delta","usage":{"output_tokens":15}}`, Usage{0, 15, 15}, false},
		{"openai responses completed", `{"type":"response.completed","response":{"usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12}}}`, Usage{5, 7, 12}, false},
		{"openai chunk, usage null", `{"choices":[],"usage":null}`, Usage{}, false},
		{"no usage", `{"id":"x","choices":[]}`, Usage{}, false},
		{"usage deeper than one level is not ours", `{"a":{"b":{"usage":{"total_tokens":5}}}}`, Usage{}, false},
		{"not json", `data: hello`, Usage{}, true},
		{"not an object", `[1,2]`, Usage{}, true},
		{"negative", `{"usage":{"total_tokens":-1}}`, Usage{}, true},
		{"fraction", `{"usage":{"total_tokens":1.5}}`, Usage{}, true},
		{"too large", `{"usage":{"total_tokens":9007199254740993}}`, Usage{}, true},
		{"a string", `{"usage":{"total_tokens":"12"}}`, Usage{}, true},
		{"usage not an object", `{"usage":12}`, Usage{}, true},
		{"cut short", openAIChat[:len(openAIChat)-20], Usage{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUsage([]byte(tt.in))
			if (err != nil) != tt.err || (err != nil && !errors.Is(err, ErrUsage)) {
				t.Fatalf("ParseUsage: %v, want error %v wrapping ErrUsage", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("ParseUsage = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int64
	}{
		{"max_tokens", `{"model":"m","max_tokens":1000,"messages":[]}`, 12 + 1000}, // 45 bytes
		{"max_completion_tokens", `{"max_completion_tokens":64,"model":"m"}`, 10 + 64},
		{"max_output_tokens", `{"max_output_tokens":7}`, 6 + 7},
		{"the largest cap", `{"max_tokens":10,"max_completion_tokens":20}`, 11 + 20},
		{"no cap", `{"model":"m"}`, 4},
		{"a cap below the top level is not read", `{"x":{"max_tokens":999}}`, 6},
		{"not json: size alone", strings.Repeat("a", 40), 10},
		{"malformed cap: size alone", `{"max_tokens":-5}`, 5},
		{"string cap: size alone", `{"max_tokens":"5"}`, 5},
		{"fraction cap: size alone", `{"max_tokens":5.5}`, 5},
		{"empty", ``, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens([]byte(tt.body)); got != tt.want {
				t.Errorf("EstimateTokens(%d bytes) = %d, want %d", len(tt.body), got, tt.want)
			}
		})
	}
}

// rtFunc is a RoundTripper of a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// canned answers every request with status and body, as contentType.
func canned(status int, contentType, body string) rtFunc {
	return func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

// The Transport charges a CostBudget the request's estimated tokens and
// settles the charge by the usage the response reports.
func TestTransportSettles(t *testing.T) {
	const limit = 100_000
	reqBody := `{"model":"m","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}` // 82 bytes
	est := int64((len(reqBody)+3)/4 + 1000)
	tests := []struct {
		name        string
		cost        int64 // WithCost; 0 for none
		contentType string
		body        string
		read        func(io.Reader) // how the caller reads the body; nil: whole
		spent       int64           // what the budget was charged in the end
	}{
		{"json", 0, "application/json", openAIChat, nil, 29},
		{"anthropic json", 0, "application/json", anthropicMessage, nil, 2698},
		{"stream", 0, "text/event-stream", anthropicStream, nil, 40},
		{"openai stream", 0, "text/event-stream", openAIStream, nil, 21},
		{"the caller's cost", 50, "application/json", openAIChat, nil, 29},
		{"no usage: the estimate stands", 0, "application/json", `{"ok":true}`, nil, est},
		{"malformed usage: the estimate stands", 0, "application/json", `{"usage":{"total_tokens":-3}}`, nil, est},
		{"json decoded, closed before EOF", 0, "application/json", openAIChat + "\n", func(r io.Reader) {
			var v any
			_ = json.NewDecoder(r).Decode(&v)
		}, 29},
		{"json cut short", 0, "application/json", openAIChat, func(r io.Reader) { io.CopyN(io.Discard, r, 40) }, est},
		{"stream closed early: no refund", 0, "text/event-stream", anthropicStream, func(r io.Reader) {
			io.CopyN(io.Discard, r, int64(strings.Index(anthropicStream, "message_stop")))
		}, est},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate := budget.Must(budget.NewRate(budget.RateConfig{Limit: limit, Window: 1000 * time.Hour})) // no refill to speak of
			tr := &Transport{Base: canned(200, tt.contentType, tt.body), Policy: &recoil.Policy{Budget: rate}}
			ctx := context.Background()
			want := est
			if tt.cost > 0 {
				ctx, want = recoil.WithCost(ctx, tt.cost), tt.cost
			}
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://api.example/v1/chat", strings.NewReader(reqBody))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := limit - rate.State().Available; got != want {
				t.Errorf("charged %d before the body was read, want %d", got, want)
			}
			if tt.read != nil {
				tt.read(resp.Body)
			} else {
				io.Copy(io.Discard, resp.Body)
			}
			resp.Body.Close()
			if got := limit - rate.State().Available; got != tt.spent {
				t.Errorf("charged %d after the body, want %d", got, tt.spent)
			}
		})
	}
}

// Each attempt is charged; the winner's usage settles its own charge only.
func TestTransportCostRetries(t *testing.T) {
	rate := budget.Must(budget.NewRate(budget.RateConfig{Limit: 100_000, Window: 1000 * time.Hour})) // no refill to speak of
	n := 0
	ok := canned(200, "application/json", openAIChat)
	tr := &Transport{Base: rtFunc(func(r *http.Request) (*http.Response, error) {
		if n++; n == 1 {
			return canned(503, "application/json", `{}`)(r)
		}
		return ok(r)
	}), Policy: &recoil.Policy{Budget: rate, Backoff: backoff.None{}, OverloadBackoff: backoff.None{}}}
	ctx := recoil.WithCost(context.Background(), 500)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.example/v1/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v, %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := 100_000 - rate.State().Available; got != 500+29 {
		t.Errorf("charged %d, want 529: the 503's 500 and the success's usage of 29", got)
	}
}

// Under a budget that is not a CostBudget, nothing is read or wrapped.
func TestTransportNoCost(t *testing.T) {
	tr := &Transport{Base: canned(200, "application/json", openAIChat), Policy: &recoil.Policy{}, IdleTimeout: NoIdleTimeout}
	req, _ := http.NewRequest("POST", "http://api.example/v1/chat", &onceReader{r: strings.NewReader(`{"max_tokens":5}`)})
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, ok := resp.Body.(*usageBody); ok {
		t.Error("the body was wrapped to settle a budget that does not charge by cost")
	}
}

type onceReader struct{ r io.Reader }

func (o *onceReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// Fed in any pieces, a stream or a JSON body comes to the same usage.
func TestUsageBodyPieces(t *testing.T) {
	for _, tt := range []struct {
		body   string
		stream bool
		want   int64
	}{{anthropicStream, true, 40}, {openAIStream, true, 21}, {openAIChat, false, 29}, {strings.ReplaceAll(openAIStream, "\n", "\r\n"), true, 21}} {
		for _, size := range []int{1, 2, 3, 7, 64, 1 << 20} {
			var got int64 = -1
			u := &usageBody{ReadCloser: io.NopCloser(chunked(tt.body, size)), budget: settleFunc(func(c, a int64) { got = a }), charged: 1000, stream: tt.stream}
			io.Copy(io.Discard, u)
			if got != tt.want {
				t.Errorf("in pieces of %d: settled %d, want %d", size, got, tt.want)
			}
		}
	}
}

// chunked reads s in pieces of at most size bytes.
func chunked(s string, size int) io.Reader { return &pieces{s: s, size: size} }

type pieces struct {
	s    string
	size int
}

func (p *pieces) Read(b []byte) (int, error) {
	if p.s == "" {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), p.size)], p.s)
	p.s = p.s[n:]
	return n, nil
}

// settleFunc is a CostBudget that only settles.
type settleFunc func(charged, actual int64)

func (settleFunc) AdmitAt(time.Time) bool                        { return true }
func (settleFunc) RetryAt(time.Time, budget.Cause) bool          { return true }
func (settleFunc) RecordAt(time.Time, budget.Outcome)            {}
func (settleFunc) AdmitNAt(time.Time, int64) bool                { return true }
func (settleFunc) RetryNAt(time.Time, budget.Cause, int64) bool  { return true }
func (f settleFunc) SettleAt(_ time.Time, charged, actual int64) { f(charged, actual) }

// FuzzParseUsage: any document is parsed or refused with ErrUsage, never
// a panic, and a usage parsed holds counts in range.
func FuzzParseUsage(f *testing.F) {
	for _, s := range []string{openAIChat, anthropicMessage, `{"usage":null}`, `{"a":{"usage":{"input_tokens":1}}}`,
		`{"usage":{"total_tokens":9007199254740992}}`, `{"usage":{"total_tokens":1e3}}`, `[`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := ParseUsage(data)
		if err != nil {
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("error %v does not wrap ErrUsage", err)
			}
			if u != (Usage{}) {
				t.Fatalf("a usage %+v with the error %v", u, err)
			}
			return
		}
		for _, n := range []int64{u.Input, u.Output, u.Total} {
			if n < 0 || n > 3*maxTokenCount {
				t.Fatalf("count out of range: %+v", u)
			}
		}
	})
}

// FuzzEstimateTokens: any body is estimated, at least a token per four
// bytes, never a panic.
func FuzzEstimateTokens(f *testing.F) {
	for _, s := range []string{`{"model":"m","max_tokens":1000}`, `{"max_output_tokens":9007199254740992}`,
		`{"max_tokens":-1}`, `{"x":[{"max_tokens":1}]}`, `not json`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n := EstimateTokens(body)
		if n < 1 || n < int64(len(body))/4 || n > int64(len(body))/4+1+maxTokenCount {
			t.Fatalf("EstimateTokens(%d bytes) = %d", len(body), n)
		}
	})
}

// FuzzUsageBody: a response body settles the same however it arrives in
// pieces, and never panics.
func FuzzUsageBody(f *testing.F) {
	f.Add([]byte(anthropicStream), true, uint8(3))
	f.Add([]byte(openAIStream), true, uint8(1))
	f.Add([]byte(openAIChat), false, uint8(7))
	f.Add([]byte("data: {\"usage\":{\"total_tokens\":5}}"), true, uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, stream bool, size uint8) {
		settle := func(r io.Reader) (got int64) {
			got = -1
			u := &usageBody{ReadCloser: io.NopCloser(r), budget: settleFunc(func(c, a int64) { got = a }), charged: 100, stream: stream}
			io.Copy(io.Discard, u)
			u.Close()
			return got
		}
		whole := settle(bytes.NewReader(body))
		if inPieces := settle(chunked(string(body), int(size)+1)); inPieces != whole {
			t.Fatalf("settled %d in pieces of %d, %d whole", inPieces, int(size)+1, whole)
		}
	})
}
