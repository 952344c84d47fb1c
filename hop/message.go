package hop

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Request is what a request carries in the hop protocol. The zero Request
// carries nothing: it is what a peer that does not speak the protocol sends,
// and a hop that receives it behaves as an edge, with a budget of its own.
type Request struct {
	// Budget is the retry budget remaining for the call tree below the
	// sender (HeaderBudget), in [0, MaxBudget] when parsed. Meaningful only
	// if HasBudget.
	Budget int
	// HasBudget reports whether the request carries a budget.
	HasBudget bool
	// Deadline is how long the caller will still wait (HeaderDeadline),
	// whole milliseconds in [0, MaxDeadline] when parsed. Meaningful only if
	// HasDeadline.
	Deadline time.Duration
	// HasDeadline reports whether the request carries a deadline.
	HasDeadline bool
	// Attempt is the attempt number at the sending hop (HeaderAttempt):
	// 1 for a first attempt, 2 for the first retry, in [1, MaxAttempt] when
	// parsed. 0 means not carried.
	Attempt int
}

// ParseRequest reads a Request from request headers or metadata.
//
// An absent (or empty) header leaves its field unset, and is not an error. A
// malformed one is reported in a *[HeaderError], and its field is left unset
// as though the header were absent, so the hop falls back to what it does for
// a peer that does not speak the protocol; the other headers are still read.
// If several are malformed the error joins one *HeaderError for each.
//
// A numeric value must be ASCII decimal digits and nothing else (no sign,
// space, exponent, fraction or list; leading zeros are allowed, as in HTTP's
// Max-Forwards) and must fit in a signed 32-bit integer; a value within that
// but above its bound ([MaxBudget], [MaxDeadline], [MaxAttempt]) is clamped
// to the bound without error. An attempt number of 0 is out of range.
//
// The result may have come from anyone. A hop that does not trust its
// caller must not let the budget raise its own: it takes the smaller of the
// two (docs/hop-protocol.md, "Security").
func ParseRequest(g Getter) (Request, error) {
	var r Request
	var errs [3]error
	n := 0
	if v := g.Get(HeaderBudget); v != "" {
		b, err := parseUint(v, MaxBudget)
		if err != nil {
			errs[n] = &HeaderError{Header: HeaderBudget, Value: v, Err: err}
			n++
		} else {
			r.Budget, r.HasBudget = b, true
		}
	}
	if v := g.Get(HeaderDeadline); v != "" {
		ms, err := parseUint(v, int(MaxDeadline/time.Millisecond))
		if err != nil {
			errs[n] = &HeaderError{Header: HeaderDeadline, Value: v, Err: err}
			n++
		} else {
			r.Deadline, r.HasDeadline = time.Duration(ms)*time.Millisecond, true
		}
	}
	if v := g.Get(HeaderAttempt); v != "" {
		a, err := parseUint(v, MaxAttempt)
		if err == nil && a == 0 {
			err = ErrRange
		}
		if err != nil {
			errs[n] = &HeaderError{Header: HeaderAttempt, Value: v, Err: err}
			n++
		} else {
			r.Attempt = a
		}
	}
	return r, join(errs[:n])
}

// Write sets the headers for what r carries and leaves the others as they
// are: HeaderBudget if HasBudget, HeaderDeadline if HasDeadline and
// HeaderAttempt if Attempt > 0. Values are clamped to their bounds, a
// negative budget or deadline is written as 0, and the deadline is rounded
// down to whole milliseconds, so the receiver never believes it has more
// time than it does.
//
// A hop that forwards headers it received (a proxy) should delete the
// protocol's headers it does not set, or a stale value travels on.
func (r Request) Write(s Setter) {
	if r.HasBudget {
		s.Set(HeaderBudget, strconv.Itoa(clamp(r.Budget, MaxBudget)))
	}
	if r.HasDeadline {
		ms := r.Deadline / time.Millisecond
		s.Set(HeaderDeadline, strconv.FormatInt(int64(clamp(ms, MaxDeadline/time.Millisecond)), 10))
	}
	if r.Attempt > 0 {
		s.Set(HeaderAttempt, strconv.Itoa(min(r.Attempt, MaxAttempt)))
	}
}

// WriteHeader writes r into an HTTP header map (http.Header, whose
// canonical keys are the Header* constants) like Write, in two allocations:
// the values share one backing array and one string. A Transport that
// writes the headers on every attempt uses it.
func (r Request) WriteHeader(h map[string][]string) {
	var buf [64]byte
	b := buf[:0]
	var ends [3]int
	var keys [3]string
	n := 0
	if r.HasBudget {
		b = strconv.AppendInt(b, int64(clamp(r.Budget, MaxBudget)), 10)
		keys[n], ends[n] = HeaderBudget, len(b)
		n++
	}
	if r.HasDeadline {
		ms := r.Deadline / time.Millisecond
		b = strconv.AppendInt(b, int64(clamp(ms, MaxDeadline/time.Millisecond)), 10)
		keys[n], ends[n] = HeaderDeadline, len(b)
		n++
	}
	if r.Attempt > 0 {
		b = strconv.AppendInt(b, int64(min(r.Attempt, MaxAttempt)), 10)
		keys[n], ends[n] = HeaderAttempt, len(b)
		n++
	}
	if n == 0 {
		return
	}
	s := string(b)
	vals := make([]string, n)
	start := 0
	for i := range n {
		vals[i] = s[start:ends[i]]
		h[keys[i]] = vals[i : i+1 : i+1]
		start = ends[i]
	}
}

