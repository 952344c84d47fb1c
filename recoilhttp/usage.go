package recoilhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/recoil-go/recoil"
)

// This file charges a model request by its tokens: the estimate made
// before it goes (EstimateTokens), and the usage its response reports
// (ParseUsage), which settles the charge. Both run only under a policy
// whose Budget is a recoil.CostBudget.

// Bounds on what is read to estimate a request and to find a response's
// usage.
const (
	// maxEstimateBody is the most of a request body read to estimate it;
	// a larger body is estimated by its length alone.
	maxEstimateBody = 1 << 20
	// maxUsageBody is the most of a JSON response body kept to find its
	// usage; a larger body is not settled.
	maxUsageBody = 1 << 20
	// maxUsageLine is the longest event-stream line parsed for usage;
	// longer lines (long content) are skipped.
	maxUsageLine = 64 << 10
	// maxTokenCount bounds a token count read from a body: 2^53.
	maxTokenCount = 1 << 53
	// bytesPerToken is the estimate's rule of thumb: about four bytes of
	// English text (or of JSON around it) to a token.
	bytesPerToken = 4
)

// ErrUsage is wrapped by every error ParseUsage returns.
var ErrUsage = errors.New("recoilhttp: malformed usage")

// Usage is what a model API's response says a request used, in tokens.
type Usage struct {
	// Input is the prompt's tokens: OpenAI's prompt_tokens (or input_tokens,
	// in its Responses API); Anthropic's input_tokens plus
	// cache_creation_input_tokens, which its input-tokens limit counts
	// (cache reads it does not).
	Input int64
	// Output is the tokens generated: completion_tokens, or output_tokens.
	Output int64
	// Total is what the request cost: total_tokens when the response
	// gives it, otherwise Input + Output.
	Total int64
}

// usageJSON is a usage object's fields, OpenAI's and Anthropic's.
type usageJSON struct {
	PromptTokens             json.RawMessage `json:"prompt_tokens"`
	CompletionTokens         json.RawMessage `json:"completion_tokens"`
	TotalTokens              json.RawMessage `json:"total_tokens"`
	InputTokens              json.RawMessage `json:"input_tokens"`
	OutputTokens             json.RawMessage `json:"output_tokens"`
	CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
}

// count reads a token count: a JSON number that is a whole number in
// [0, 2^53], written without sign, fraction or exponent.
func count(raw json.RawMessage) (int64, error) {
	s := string(raw)
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, errors.New("not a count")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxTokenCount {
		return 0, errors.New("not a count up to 2^53")
	}
	return n, nil
}

// ParseUsage reads the usage a model API reports in one JSON document: a
// response body, or the data of one event of a stream. It finds a "usage"
// object at the top level (OpenAI's chat completions and their last stream
// chunk, Anthropic's messages and its message_delta events) or one level
// down (Anthropic's message_start event, OpenAI's response.completed
// event), and reads its counts (see Usage). A document without usage
// returns the zero Usage and no error. A document that is not JSON, or a
// count that is not a whole number in [0, 2^53], returns an error wrapping
// ErrUsage. ParseUsage never panics.
func ParseUsage(data []byte) (Usage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return Usage{}, fmt.Errorf("%w: not a JSON object: %v", ErrUsage, err)
	}
	if raw, ok := top["usage"]; ok && !isNull(raw) {
		return usageOf(raw)
	}
	for _, raw := range top {
		if len(raw) == 0 || raw[0] != '{' || !bytes.Contains(raw, usageKey) {
			continue
		}
		var inner struct {
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal(raw, &inner); err != nil {
			return Usage{}, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if len(inner.Usage) > 0 && !isNull(inner.Usage) {
			return usageOf(inner.Usage)
		}
	}
	return Usage{}, nil
}

var usageKey = []byte(`"usage"`)

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// usageOf reads a usage object.
func usageOf(raw json.RawMessage) (Usage, error) {
	var j usageJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return Usage{}, fmt.Errorf("%w: usage: %v", ErrUsage, err)
	}
	var c [6]int64
	for i, f := range []struct {
		name string
		n    json.RawMessage
	}{
		{"prompt_tokens", j.PromptTokens}, {"completion_tokens", j.CompletionTokens}, {"total_tokens", j.TotalTokens},
		{"input_tokens", j.InputTokens}, {"output_tokens", j.OutputTokens}, {"cache_creation_input_tokens", j.CacheCreationInputTokens},
	} {
		if len(f.n) == 0 || isNull(f.n) {
			continue
		}
		n, err := count(f.n)
		if err != nil {
			return Usage{}, fmt.Errorf("%w: usage.%s: %q is not a count up to 2^53", ErrUsage, f.name, f.n)
		}
		c[i] = n
	}
	u := Usage{Input: max(c[0], c[3]+c[5]), Output: max(c[1], c[4]), Total: c[2]}
	if u.Total == 0 {
		u.Total = u.Input + u.Output
	}
	return u, nil
}

