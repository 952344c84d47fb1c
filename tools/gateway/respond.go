package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// okBody is the answer to every successful attempt that does not stream: a
// message in the shape of Anthropic's Messages API.
var okBody = []byte(`{"id":"msg_gateway","type":"message","role":"assistant","model":"gateway","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)

var (
	jsonType   = []string{"application/json"}
	streamType = []string{"text/event-stream"}
	noCache    = []string{"no-cache"}
)

// Bare returns a handler that answers every request as the gateway answers
// a success that does not stream — the same status, headers and body — and
// counts nothing: the baseline the gateway's throughput is measured against
// (docs/gateway.md).
func Bare() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = jsonType
		_, _ = w.Write(okBody)
	})
}

// respond writes the answer to an attempt.
func (g *Gateway) respond(w http.ResponseWriter, r *http.Request, a *attempt, d decision) {
	if !g.wait(r, d.latency) {
		return
	}
	switch {
	case d.fault == faultNone && a.charge:
		g.serveCharge(w, r, d)
	case d.fault == faultNone && a.stream:
		g.stream(w, r, d)
	case d.fault == faultNone:
		w.Header()["Content-Type"] = jsonType
		_, _ = w.Write(okBody)
	default:
		g.writeError(w, a, d)
	}
}

// providerError is an error body in Anthropic's shape.
type providerError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func errorBody(typ, msg string) []byte {
	var e providerError
	e.Type, e.Error.Type, e.Error.Message = "error", typ, msg
	b, _ := json.Marshal(e)
	return b
}

// errorType returns the provider's error type and message for a status.
func errorType(status int) (typ, msg string) {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error", "invalid request"
	case http.StatusUnauthorized:
		return "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		return "permission_error", "your API key does not have permission to use the specified resource"
	case http.StatusNotFound:
		return "not_found_error", "not found"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large", "request exceeds the maximum allowed number of bytes"
	case http.StatusTooManyRequests:
		return "rate_limit_error", "rate limited"
	case 529:
		return "overloaded_error", "Overloaded"
	}
	if text := http.StatusText(status); text != "" {
		return "api_error", text
	}
	return "api_error", "error " + strconv.Itoa(status)
}

func (g *Gateway) writeError(w http.ResponseWriter, a *attempt, d decision) {
	h := w.Header()
	h["Content-Type"] = jsonType
	typ, msg := errorType(d.status)
	if d.code != "" {
		typ = d.code
	}
	switch d.fault {
	case faultValidator:
		msg = a.reject
	case faultAllowance:
		msg = fmt.Sprintf("This request would exceed the rate limit for your organization of %d requests per minute. "+
			"For details, refer to: https://docs.anthropic.com/en/api/rate-limits.", g.cfg.Allowance)
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(d.retryAfter)))
		h.Set("Anthropic-Ratelimit-Requests-Limit", strconv.Itoa(g.cfg.Allowance))
		h.Set("Anthropic-Ratelimit-Requests-Remaining", "0")
	}
	if d.status == 529 {
		h.Set("X-Should-Retry", "true")
	}
	w.WriteHeader(d.status)
	_, _ = w.Write(errorBody(typ, msg))
}

// streamEvents returns the events of a streamed answer with n deltas.
func streamEvents(n int) [][]byte {
	ev := func(name, data string) []byte {
		return []byte("event: " + name + "\ndata: " + data + "\n\n")
	}
	out := [][]byte{
		ev("message_start", `{"type":"message_start","message":{"id":"msg_gateway","type":"message","role":"assistant","model":"gateway","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
	}
	for i := range n {
		out = append(out, ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word`+strconv.Itoa(i+1)+` "}}`))
	}
	return append(out,
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(n)+`}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	)
}

var pingEvent = []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n")

// stream writes a streamed success, stalling after Stream.StallAfter events
// when d says so.
func (g *Gateway) stream(w http.ResponseWriter, r *http.Request, d decision) {
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	h := w.Header()
	h["Content-Type"] = streamType
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)
	flush()
	s := g.cfg.Stream
	for i, ev := range g.events {
		if d.stall && i == s.StallAfter {
			g.stall(w, r, flush)
		}
		if i > 0 && !g.wait(r, s.Interval) {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		flush()
	}
	if d.stall && s.StallAfter >= len(g.events) {
		g.stall(w, r, flush)
	}
}

// stall holds a stream: for Stream.StallFor, or until the client goes
// away or the gateway closes, sending pings if asked. When it does not end
// by itself it aborts the connection, as a stream cut off mid-answer is.
func (g *Gateway) stall(w http.ResponseWriter, r *http.Request, flush func()) {
	s := g.cfg.Stream
	var until, ping <-chan time.Time
	if s.StallFor > 0 {
		t := time.NewTimer(s.StallFor)
		defer t.Stop()
		until = t.C
	}
	if s.StallPing > 0 {
		t := time.NewTicker(s.StallPing)
		defer t.Stop()
		ping = t.C
	}
	for {
		select {
		case <-until:
			return
		case <-ping:
			if _, err := w.Write(pingEvent); err != nil {
				panic(http.ErrAbortHandler)
			}
			flush()
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		case <-g.quit:
			panic(http.ErrAbortHandler)
		}
	}
}