// TimeLeft returns how long the hop that received r may work on it: the
// caller's remaining deadline less margin (zero or less means
// DefaultDeadlineMargin), and whether r carries a deadline at all. A
// deadline that leaves zero or less means the hop must answer at once,
// without starting work (docs/hop-protocol.md, "Deadline propagation").
func (r Request) TimeLeft(margin time.Duration) (time.Duration, bool) {
	if !r.HasDeadline {
		return 0, false
	}
	if margin <= 0 {
		margin = DefaultDeadlineMargin
	}
	return r.Deadline - margin, true
}

// ReplaceHeader removes the protocol's request headers (HeaderBudget,
// HeaderDeadline, HeaderAttempt) from the HTTP header map h and writes r's
// instead (WriteHeader). A hop that does not trust its callers replaces
// what it received with its own figures, so that nothing a client sent
// travels on through a handler that forwards headers (a reverse proxy).
func (r Request) ReplaceHeader(h map[string][]string) {
	delete(h, HeaderBudget)
	delete(h, HeaderDeadline)
	delete(h, HeaderAttempt)
	r.WriteHeader(h)
}

// ReplaceMetadata is ReplaceHeader for gRPC metadata, whose keys are lower
// case.
func (r Request) ReplaceMetadata(m Metadata) {
	for _, k := range [...]string{HeaderBudget, HeaderDeadline, HeaderAttempt} {
		delete(m, lower(k))
	}
	r.Write(m)
}

// Response is what a response carries in the hop protocol. The zero Response
// carries nothing: no retries were spent below, and retrying is not refused.
type Response struct {
	// Spent is the number of retries made at and below the responding hop
	// (HeaderSpent), in [0, MaxBudget] when parsed.
	Spent int
	// NoRetry reports that the server asks not to be retried
	// (HeaderRetry: no), because it is shedding load.
	NoRetry bool
}

// ParseResponse reads a Response from response headers or metadata (for
// gRPC, usually the trailer).
//
// As with [ParseRequest], an absent header is not an error, and a malformed
// one is reported in a *[HeaderError] and treated as absent: Spent 0, or
// NoRetry false. HeaderSpent follows the numeric rules of ParseRequest and is
// clamped to [MaxBudget]. HeaderRetry must be "no" in any case; any other
// value is malformed.
func ParseResponse(g Getter) (Response, error) {
	var r Response
	var errs [2]error
	n := 0
	if v := g.Get(HeaderSpent); v != "" {
		s, err := parseUint(v, MaxBudget)
		if err != nil {
			errs[n] = &HeaderError{Header: HeaderSpent, Value: v, Err: err}
			n++
		} else {
			r.Spent = s
		}
	}
	if v := g.Get(HeaderRetry); v != "" {
		if strings.EqualFold(v, "no") {
			r.NoRetry = true
		} else {
			errs[n] = &HeaderError{Header: HeaderRetry, Value: v, Err: ErrSyntax}
			n++
		}
	}
	return r, join(errs[:n])
}

// Write sets HeaderSpent if Spent > 0 (clamped to MaxBudget) and
// HeaderRetry to "no" if NoRetry, and leaves other headers as they are.
func (r Response) Write(s Setter) {
	if r.Spent > 0 {
		s.Set(HeaderSpent, strconv.Itoa(min(r.Spent, MaxBudget)))
	}
	if r.NoRetry {
		s.Set(HeaderRetry, "no")
	}
}

// clamp returns v limited to [0, hi].
func clamp[T int | time.Duration](v, hi T) T {
	return min(max(v, 0), hi)
}

func join(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// DefaultHopBudget is a hop's own retry budget for the requests it serves
// when its configuration leaves it zero: 2, the retries of recoil's default
// policy (3 attempts).
const DefaultHopBudget = 2

// AccountBudget is the budget a hop's account for the request r starts at
// ([NewAccount]): the request's own budget when it carries one that the hop
// trusts, or one lower than the hop's own; otherwise own, the hop's own
// budget (zero means DefaultHopBudget, negative means zero). An untrusted
// caller may lower the budget, never raise it (docs/hop-protocol.md,
// "Security"). The HTTP Middleware and the gRPC Server interceptors open
// their accounts with it.
func (r Request) AccountBudget(own int, trust bool) int {
	if own == 0 {
		own = DefaultHopBudget
	}
	own = max(own, 0)
	if r.HasBudget && (trust || r.Budget < own) {
		return r.Budget
	}
	return own
}