// merge keeps, field by field, the larger of u and v: a stream reports its
// usage in parts (Anthropic's message_start gives the input, each
// message_delta the output so far).
func (u Usage) merge(v Usage) Usage {
	m := Usage{Input: max(u.Input, v.Input), Output: max(u.Output, v.Output), Total: max(u.Total, v.Total)}
	m.Total = max(m.Total, m.Input+m.Output)
	return m
}

// outputFields are the request fields that cap a model's output: Chat
// Completions' max_tokens and max_completion_tokens, Anthropic's
// max_tokens, the Responses API's max_output_tokens.
var outputFields = [...]string{"max_tokens", "max_completion_tokens", "max_output_tokens"}

// EstimateTokens estimates what a model request will cost, in tokens,
// from its body: a token per four bytes of the body, for the prompt, plus
// the most the model may write — the largest of the body's top-level
// max_tokens, max_completion_tokens and max_output_tokens. OpenAI documents
// the same rule for its own limiter: a request counts as the larger of
// max_tokens and an estimate from its characters. A body that is not a
// JSON object, or whose cap is not a count up to 2^53, is estimated by its
// size alone. The estimate is at least 1.
//
// It is an estimate: images, tools and non-English text tokenize
// differently. recoilhttp.Transport corrects it by the usage the response
// reports.
func EstimateTokens(body []byte) int64 {
	out, _ := maxOutputTokens(body)
	return estimate(int64(len(body)), out)
}

func estimate(size, out int64) int64 {
	return max((size+bytesPerToken-1)/bytesPerToken+out, 1)
}

// maxOutputTokens reads the largest output cap at the top level of a JSON
// object, zero when it has none.
func maxOutputTokens(body []byte) (int64, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, fmt.Errorf("recoilhttp: the request body is not a JSON object")
	}
	var most int64
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return most, fmt.Errorf("recoilhttp: the request body is not a JSON object: %v", err)
		}
		key, _ := k.(string)
		want := false
		for _, f := range outputFields {
			want = want || key == f
		}
		if !want {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return most, fmt.Errorf("recoilhttp: the request body is not a JSON object: %v", err)
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return most, fmt.Errorf("recoilhttp: the request body is not a JSON object: %v", err)
		}
		v, err := count(raw)
		if err != nil {
			return most, fmt.Errorf("recoilhttp: %s: %q is not a count up to 2^53", key, raw)
		}
		most = max(most, v)
	}
	return most, nil
}

// cost readies a request under a policy whose Budget is a CostBudget: it
// returns the context to run the call under, the budget, and the cost of
// each attempt — the one ctx carries (recoil.WithCost), else an estimate
// (requestCost) put in the context returned for the loop to charge. Under
// any other budget it returns ctx and nil, and reads nothing.
func (r *request) cost(p *recoil.Policy, ctx context.Context) (context.Context, recoil.CostBudget, int64) {
	cb, ok := p.Budget.(recoil.CostBudget)
	if !ok {
		return ctx, nil, 0
	}
	n, ok := recoil.CostFrom(ctx)
	if !ok {
		n = requestCost(r.orig, r.body)
		ctx = recoil.WithCost(ctx, n)
	}
	return ctx, cb, n
}

