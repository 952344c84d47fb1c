package recoilhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/recoil-go/recoil"
)

// An Endpoint is where the Transport sends the attempts that a policy's
// Fallback routes to one target: a base URL, the headers that carry the
// target's credentials, and the model name to put in a JSON request body.
// Make one with NewEndpoint and set it as the recoil.Target's Value; a
// target without one gets the request as its caller made it.
//
// With a Fallback of Endpoints, one Transport under an SDK client falls
// back across OpenAI-compatible providers — another model, another key,
// another region, a self-hosted server — with no change to the calling
// code:
//
//   - the URL: the request's path is taken relative to the first target's
//     base path and joined to this one's, whose scheme and host replace the
//     request's; the base URL's query parameters (Azure's api-version) are
//     added to the request's;
//   - the headers: the caller's credential headers (Authorization,
//     Proxy-Authorization, Cookie, X-Api-Key, Api-Key) are sent only to a
//     target on the request's own scheme and host, never to another, as
//     net/http drops them on a redirect to another host; then the
//     Endpoint's headers are set, replacing any of the same name;
//   - the body: when Model is set and the body is a JSON object with a
//     top-level "model", its value is replaced and every other byte kept.
//
// An Endpoint is immutable and safe for concurrent use.
type Endpoint struct {
	base   *url.URL
	header http.Header
	model  string
}

// NewEndpoint returns the Endpoint of a target at baseURL (http or https,
// with a host), sending header on every attempt and, if model is not
// empty, naming model in the request body.
func NewEndpoint(baseURL string, header http.Header, model string) (*Endpoint, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("recoilhttp: endpoint base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("recoilhttp: endpoint base URL %q: want http or https and a host", baseURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("recoilhttp: endpoint base URL %q: put credentials in the header, not the URL, where they would reach logs", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return &Endpoint{base: u, header: header.Clone(), model: model}, nil
}

// NewTarget returns a recoil.Target named name whose attempts go to
// NewEndpoint(baseURL, header, model).
func NewTarget(name, baseURL string, header http.Header, model string) (recoil.Target, error) {
	ep, err := NewEndpoint(baseURL, header, model)
	if err != nil {
		return recoil.Target{}, err
	}
	return recoil.Target{Name: name, Value: ep}, nil
}

// BaseURL returns the endpoint's base URL.
func (e *Endpoint) BaseURL() string { return e.base.String() }

// Model returns the model name the endpoint puts in request bodies; "" for
// none.
func (e *Endpoint) Model() string { return e.model }

// credentialHeaders are never sent to a target on another origin than the
// request's.
var credentialHeaders = [...]string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "Api-Key"}

// maxRewriteBody bounds a body the Transport reads to rewrite its model.
const maxRewriteBody = 32 << 20

// errRewriteBody is the error of a request whose body is to name another
// model but cannot be read (no GetBody) or is too large.
var errRewriteBody = errors.New("recoilhttp: a Fallback target names a model, but the request body cannot be read to rewrite it (set GetBody, or keep it under 32 MiB)")

// route points out, the attempt's own copy of req, at the endpoint: its
// URL, headers and body. first is the first target's endpoint, if any,
// whose base path the request's path is relative to; body, when not nil,
// is the request's body, already read.
func (e *Endpoint) route(out, req *http.Request, first *Endpoint, body []byte) {
	rest, same := req.URL.Path, e == first
	if first != nil && first.base.Path != "" {
		if p := first.base.Path; rest == p || strings.HasPrefix(rest, p+"/") {
			rest = rest[len(p):]
		} else {
			same = false
		}
	}
	if same && e.base.RawQuery == "" && req.URL.RawPath == "" &&
		req.URL.Scheme == e.base.Scheme && req.URL.Host == e.base.Host {
		// Already pointed at this endpoint (the first, whose base path
		// it is under): the URL goes as it is, shared, never written.
		out.URL = req.URL
	} else {
		u := *req.URL
		u.Scheme, u.Host, u.Path, u.RawPath = e.base.Scheme, e.base.Host, e.base.Path+rest, ""
		if e.base.RawQuery != "" { // parsing an empty query would still make a map
			rq := u.Query()
			for k, v := range e.base.Query() {
				if _, ok := rq[k]; !ok {
					rq[k] = v
				}
			}
			u.RawQuery = rq.Encode()
		}
		out.URL = &u
	}
	out.Host = ""
	u := out.URL
	if u.Scheme != req.URL.Scheme || !strings.EqualFold(u.Host, req.URL.Host) {
		for _, h := range credentialHeaders {
			delete(out.Header, h)
		}
	}
	for k, v := range e.header {
		out.Header[http.CanonicalHeaderKey(k)] = v
	}
	if e.model == "" || body == nil {
		return
	}
	b := withModel(body, e.model)
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// withModel returns body with the value of its top-level "model" replaced
// by model, every other byte as it was; body itself when it is not a JSON
// object with a top-level "model".
func withModel(body []byte, model string) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return body
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return body
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return body
		}
		if k != "model" {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		name, _ := json.Marshal(model)
		out := make([]byte, 0, len(body)-len(raw)+len(name))
		out = append(out, body[:start]...)
		out = append(out, name...)
		return append(out, body[end:]...)
	}
	return body
}

// readBody reads req's body for rewriting, once, through GetBody, which
// leaves req.Body itself for net/http or RoundTrip to close.
func readBody(req *http.Request) ([]byte, error) {
	rc, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxRewriteBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRewriteBody {
		return nil, errRewriteBody
	}
	return b, nil
}
