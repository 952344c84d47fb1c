package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults for a Config's zero fields.
const (
	// DefaultRetryAfter is the wait a 409 "in progress" asks for: the
	// original is usually about to finish.
	DefaultRetryAfter = time.Second
	// DefaultMaxBody bounds the request body read for the fingerprint.
	DefaultMaxBody = 1 << 20
	// DefaultMaxResponse bounds the response a store keeps.
	DefaultMaxResponse = 1 << 20
	// DefaultStoreTimeout bounds how long a finished request keeps trying
	// to store its response while the store fails (a restart, a dropped
	// connection).
	DefaultStoreTimeout = 10 * time.Second
)

// Config configures a Middleware. Every zero field means its documented
// default, so the zero Config protects POST and PATCH requests that carry
// a key, with a fresh Memory store.
type Config struct {
	// Store keeps the keys; nil means a Memory store of the middleware's
	// own, with MemoryConfig's defaults.
	Store Store
	// Lease is how long a request holds its key: a request whose process
	// died is run again by a retry after at most this long. The handler's
	// context ends when the lease does, so that no two holders run at
	// once. Zero means DefaultLease.
	Lease time.Duration
	// RetryAfter is the wait a 409 "in progress" asks for (Retry-After,
	// whole seconds, at least 1), or the lease's remainder if sooner; zero
	// means DefaultRetryAfter.
	RetryAfter time.Duration
	// Methods are the methods protected; nil means POST and PATCH (those
	// RFC 9110 does not make idempotent). Other requests pass through.
	Methods []string
	// Required makes a protected request without a key a 400; false lets
	// it through unprotected.
	Required bool
	// Scope names the client a request comes from, so that one client's
	// keys never meet another's: what one stores under a key is never
	// replayed to another, and a key one used never makes another's
	// request a 422. Nil means ScopeByCredentials, the request's
	// Authorization, X-Api-Key or client certificate. A request whose
	// Scope is "" gets 400 (idempotency_scope_missing) if it carries a
	// key: a key that cannot be scoped is refused, not shared. Only a
	// SHA-256 of the scope reaches the store (HashScope). Set
	// InsecureSharedScope to put every client in one scope, or
	// ScopeHeader, or a function of your own that returns the account
	// your authentication resolved.
	Scope func(*http.Request) string
	// MaxKeyLen bounds a key; zero means DefaultMaxKeyLen.
	MaxKeyLen int
	// MaxBody bounds the request body, which is read whole for the
	// fingerprint (a larger one gets 413); zero means DefaultMaxBody.
	MaxBody int64
	// MaxResponse bounds the response stored. A larger response reaches
	// its client, but what is stored (and replayed) is a 500 that says it
	// was too large; zero means DefaultMaxResponse.
	MaxResponse int
	// Keep reports whether a response with this status is stored as the
	// key's outcome; one that is not releases the key, so a retry runs the
	// handler again. Nil means DefaultKeep: every status but 408, 429 and
	// the 5xx, which say "nothing was done, try again". A handler that
	// fails after its side effect must answer with a status Keep keeps.
	Keep func(status int) bool
	// StoreTimeout bounds how long a finished request keeps trying to
	// store its response while the store fails; zero means
	// DefaultStoreTimeout. It never goes past the lease.
	StoreTimeout time.Duration
	// Logger receives a line for each store failure; nil means none.
	Logger *slog.Logger
}