// requestCost estimates req's cost for a CostBudget (EstimateTokens) from
// its body: buffered when the Transport holds it, else read through
// GetBody, up to 1 MiB (a larger body, or one that cannot be read again,
// is estimated by its ContentLength alone).
func requestCost(req *http.Request, buffered []byte) int64 {
	body, size := buffered, int64(len(buffered))
	if body == nil && req.Body != nil && req.Body != http.NoBody {
		size = max(req.ContentLength, 0)
		if req.GetBody != nil {
			if rc, err := req.GetBody(); err == nil {
				body, _ = io.ReadAll(io.LimitReader(rc, maxEstimateBody+1))
				_ = rc.Close()
				size = max(size, int64(len(body)))
			}
		}
	}
	var out int64
	if len(body) <= maxEstimateBody {
		out, _ = maxOutputTokens(body)
	}
	return estimate(size, out)
}

// usageBody settles a CostBudget's charge for the response it wraps: it
// keeps a JSON body (up to 1 MiB) or scans an event stream's data lines
// for the usage the response reports, and charges or refunds the
// difference from what the attempt was charged — for a JSON body once it
// has been read whole (to its end, or closed after a complete document);
// for a stream at its end, or, when it is closed before, only to charge
// more (a refund needs the whole stream: the provider bills what it
// generated before the caller stopped reading). A body without usage
// settles nothing: the estimate stands.
type usageBody struct {
	io.ReadCloser
	budget  recoil.CostBudget
	charged int64

	mu     sync.Mutex
	stream bool
	buf    []byte // the JSON body, or the stream's current line
	over   bool   // the JSON body, or the current line, outgrew its bound
	usage  Usage
	bad    bool // a usage was malformed: settle nothing
	done   bool
}

// settleBody wraps resp's body to settle the charge of its attempt.
func settleBody(resp *http.Response, b recoil.CostBudget, charged int64) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	resp.Body = &usageBody{ReadCloser: resp.Body, budget: b, charged: charged, stream: isEventStream(resp)}
}

func (u *usageBody) Read(p []byte) (int, error) {
	n, err := u.ReadCloser.Read(p)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done {
		return n, err
	}
	u.feed(p[:n])
	if err == io.EOF {
		u.finish(true)
	}
	return n, err
}

func (u *usageBody) Close() error {
	u.mu.Lock()
	if !u.done {
		u.finish(false)
	}
	u.mu.Unlock()
	return u.ReadCloser.Close()
}

// feed takes the bytes read. u.mu must be held.
func (u *usageBody) feed(p []byte) {
	if !u.stream {
		if u.over || len(u.buf)+len(p) > maxUsageBody {
			u.over, u.buf = true, nil
			return
		}
		u.buf = append(u.buf, p...)
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		line := p
		if i >= 0 {
			line = p[:i]
		}
		if !u.over {
			if len(u.buf)+len(line) > maxUsageLine {
				u.over, u.buf = true, u.buf[:0]
			} else {
				u.buf = append(u.buf, line...)
			}
		}
		if i < 0 {
			return
		}
		if !u.over {
			u.line(u.buf)
		}
		u.buf, u.over = u.buf[:0], false
		p = p[i+1:]
	}
}

// line reads one event-stream line's data for usage. u.mu must be held.
func (u *usageBody) line(l []byte) {
	l = bytes.TrimSuffix(l, []byte("\r"))
	data, ok := bytes.CutPrefix(l, []byte("data:"))
	if !ok || !bytes.Contains(data, usageKey) {
		return
	}
	v, err := ParseUsage(bytes.TrimSpace(data))
	if err != nil {
		u.bad = true
		return
	}
	u.usage = u.usage.merge(v)
}

// finish settles at the body's end (eof), or when it is closed before.
// u.mu must be held.
func (u *usageBody) finish(eof bool) {
	u.done = true
	if u.stream {
		if eof && !u.over && len(u.buf) > 0 {
			u.line(u.buf)
		}
	} else if !u.over && bytes.Contains(u.buf, usageKey) {
		v, err := ParseUsage(u.buf) // an error too for a document cut short
		u.usage, u.bad = v, err != nil
	}
	u.buf = nil
	switch {
	case u.bad || u.usage.Total == 0:
	case u.stream && !eof && u.usage.Total <= u.charged:
	default:
		u.budget.SettleAt(time.Time{}, u.charged, u.usage.Total)
	}
}
