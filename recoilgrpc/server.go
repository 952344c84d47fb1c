package recoilgrpc

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// DefaultPushback is the wait a Server tells a shed first attempt to take
// before its retry, when Server.Pushback is zero.
const DefaultPushback = time.Second

// Server holds the server side of the hop protocol for gRPC, as
// interceptors: Unary and Stream, for grpc.ChainUnaryInterceptor and
// grpc.ChainStreamInterceptor. For every call it reads the caller's retry
// budget, remaining deadline and attempt number from the metadata (package
// hop; the attempt number from grpc-previous-rpc-attempts when
// recoil-attempt is absent) into the handler's context — the deadline less
// Margin, and a hop.Account holding the budget — so a Client, a
// recoilhttp.Transport or recoil.Do inside the handler spends from the same
// account with no code from the user. It reports the retries spent at and
// below this hop in the trailer (recoil-retries-spent), and counts attempt
// numbers in a histogram.
//
// Over its concurrency limit it sheds retries first: a retry is refused
// while MaxConcurrent-RetryReserve calls are in flight, a first attempt
// only at MaxConcurrent. A refused retry is told not to come back (status
// UNAVAILABLE, grpc-retry-pushback-ms: -1, which gRFC A6 clients obey, and
// recoil-retry: no); a refused first attempt is told when it may (a
// pushback of Pushback).
//
// The zero Server is usable: no limit, an own budget of 2. A Server is
// safe for concurrent use; do not change its fields after first use, and
// do not copy it.
type Server struct {
	// Margin is taken off the caller's remaining deadline, for the answer's
	// way back; zero means hop.DefaultDeadlineMargin.
	Margin time.Duration
	// Budget is this hop's own retry budget for the calls it serves, used
	// when a call carries none; zero means hop.DefaultHopBudget (2),
	// negative means zero (hop.Request.AccountBudget).
	Budget int
	// TrustIncoming takes a call's budget as it is. When false (the
	// default), an incoming budget can only lower this hop's own Budget,
	// and the protocol's incoming metadata is replaced by this hop's own
	// figures before the handler runs (the budget its account starts at,
	// the deadline less Margin, no attempt number), so a handler that
	// forwards its incoming metadata carries nothing the client sent: the
	// metadata comes from outside.
	TrustIncoming bool
	// MaxConcurrent is the number of calls in flight at which the server
	// refuses even first attempts; zero means no limit.
	MaxConcurrent int
	// RetryReserve is how many of the MaxConcurrent slots only first
	// attempts may take: a retry is refused once MaxConcurrent-RetryReserve
	// calls are in flight. Zero means a fifth of MaxConcurrent (at least 1);
	// negative means none, so retries and first attempts are refused alike.
	RetryReserve int
	// Pushback is the wait a refused first attempt is told to take before
	// its retry; zero means DefaultPushback, negative tells it not to retry.
	Pushback time.Duration
	// Limiter, if set, is asked for a slot for every call the checks above
	// let through, without waiting, and the call holds it until its
	// handler returns; a call it has no slot for is refused as over
	// MaxConcurrent. A retry is ranked as one for a limiter that orders by
	// priority (limit.Adaptive sheds retries first), and a limiter that
	// moves its limit is told each call's time and whether it ended in
	// overload (RESOURCE_EXHAUSTED, UNAVAILABLE, DEADLINE_EXCEEDED): with
	// limit.NewAdaptive the server finds its own concurrency, as Envoy's
	// adaptive concurrency filter does.
	Limiter recoil.Limiter
	// Shed, if set, is asked for every retry (attempt number above 1) with
	// the incoming context and the full method name; true refuses it.
	// SetShedding refuses every retry.
	Shed func(ctx context.Context, method string) bool

	hist     hop.Histogram
	shed     atomic.Bool
	inFlight atomic.Int64
}

// Histogram returns the counts of attempt numbers the server has seen.
func (s *Server) Histogram() *hop.Histogram { return &s.hist }