// DefaultKeep is the Keep used when Config.Keep is nil.
func DefaultKeep(status int) bool {
	return status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// Middleware makes a retried request a no-op on the server: it honours
// the Idempotency-Key header of the IETF draft
// (draft-ietf-httpapi-idempotency-key-header). For a protected request
// with a key:
//
//   - the first request under the key runs the handler, and its response
//     (status, headers, body) is stored once the handler returns, before
//     the client sees it;
//   - a request under a finished key, from the same client (Config.Scope),
//     gets the stored response exactly — status, headers, Set-Cookie
//     included, body and trailer — and the handler does not run; another
//     client's request under the same key is a request of its own;
//   - a request under a key whose original is still running gets 409 with
//     Retry-After (recoil's Transport waits and retries);
//   - a key reused with another method, path or body gets 422;
//   - a missing key gets 400 if Config.Required, a malformed one 400, a
//     key on a request the Scope cannot place 400, a body over
//     Config.MaxBody 413, one that cannot be read 400, a store that fails
//     503 with Retry-After (the handler does not run).
//
// Errors are application/problem+json (RFC 9457) with a "code" member
// (idempotency_key_missing, idempotency_key_malformed,
// idempotency_scope_missing, idempotency_key_in_use,
// idempotency_key_reused, request_too_large,
// idempotency_store_unavailable, idempotency_outcome_not_stored,
// idempotency_lease_lost) and a "message" member repeating the detail,
// for clients that read provider-style error bodies.
//
// A handler that panics keeps its key locked until the lease runs out (it
// may have done its side effect); then a retry runs it again. So the side
// effect happens at least once and, unless the process dies between it and
// the store, at most once; recovery points (pgstore.Store.Phase) close
// that gap for work kept in PostgreSQL. docs/idempotency.md tells each
// case.
//
// The response is buffered whole, so the handler cannot stream. Make a
// Middleware with NewMiddleware; it is safe for concurrent use.
type Middleware struct {
	next http.Handler
	cfg  Config
}

// NewMiddleware returns a Middleware in front of next, or an error naming
// a Config field that is negative.
func NewMiddleware(next http.Handler, cfg Config) (*Middleware, error) {
	switch {
	case cfg.Lease < 0:
		return nil, errors.New("idempotency: Config.Lease is negative")
	case cfg.RetryAfter < 0:
		return nil, errors.New("idempotency: Config.RetryAfter is negative")
	case cfg.MaxKeyLen < 0:
		return nil, errors.New("idempotency: Config.MaxKeyLen is negative")
	case cfg.MaxBody < 0:
		return nil, errors.New("idempotency: Config.MaxBody is negative")
	case cfg.MaxResponse < 0:
		return nil, errors.New("idempotency: Config.MaxResponse is negative")
	case cfg.StoreTimeout < 0:
		return nil, errors.New("idempotency: Config.StoreTimeout is negative")
	}
	if cfg.Store == nil {
		cfg.Store, _ = NewMemory(MemoryConfig{})
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.Methods == nil {
		cfg.Methods = []string{http.MethodPost, http.MethodPatch}
	}
	if cfg.Scope == nil {
		cfg.Scope = ScopeByCredentials
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxResponse == 0 {
		cfg.MaxResponse = DefaultMaxResponse
	}
	if cfg.Keep == nil {
		cfg.Keep = DefaultKeep
	}
	if cfg.StoreTimeout == 0 {
		cfg.StoreTimeout = DefaultStoreTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Middleware{next: next, cfg: cfg}, nil
}

// ServeHTTP implements http.Handler.
func (m *Middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !slices.Contains(m.cfg.Methods, r.Method) {
		m.next.ServeHTTP(w, r)
		return
	}
	values := r.Header.Values(Header)
	if len(values) == 0 {
		values = r.Header.Values(XHeader)
	}
	if len(values) == 0 {
		if m.cfg.Required {
			writeProblem(w, http.StatusBadRequest, "idempotency_key_missing", "Idempotency-Key is missing",
				"this request must carry an Idempotency-Key header, the same on every retry", 0)
			return
		}
		m.next.ServeHTTP(w, r)
		return
	}
	key, err := ParseKey(values, m.cfg.MaxKeyLen)
	if err != nil {
		var ke *KeyError
		errors.As(err, &ke)
		writeProblem(w, http.StatusBadRequest, "idempotency_key_malformed", "Idempotency-Key is malformed", "Idempotency-Key: "+ke.Reason, 0)
		return
	}
	scope := m.cfg.Scope(r)
	if scope == "" {
		writeProblem(w, http.StatusBadRequest, "idempotency_scope_missing", "Idempotency-Key cannot be scoped",
			"this server keeps each client's Idempotency-Keys apart by the client's credentials, and this request carries none; the request was not run", 0)
		return
	}
	scope = HashScope(scope)
	body, tooLarge, err := m.readBody(r)
	switch {
	case tooLarge:
		writeProblem(w, http.StatusRequestEntityTooLarge, "request_too_large", "Request body too large", err.Error(), 0)
		return
	case err != nil:
		// The client stopped sending, or the connection broke: nothing
		// was fingerprinted or stored, and the request may be sent again.
		writeProblem(w, http.StatusBadRequest, "request_body_unreadable", "Request body could not be read", err.Error(), 0)
		return
	}
	ctx := r.Context()
	b, err := m.cfg.Store.Begin(ctx, scope, key, Fingerprint(r.Method, r.URL.RequestURI(), body), m.cfg.Lease)
	if err != nil {
		m.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "idempotency: store failed at begin", slog.String("key", key), slog.Any("err", err))
		writeProblem(w, http.StatusServiceUnavailable, "idempotency_store_unavailable", "Idempotency store unavailable",
			"the request was not run: its key could not be checked ("+err.Error()+")", time.Second)
		return
	}
	switch b.State {
	case StateDone:
		replay(w, b.Response)
	case StateRunning:
		wait := m.cfg.RetryAfter
		if b.RetryIn > 0 {
			wait = min(wait, b.RetryIn)
		}
		writeProblem(w, http.StatusConflict, "idempotency_key_in_use", "A request with this key is in progress",
			"a request with this Idempotency-Key is in progress; retry after it finishes", wait)
	case StateMismatch:
		writeProblem(w, http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key reused",
			"this Idempotency-Key was used with a different request (method, path or body)", 0)
	default:
		m.run(w, r, Claim{Scope: scope, Key: key, Token: b.Token})
	}
}

// readBody reads the body whole (at most MaxBody) and puts it back. It
// reports tooLarge for a body over MaxBody (or over a limit a handler
// before it set with http.MaxBytesReader), and any other read error as it
// is.
func (m *Middleware) readBody(r *http.Request) (body []byte, tooLarge bool, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, false, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, m.cfg.MaxBody+1))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, true, errors.New("the request body is larger than " + strconv.FormatInt(mb.Limit, 10) + " bytes")
		}
		return nil, false, errors.New("the request body could not be read: " + err.Error())
	}
	if int64(len(body)) > m.cfg.MaxBody {
		return nil, true, errors.New("the request body is larger than " + strconv.FormatInt(m.cfg.MaxBody, 10) + " bytes")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, false, nil
}

