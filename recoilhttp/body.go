package recoilhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/recoil-go/recoil"
)

// This file is the Transport's own reading of response bodies: a failed
// response held in memory while the loop waits, a stream's first event
// read to decide its attempt, and a discarded response drained so its
// connection is reused.

// hold reads a failed response's body into memory (at most MaxDrain) and
// closes it, so the connection goes back to the pool while the loop waits;
// the response may still be the one the caller gets, with its whole body.
// A longer body keeps the rest unread behind what was read.
func hold(resp *http.Response) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	buf, err := io.ReadAll(io.LimitReader(resp.Body, MaxDrain+1))
	if err == nil && len(buf) <= MaxDrain {
		_ = resp.Body.Close()
		resp.Body = &heldBody{Reader: bytes.NewReader(buf)}
		return
	}
	resp.Body = &heldBody{Reader: io.MultiReader(bytes.NewReader(buf), errReader{err, resp.Body}), closer: resp.Body}
}

// heldBody is a response body read ahead by hold.
type heldBody struct {
	io.Reader
	closer io.Closer // the rest, when there is a rest
}

func (b *heldBody) Close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// errReader reads r, or returns err if reading ahead already failed.
type errReader struct {
	err error
	r   io.Reader
}

func (e errReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return e.r.Read(p)
}

// streamStart reads a text/event-stream response up to its first event
// (under the idle limit, which it applies to the body from here on). An
// "event: error", or a stream that fails or ends before any event, is a
// failed attempt that may be retried; after content has been delivered to
// the caller, no retry is possible and failures reach the reader as
// *StreamError.
func (t *Transport) streamStart(resp *http.Response) (recoil.Verdict, error) {
	if idle := t.idleTimeout(); idle > 0 {
		resp.Body = t.idle.open(resp.Body, idle, true)
	}
	ev, body, err := FirstEvent(resp.Body, MaxErrorBody)
	resp.Body = &wrapped{body}
	switch {
	case err == nil && (ev.Name == "error" || ev.Name == "" && errorData(ev.Data)):
		pe, _, _ := ParseErrorBody([]byte(ev.Data))
		what := "event: error"
		if ev.Name == "" {
			what = `data: {"error": …}`
		}
		v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: CodeStreamError, Reason: "stream error before any content: " + describe(pe, what)}
		if pe.Type == "overloaded_error" {
			v.Class = recoil.ClassOverloaded
		}
		return v, &StatusError{StatusCode: resp.StatusCode, Provider: pe, JSON: true}
	case err == nil, errors.Is(err, ErrNoEvent):
		return recoil.Verdict{}, nil
	default:
		v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: CodeStreamError, Reason: "stream failed before any content: " + err.Error()}
		var idle *IdleError
		if errors.As(err, &idle) {
			v.Timeout = true
		}
		return v, err
	}
}

// errorData reports an unnamed event whose data is a JSON object with an
// "error" member that is not null: how Chat Completions streams report an
// error (the other dialect names the event "error").
func errorData(data string) bool {
	if !strings.HasPrefix(strings.TrimSpace(data), "{") {
		return false
	}
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(data), &probe) != nil {
		return false
	}
	e := bytes.TrimSpace(probe.Error)
	return len(e) > 0 && !bytes.Equal(e, []byte("null"))
}

func isEventStream(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// discard drains (at most MaxDrain) and closes a response the caller will
// not see, so its connection can be reused.
func discard(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, resp.Body, MaxDrain)
	_ = resp.Body.Close()
}