// SetShedding turns shedding of retries on or off: while on, every call
// whose attempt number is above 1 is refused before its handler runs, as
// over the limit. First attempts still pass: shed the traffic the failure
// made, not the traffic that was there.
func (s *Server) SetShedding(on bool) { s.shed.Store(on) }

// InFlight returns the number of calls being served now.
func (s *Server) InFlight() int { return int(s.inFlight.Load()) }

// Unary is a grpc.UnaryServerInterceptor.
func (s *Server) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, acct, end, err := s.begin(ctx, info.FullMethod)
	if err != nil {
		_ = grpc.SetTrailer(ctx, refusal(err))
		return nil, err
	}
	var herr error
	defer func() { end(herr) }()
	resp, herr := handler(ctx, req)
	if n := acct.Spent(); n > 0 {
		_ = grpc.SetTrailer(ctx, spentMD(n))
	}
	return resp, herr
}

// Stream is a grpc.StreamServerInterceptor.
func (s *Server) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, acct, end, err := s.begin(ss.Context(), info.FullMethod)
	if err != nil {
		ss.SetTrailer(refusal(err))
		return err
	}
	defer func() { end(err) }()
	err = handler(srv, &serverStream{ServerStream: ss, ctx: ctx})
	if n := acct.Spent(); n > 0 {
		ss.SetTrailer(spentMD(n))
	}
	return err
}

// serverStream gives the handler the context with the account.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *serverStream) Context() context.Context { return s.ctx }

// shedError is a refusal, with the pushback its trailer carries.
type shedError struct {
	st       *status.Status
	pushback string
	noRetry  bool
}

func (e *shedError) Error() string              { return e.st.Err().Error() }
func (e *shedError) GRPCStatus() *status.Status { return e.st }

// refusal is the trailer a refusal is sent with.
func refusal(err error) metadata.MD {
	e, ok := err.(*shedError)
	if !ok {
		return nil
	}
	md := metadata.MD{PushbackKey: []string{e.pushback}}
	if e.noRetry {
		hop.Response{NoRetry: true}.Write(hop.Metadata(md))
	}
	return md
}

func spentMD(n int) metadata.MD {
	md := make(metadata.MD, 1)
	hop.Response{Spent: n}.Write(hop.Metadata(md))
	return md
}

// begin admits a call or refuses it, and gives its handler a context with
// the account and the caller's deadline; end must be called when it is
// served.
func (s *Server) begin(ctx context.Context, method string) (context.Context, *hop.Account, func(error), error) {
	md, _ := metadata.FromIncomingContext(ctx)
	in, _ := hop.ParseRequest(hop.Metadata(md)) // malformed fields read as absent
	attempt := in.Attempt
	if attempt == 0 {
		attempt = previousAttempts(md[PreviousAttemptsKey]) + 1
	}
	s.hist.Observe(attempt)
	n := s.inFlight.Add(1)
	release := func(error) { s.inFlight.Add(-1) }
	if err := s.admit(ctx, method, attempt, int(n)); err != nil {
		release(nil)
		return ctx, nil, nil, err
	}
	if s.Limiter != nil {
		if !tryAcquire(s.Limiter, attempt > 1) {
			release(nil)
			return ctx, nil, nil, s.overLimit()
		}
		start := time.Now()
		release = func(err error) {
			s.inFlight.Add(-1)
			giveBack(s.Limiter, start, err)
		}
	}
	left, hasDeadline := in.TimeLeft(s.Margin)
	if hasDeadline && left <= 0 {
		release(status.Error(codes.Canceled, "")) // the caller's deadline, not this server's load: no sample
		return ctx, nil, nil, status.Error(codes.DeadlineExceeded, "recoilgrpc: the caller's deadline leaves no time to serve the call")
	}
	budget := in.AccountBudget(s.Budget, s.TrustIncoming)
	if !s.TrustIncoming {
		// What the client sent stops here: a handler that forwards its
		// incoming metadata carries this hop's figures on, never the
		// client's.
		md = md.Copy()
		hop.Request{Budget: budget, HasBudget: true, Deadline: left, HasDeadline: hasDeadline}.ReplaceMetadata(hop.Metadata(md))
		ctx = metadata.NewIncomingContext(ctx, md)
	}
	acct := hop.NewAccount(budget)
	ctx = hop.WithAccount(ctx, acct)
	if !hasDeadline {
		return ctx, acct, release, nil
	}
	ctx, cancel := context.WithTimeout(ctx, left)
	return ctx, acct, func(err error) { cancel(); release(err) }, nil
}