// run runs the handler under the claim, stores what it answered, and
// answers.
func (m *Middleware) run(w http.ResponseWriter, r *http.Request, c Claim) {
	leaseEnd := time.Now().Add(m.cfg.Lease)
	ctx, cancel := context.WithDeadline(WithClaim(r.Context(), c), leaseEnd)
	defer cancel()
	rec := &recorder{header: make(http.Header)}
	// A panic passes through: the key stays locked until the lease runs
	// out, as when the process dies.
	m.next.ServeHTTP(rec, r.WithContext(ctx))
	resp := rec.response()
	// The side effect may have happened: store it even if the client left.
	sctx := context.WithoutCancel(r.Context())
	if !m.cfg.Keep(resp.Status) {
		if err := m.cfg.Store.Release(sctx, c.Scope, c.Key, c.Token); err != nil {
			m.cfg.Logger.LogAttrs(sctx, slog.LevelWarn, "idempotency: store failed at release", slog.String("key", c.Key), slog.Any("err", err))
		}
		replay(w, resp)
		return
	}
	stored := resp
	if len(resp.Body) > m.cfg.MaxResponse {
		stored = problem(http.StatusInternalServerError, "idempotency_response_too_large", "Response too large to replay",
			"the original response (status "+strconv.Itoa(resp.Status)+") was larger than the store keeps; the request ran once", 0)
	}
	err := Complete(sctx, m.cfg.Store, c, stored, earlier(leaseEnd, time.Now().Add(m.cfg.StoreTimeout)))
	switch {
	case err == nil:
		replay(w, resp)
	case errors.Is(err, ErrLeaseLost):
		m.cfg.Logger.LogAttrs(sctx, slog.LevelWarn, "idempotency: lease lost before the response was stored", slog.String("key", c.Key))
		writeProblem(w, http.StatusInternalServerError, "idempotency_lease_lost", "Lease lost",
			"the request ran, but its lease ran out and another request took the key over; its outcome is that request's", 0)
	default:
		m.cfg.Logger.LogAttrs(sctx, slog.LevelError, "idempotency: response not stored", slog.String("key", c.Key), slog.Any("err", err))
		writeProblem(w, http.StatusInternalServerError, "idempotency_outcome_not_stored", "Outcome not stored",
			"the request ran, but its response could not be stored ("+err.Error()+"); the key stays locked until its lease runs out, after which a retry runs the request again", 0)
	}
}

