package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"time"
)

// Defaults for zero fields.
const (
	// DefaultLease is how long a key stays locked to the request that
	// holds it before another may take it over: a request whose process
	// died is run again after at most this long.
	DefaultLease = time.Minute
	// DefaultRetention is how long a finished key's response is kept and
	// replayed: a day, as Stripe keeps keys for at least 24 hours.
	DefaultRetention = 24 * time.Hour
)

// State is where a key stands when a request begins under it.
type State uint8

// The states Begin reports.
const (
	// StateNew: the key was free (never seen, released, or its holder's
	// lease ran out). The caller now holds it and runs the work.
	StateNew State = iota
	// StateRunning: another request holds the key and its lease has not
	// run out. Begun.RetryIn says when the lease ends.
	StateRunning
	// StateDone: the work under the key finished; Begun.Response is what
	// to replay.
	StateDone
	// StateMismatch: the key was first used with a different fingerprint
	// (another method, path or body): a client bug, never a retry.
	StateMismatch
)

var stateNames = [...]string{"new", "running", "done", "mismatch"}

// String returns "new", "running", "done" or "mismatch".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Response is what a store keeps for a finished key: the status, the
// headers and the body, replayed exactly on every repeat. It is a plain
// value; a store returns a fresh one the caller may keep.
type Response struct {
	// Status is the HTTP status code (idemgrpc keeps the gRPC code here).
	Status int
	// Header is the header the response was sent with.
	Header http.Header
	// Body is the whole body.
	Body []byte
	// Trailer is the trailer the response ended with (nil if none): the
	// fields the handler declared in a Trailer header, or set under
	// http.TrailerPrefix, with their values at the end of the body.
	Trailer http.Header
}

// Begun is what Begin found under a key.
type Begun struct {
	// State is where the key stood.
	State State
	// Token identifies the holder's lease when State is StateNew; pass it
	// to Complete or Release. A holder whose lease was taken over finds its
	// token refused (ErrLeaseLost), so two holders never both store.
	Token string
	// Response is the stored response when State is StateDone.
	Response *Response
	// RetryIn is, when State is StateRunning, how long until the
	// holder's lease runs out (zero if the store cannot say).
	RetryIn time.Duration
}

// Store keeps the state of each key: who holds it, under which lease, with
// what fingerprint, and the response once done. Keys are scoped: the same
// key in two scopes (two clients) is two keys, and nothing one scope does
// under a key shows in another. Scope, key and every byte of the response
// (header values need not be UTF-8) are kept exactly; the storetest
// package holds a store to all of this. Implementations must make
// Begin atomic — of concurrent Begin calls on a free key exactly one
// reports StateNew — and must be safe for concurrent use. This package's
// Memory, redisstore.Store and pgstore.Store implement it.
type Store interface {
	// Begin looks the key up and, if it is free, locks it for lease under a
	// new token with the fingerprint given. The lease is counted by the
	// store's clock.
	Begin(ctx context.Context, scope, key, fingerprint string, lease time.Duration) (Begun, error)
	// Complete stores resp as the key's outcome, if token still holds the
	// key; otherwise it returns ErrLeaseLost and stores nothing. Completing
	// again under the same token changes nothing and returns nil, so a
	// call whose reply was lost may be repeated.
	Complete(ctx context.Context, scope, key, token string, resp *Response) error
	// Release frees a key token holds without storing an outcome, so the
	// next request under it runs the work again: for work that failed
	// before its side effect. A token that no longer holds the key is
	// ErrLeaseLost.
	Release(ctx context.Context, scope, key, token string) error
}

// Reaper is a store that removes expired keys when asked: Memory and
// pgstore.Store. Reap removes the keys whose retention or lease has run
// out by now and returns how many it removed. (Redis expires its keys
// itself, so redisstore.Store needs no reaper.) Run one with RunReaper.
type Reaper interface {
	Reap(ctx context.Context, now time.Time) (int, error)
}

// Errors of the package.
var (
	// ErrLeaseLost: the token no longer holds the key — its lease ran out
	// and another request took the key over, or the key expired. Nothing
	// was stored.
	ErrLeaseLost = errors.New("idempotency: lease lost: another request took the key over")
	// ErrInProgress: Do found the key held by another call whose lease has
	// not run out. The *InProgressError says for how long.
	ErrInProgress = errors.New("idempotency: a call under this key is in progress")
	// ErrMismatch: the key was first used with another fingerprint.
	ErrMismatch = errors.New("idempotency: key reused with a different request")
)

// InProgressError is Do's error when the key is held by another call; it
// matches ErrInProgress. It is a plain value.
type InProgressError struct {
	// Key is the key.
	Key string
	// RetryIn is how long until the holder's lease runs out; zero if not
	// known.
	RetryIn time.Duration
}

// Error says which key, and for how long.
func (e *InProgressError) Error() string {
	return ErrInProgress.Error() + " (key " + e.Key + "; its lease runs out in " + e.RetryIn.String() + ")"
}

// Is reports whether target is ErrInProgress.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// Claim is the key a request or a Do call holds, which the middleware and
// Do put in the context of the work they run: a store that records
// recovery points (pgstore.Store.Phase) reads it there.
type Claim struct {
	// Scope and Key name the key, as Store.Begin was given them.
	Scope, Key string
	// Token is the lease's token Begin returned (Begun.Token).
	Token string
}

type claimKey struct{}

// WithClaim returns ctx carrying c.
func WithClaim(ctx context.Context, c Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// ClaimFrom returns the Claim ctx carries, if any.
func ClaimFrom(ctx context.Context) (Claim, bool) {
	c, ok := ctx.Value(claimKey{}).(Claim)
	return c, ok
}

// NewToken returns a random lease token (128 bits, hex), for stores.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// earlier returns the earlier of two instants.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