// tryAcquire takes a slot of l for a call, ranked as a retry when it is
// one, for a limiter that orders by priority.
func tryAcquire(l recoil.Limiter, retry bool) bool {
	if pl, ok := l.(recoil.PriorityLimiter); ok {
		return pl.TryAcquireAs(recoil.PriorityInteractive, retry)
	}
	return l.TryAcquire()
}

// giveBack returns a call's slot, with how long it was served and whether
// it ended in overload (RESOURCE_EXHAUSTED, UNAVAILABLE or
// DEADLINE_EXCEEDED) for a limiter that moves its limit by them.
func giveBack(l recoil.Limiter, start time.Time, err error) {
	if ll, ok := l.(recoil.LatencyLimiter); ok {
		now := time.Now()
		switch status.Code(err) {
		case codes.Canceled:
			l.Release() // the caller left: a sample of nothing
		case codes.ResourceExhausted, codes.Unavailable, codes.DeadlineExceeded:
			ll.ReleaseAt(now, now.Sub(start), true)
		default:
			ll.ReleaseAt(now, now.Sub(start), false)
		}
		return
	}
	l.Release()
}

// overLimit is the refusal of a call the Limiter has no slot for: as over
// MaxConcurrent, UNAVAILABLE with the server's pushback.
func (s *Server) overLimit() error {
	p := s.Pushback
	if p == 0 {
		p = DefaultPushback
	}
	ms := "-1"
	if p > 0 {
		ms = strconv.FormatInt(p.Milliseconds(), 10)
	}
	return &shedError{st: status.New(codes.Unavailable, "recoilgrpc: over the concurrency limit"), pushback: ms, noRetry: p < 0}
}

// admit refuses a retry when shedding or over the retry threshold, and any
// call at MaxConcurrent; n counts this call.
func (s *Server) admit(ctx context.Context, method string, attempt, n int) error {
	if attempt > 1 {
		shed := s.shed.Load() || (s.Shed != nil && s.Shed(ctx, method))
		if !shed && s.MaxConcurrent > 0 {
			shed = n > s.MaxConcurrent-s.reserve()
		}
		if shed {
			return &shedError{st: status.New(codes.Unavailable, "recoilgrpc: retry refused: the server is shedding retries"), pushback: "-1", noRetry: true}
		}
	}
	if s.MaxConcurrent > 0 && n > s.MaxConcurrent {
		return s.overLimit()
	}
	return nil
}

func (s *Server) reserve() int {
	switch {
	case s.RetryReserve < 0:
		return 0
	case s.RetryReserve > 0:
		return min(s.RetryReserve, s.MaxConcurrent)
	}
	return max(s.MaxConcurrent/5, 1)
}

// previousAttempts reads grpc-previous-rpc-attempts: one value of decimal
// digits; anything else (absent, malformed, several values) reads as 0.
// The value is clamped to hop.MaxAttempt.
func previousAttempts(v []string) int {
	if len(v) != 1 || v[0] == "" || len(v[0]) > 10 {
		return 0
	}
	n := 0
	for i := 0; i < len(v[0]); i++ {
		c := v[0][i]
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return min(n, hop.MaxAttempt-1)
}