// Complete stores resp as the outcome of the key c holds, trying again
// while the store fails until deadline (waiting 20 ms, doubling to 500 ms,
// between tries, each wait jittered down by up to half so that a fleet's
// middlewares do not retry in step: a store that restarts, or a pool that
// lost its connections, is back within moments). It returns nil once stored,
// ErrLeaseLost at once, or the store's last error. Middleware and Do call
// it; so do other front ends (the gRPC interceptor).
func Complete(ctx context.Context, s Store, c Claim, resp *Response, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	wait := 20 * time.Millisecond
	for {
		err := s.Complete(ctx, c.Scope, c.Key, c.Token, resp)
		if err == nil || errors.Is(err, ErrLeaseLost) {
			return err
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// Fingerprint returns the fingerprint of a request: a SHA-256 of its
// method, its request URI (path and query) and its body. Two requests
// under one key must have the same fingerprint, or the second gets 422.
func Fingerprint(method, uri string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(uri))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// recorder buffers a handler's response.
type recorder struct {
	header http.Header
	status int
	sent   http.Header // the headers when the status was written
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 && status >= 200 {
		r.status, r.sent = status, r.header.Clone()
		for k := range r.sent {
			if strings.HasPrefix(k, http.TrailerPrefix) {
				delete(r.sent, k)
			}
		}
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

// response is what the handler sent: the headers as they were when the
// status was written, the body, and the trailer as net/http would send
// it — the fields declared in the Trailer header and those set under
// http.TrailerPrefix, with their values when the handler returned.
func (r *recorder) response() *Response {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	var trailer http.Header
	add := func(k string, v []string) {
		if len(v) > 0 {
			if trailer == nil {
				trailer = make(http.Header)
			}
			trailer[http.CanonicalHeaderKey(k)] = slices.Clone(v)
		}
	}
	for _, k := range declaredTrailers(r.sent) {
		add(k, r.header[k])
	}
	for k, v := range r.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			add(name, v)
		}
	}
	return &Response{Status: r.status, Header: r.sent, Body: r.body.Bytes(), Trailer: trailer}
}

// declaredTrailers returns the canonical names a header's Trailer field
// declares.
func declaredTrailers(h http.Header) []string {
	var names []string
	for _, v := range h.Values("Trailer") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				names = append(names, http.CanonicalHeaderKey(name))
			}
		}
	}
	return names
}

// replay writes a stored response: its headers, status and body, then
// its trailer, each field the way the original was sent (declared in
// the Trailer header, or under http.TrailerPrefix).
func replay(w http.ResponseWriter, resp *Response) {
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = slices.Clone(v)
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
	declared := declaredTrailers(resp.Header)
	for k, v := range resp.Trailer {
		if !slices.Contains(declared, k) {
			k = http.TrailerPrefix + k
		}
		h[k] = slices.Clone(v)
	}
}

// problemJSON is an RFC 9457 problem, with the code and message members
// recoil's Transport reads.
type problemJSON struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Status  int    `json:"status"`
	Detail  string `json:"detail"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ProblemType is the "type" of every problem the middleware writes.
const ProblemType = "https://github.com/recoil-go/recoil/blob/main/docs/idempotency.md#errors"

func problem(status int, code, title, detail string, retryAfter time.Duration) *Response {
	b, _ := jsonMarshal(problemJSON{ProblemType, title, status, detail, code, detail})
	h := http.Header{"Content-Type": {"application/problem+json"}}
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(max(int(math.Ceil(retryAfter.Seconds())), 1)))
	}
	return &Response{Status: status, Header: h, Body: b}
}

func writeProblem(w http.ResponseWriter, status int, code, title, detail string, retryAfter time.Duration) {
	replay(w, problem(status, code, title, detail, retryAfter))
}
