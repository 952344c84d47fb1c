package recoilsdk

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
)

// Classify is a recoil.Classifier for the errors of the official model SDKs:
// it finds an *anthropic.Error or an *openai.Error in err (errors.As) and
// classifies the response it carries with recoilhttp.Classify, the table
// recoilhttp.Transport uses, so a call gets the same verdict whether recoil
// retries it around the SDK (recoil.Do) or under it (the Transport). The
// status, Retry-After and its relatives, x-should-retry and the provider's
// error body (insufficient_quota, billing_error, overloaded_error) all count.
//
// For any other error, and for an error carrying a verdict attached with
// recoil.Mark, it returns the zero Verdict — no opinion — so recoil's
// built-in rules apply: it is meant to be a Policy's Classify.
//
// Classify is shorthand for ClassifyAt(err, time.Now()). It is safe for
// concurrent use.
func Classify(err error) recoil.Verdict {
	return ClassifyAt(err, time.Now())
}

// ClassifyAt is Classify at the instant now, which dates a Retry-After given
// as an HTTP date.
//
// The error body it classifies is the SDK error's own copy, RawJSON: the
// Anthropic SDK keeps the whole body, the OpenAI SDK the object under
// "error", which ClassifyAt puts back in its envelope. So it does not read
// the response body, and it works after the caller has read it. Only when
// the SDK kept nothing (the OpenAI SDK with a body that is not JSON, such as
// a proxy's HTML page) does it read the in-memory copy both SDKs leave in
// Response.Body, under a lock of its own, and put back an equivalent one,
// as the SDKs' DumpResponse does. An error without a Response, built by
// hand as tests do, is classified by its status code and its type, code and
// message fields.
//
// An Anthropic error event inside a streamed 2xx response (the error's
// status is below 400) is classified as recoilhttp.Transport classifies one
// at the start of a stream: transient, overloaded for an overloaded_error,
// with Code recoilhttp.CodeStreamError and MayHaveExecuted set.
func ClassifyAt(err error, now time.Time) recoil.Verdict {
	if err == nil {
		return recoil.Verdict{}
	}
	if _, marked := recoil.VerdictOf(err); marked {
		return recoil.Verdict{} // the caller's verdict wins: recoil.Classify's first rule
	}
	var (
		ae *anthropic.Error
		oe *openai.Error
	)
	switch {
	case errors.As(err, &ae) && ae != nil:
		return classify(ae.Request, ae.Response, ae.StatusCode, anthropicBody(ae), now)
	case errors.As(err, &oe) && oe != nil:
		return classify(oe.Request, oe.Response, oe.StatusCode, openAIBody(oe), now)
	}
	return recoil.Verdict{}
}

// bodyMu serialises the reads of an SDK error's Response.Body, the one
// shared thing Classify touches, so that two goroutines may classify the same
// error. They are rare: only for a body the SDK kept no copy of.
var bodyMu sync.Mutex

// classify classifies an SDK error's response resp (nil: the status alone)
// with the error body body ("": read resp.Body, if any).
func classify(req *http.Request, resp *http.Response, status int, body string, now time.Time) recoil.Verdict {
	if resp == nil {
		if status == 0 {
			return recoil.Verdict{}
		}
		resp = &http.Response{StatusCode: status, Header: http.Header{}, Request: req}
	}
	if resp.StatusCode < 400 {
		return streamError(body)
	}
	if body == "" {
		bodyMu.Lock()
		defer bodyMu.Unlock()
		return recoilhttp.Classify(req, resp, nil, now) // reads resp.Body and puts it back
	}
	snap := *resp // the SDK's response, with the SDK's copy of its body
	snap.Body = io.NopCloser(strings.NewReader(body))
	snap.ContentLength = int64(len(body))
	return recoilhttp.Classify(req, &snap, nil, now)
}

// streamError classifies an error event that arrived inside a 2xx stream,
// with the rule recoilhttp.Transport applies to one before any content.
func streamError(body string) recoil.Verdict {
	if body == "" {
		return recoil.Verdict{} // not an error the response explains
	}
	pe, _, _ := recoilhttp.ParseErrorBody([]byte(body))
	v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: recoilhttp.CodeStreamError, Reason: "stream error event"}
	if pe.Type == "overloaded_error" {
		v.Class = recoil.ClassOverloaded
	}
	for _, s := range [...]string{pe.Type, pe.Message} {
		if s != "" {
			v.Reason += ": " + s
		}
	}
	return v
}

// anthropicBody is the error body an *anthropic.Error was made from: the
// SDK keeps it whole, JSON or not.
func anthropicBody(e *anthropic.Error) string {
	if raw := e.RawJSON(); raw != "" {
		return raw
	}
	return envelope(errorObject{Type: string(e.Type()), Message: e.Message})
}

// openAIBody is the error body an *openai.Error was made from, as far as the
// SDK kept it: the SDK keeps only the object under "error", and nothing of a
// body that is not JSON ("" then).
func openAIBody(e *openai.Error) string {
	if raw := e.RawJSON(); raw != "" && raw != "null" {
		return `{"error":` + raw + `}`
	}
	return envelope(errorObject{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param})
}

// errorObject is the object under "error" in an OpenAI-style body.
type errorObject struct {
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Param   string `json:"param,omitempty"`
}

// envelope is an {"error":{…}} body with the fields of o, or "" if they are
// all empty: the body of an SDK error built without one.
func envelope(o errorObject) string {
	if o == (errorObject{}) {
		return ""
	}
	b, _ := json.Marshal(struct {
		Error errorObject `json:"error"`
	}{o})
	return string(b)
}
