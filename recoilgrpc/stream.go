package recoilgrpc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// Stream is a grpc.StreamClientInterceptor: it opens the stream under the
// Client's policy and retries it until the first response message arrives
// (or the stream ends cleanly before one), as gRFC A6 does. Until then
// every message sent is kept, up to MaxReplayBytes, and replayed in order
// on each new attempt, followed by CloseSend if the caller closed; after
// the first message the stream is committed, and its errors reach the
// caller as they are.
//
// Each attempt goes through recoil's one retry loop like a unary call's —
// the budget admits the call, the breaker and the limiter are asked before
// the first attempt opens — so the loop runs in a goroutine of the stream's
// own, which hands each attempt to the caller's RecvMsg and ends when the
// first message arrives, when the call gives up, or when the caller's
// context is done. As with any grpc.ClientStream, the caller must cancel
// the context or call RecvMsg until it returns an error, or the stream's
// resources, that goroutine among them, are never released.
//
// AttemptTimeout and Timeout bound each attempt until its first message,
// not the stream after it. Header and Trailer report the current
// attempt's; a retry may bring different ones.
//
// Under a policy with a Fallback each attempt opens on its target's
// Channel (see Channel), with the messages sent so far replayed there. A
// stream is not raced: under a policy with a Hedge (a service config's
// hedgingPolicy) it runs one attempt at a time, retried as the policy
// classifies, as if the policy had no Hedge; unary calls through the same
// Client are hedged.
func (c *Client) Stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if routed(ctx) {
		// An attempt another Client sent to this channel: that Client
		// retries it, not this one.
		return streamer(ctx, desc, cc, method, opts...)
	}
	p := c.policy()
	c.checkStacked(ctx, cc, method)
	s := &stream{c: c, desc: desc, cc: cc, method: method, streamer: streamer, opts: opts,
		limit: c.MaxReplayBytes, changed: make(chan struct{})}
	if s.limit <= 0 {
		s.limit = DefaultMaxReplayBytes
	}
	s.ctx, s.acct = ctx, c.account(ctx, p)
	go s.loop(p)
	for {
		s.mu.Lock()
		a, done, final, ch := s.att, s.done, s.final, s.changed
		s.mu.Unlock()
		switch {
		case a != nil:
			return s, nil
		case done:
			return nil, callError(s.ctx, final)
		}
		<-ch
	}
}

// MayHedge reports that a stream may not be raced: the loop runs its
// attempts one at a time under any policy (recoil.HedgeGuard).
func (s *stream) MayHedge() bool { return false }

// stream is one client stream: the driver of its attempts for recoil.Drive
// (run by loop) and the grpc.ClientStream the caller holds.
type stream struct {
	c        *Client
	ctx      context.Context // the caller's
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption
	acct     *hop.Account
	limit    int
	to       *Channel // the attempt's target, under a Fallback; nil for the call's own connection

	mu        sync.Mutex
	att       *attempt      // the open attempt; nil between attempts
	changed   chan struct{} // closed and replaced when att or done changes
	done      bool          // the loop is over: final is how it ended
	final     error
	committed bool   // a message arrived: no more retries
	buf       []any  // messages sent, for replay
	size      int    // their size in bytes
	noReplay  string // why the stream cannot be replayed, if it cannot
	closed    bool   // the caller called CloseSend
	reported  bool   // the committed stream's spent count was read
}

// attempt is one attempt's stream.
type attempt struct {
	cs      grpc.ClientStream
	cancel  context.CancelFunc
	outcome chan error // the caller's RecvMsg result; one is ever sent
	broken  bool       // a send failed: the stream is over, RecvMsg says how
}

// changedLocked wakes everyone waiting for att or done to change.
func (s *stream) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// loop runs the retry loop until the first message arrives or the call
// gives up.
func (s *stream) loop(p *recoil.Policy) {
	_, err := recoil.Drive(s.ctx, p, s)
	s.mu.Lock()
	s.done, s.final = true, err
	if err == nil {
		s.committed, s.buf = true, nil
	} else if s.att != nil {
		s.att.cancel()
		s.att = nil
	}
	s.changedLocked()
	s.mu.Unlock()
}

// Attempt opens attempt n, replays what was sent, and waits for the
// caller's RecvMsg to say how it went, or for deadline, or for ctx.
func (s *stream) Attempt(ctx context.Context, n int, deadline time.Time) (struct{}, error) {
	actx, cancel := context.WithCancel(s.ctx)
	actx = s.c.outgoing(actx, s.acct, n, time.Time{}) // the cut-off is not the stream's deadline
	var (
		cs  grpc.ClientStream
		err error
	)
	if s.to == nil {
		cs, err = s.streamer(actx, s.desc, s.cc, s.method, s.opts...)
	} else {
		var (
			conn grpc.ClientConnInterface
			opts []grpc.CallOption
		)
		actx, conn, opts = s.to.prepare(actx, s.cc, s.opts, 0)
		if conn == nil {
			cs, err = s.streamer(actx, s.desc, s.cc, s.method, opts...)
		} else {
			if cc, ok := conn.(*grpc.ClientConn); ok {
				s.c.checkStacked(s.ctx, cc, s.method)
			}
			cs, err = conn.NewStream(actx, s.desc, s.method, opts...)
		}
	}
	if err != nil {
		cancel()
		return struct{}{}, err
	}
	a := &attempt{cs: cs, cancel: cancel, outcome: make(chan error, 1)}
	s.mu.Lock()
	for _, m := range s.buf {
		if cs.SendMsg(m) != nil { // io.EOF: the stream is over, RecvMsg says how
			a.broken = true
			break
		}
	}
	if s.closed && !a.broken {
		_ = cs.CloseSend()
	}
	s.att = a
	s.changedLocked()
	s.mu.Unlock()

	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	cut, answered := false, false
	select {
	case err = <-a.outcome:
		answered = true
	case <-timeout:
		cut = true
		err = status.Error(codes.DeadlineExceeded, "recoilgrpc: no response message before the attempt's deadline")
	case <-ctx.Done():
		err = status.FromContextError(ctx.Err()).Err()
	}
	if err == nil || err == io.EOF {
		return struct{}{}, nil // committed: the attempt stays open for the caller
	}
	// A message that raced the cut-off is dropped: the attempt counts as
	// the timeout it was.
	cancel()
	s.mu.Lock()
	s.att = nil
	s.changedLocked()
	s.mu.Unlock()
	end := &attemptEnd{err: err, cut: cut}
	if answered {
		// RecvMsg returned an error: the trailer is complete (reading it
		// before then races with its arrival).
		end.trailer = cs.Trailer()
	}
	return struct{}{}, end
}

// AttemptTo opens attempt n on t's Channel, as Attempt does on the call's
// own connection.
func (s *stream) AttemptTo(ctx context.Context, n int, t *recoil.Target, deadline time.Time) (struct{}, error) {
	s.to = channelOf(t) // attempts run one at a time: the loop's goroutine alone reads it
	return s.Attempt(ctx, n, deadline)
}

// attemptEnd carries a failed attempt's error and trailer to Verdict.
type attemptEnd struct {
	err     error
	trailer metadata.MD
	cut     bool
}

func (e *attemptEnd) Error() string { return e.err.Error() }
func (e *attemptEnd) Unwrap() error { return e.err }

// RequestBudget returns the stream's hop account, if any.
func (s *stream) RequestBudget() recoil.Budget { return requestBudget(s.acct) }

// Verdict reads a failed attempt's trailer and classifies it once: the
// policy's Classify, then the package's (Classify), then the built-in
// rules, and last the guard of a stream whose messages cannot be replayed.
func (s *stream) Verdict(p *recoil.Policy, _ struct{}, err error) (recoil.Verdict, error) {
	var (
		end *attemptEnd
		v   recoil.Verdict
		f   error
	)
	switch {
	case err == nil:
		return recoil.Verdict{}, nil
	case !errors.As(err, &end):
		v, f = failure(err, nil, hop.Response{}, false, s.c.Retryable) // the stream did not open
	default:
		back, _ := hop.ParseResponse(hop.Metadata(end.trailer)) // malformed fields read as absent
		if s.acct != nil {
			s.acct.Below(back.Spent)
		}
		v, f = failure(end.err, end.trailer, back, end.cut, s.c.Retryable)
	}
	return s.guard(p.Verdict(f, v)), f
}

// guard makes a retryable verdict permanent when the messages sent cannot
// be replayed.
func (s *stream) guard(v recoil.Verdict) recoil.Verdict {
	s.mu.Lock()
	why := s.noReplay
	s.mu.Unlock()
	if why == "" || !v.Class.Retryable() {
		return v
	}
	v.Class, v.Code = recoil.ClassPermanent, CodeNotReplayable
	v.Reason += "; not retried: " + why
	return v
}

// Discard does nothing: a failed attempt was cancelled when it ended.
func (s *stream) Discard(struct{}) {}

// current waits for an open attempt, or for the loop to be over.
func (s *stream) current() (a *attempt, committed bool, final error) {
	for {
		s.mu.Lock()
		a, committed, done, final, ch := s.att, s.committed, s.done, s.final, s.changed
		s.mu.Unlock()
		switch {
		case committed:
			return a, true, nil
		case a != nil:
			return a, false, nil
		case done:
			return nil, false, callError(s.ctx, final)
		}
		<-ch
	}
}

// RecvMsg receives a message. Before the first one it hands each
// attempt's outcome to the retry loop, and retries as the loop says.
func (s *stream) RecvMsg(m any) error {
	for {
		a, committed, final := s.current()
		if final != nil {
			return final
		}
		err := a.cs.RecvMsg(m)
		if committed {
			if err != nil {
				s.report(a)
			}
			return err
		}
		select {
		case a.outcome <- err:
		default: // the loop already ended this attempt
		}
		// The loop decides: a success commits the stream (the caller goes
		// on once it is recorded); after a failure, or a message that came
		// as the attempt ran out of time, the next turn finds a new attempt
		// or the final error.
		if s.waitPast(a) && (err == nil || err == io.EOF) {
			if err == io.EOF {
				s.report(a)
			}
			return err
		}
	}
}

// waitPast waits until the loop is past attempt a, and reports whether it
// committed the stream to it.
func (s *stream) waitPast(a *attempt) bool {
	for {
		s.mu.Lock()
		cur, done, committed, ch := s.att, s.done, s.committed, s.changed
		s.mu.Unlock()
		if committed || cur != a || done {
			return committed
		}
		<-ch
	}
}

// report subtracts the retries the committed stream's trailer reports as
// spent below, once, and releases the attempt's context.
func (s *stream) report(a *attempt) {
	s.mu.Lock()
	first := !s.reported
	s.reported = true
	s.mu.Unlock()
	if !first {
		return
	}
	if s.acct != nil {
		back, _ := hop.ParseResponse(hop.Metadata(a.cs.Trailer()))
		s.acct.Below(back.Spent)
	}
	a.cancel()
}

// SendMsg sends m on the current attempt and, until the stream is
// committed, keeps it for replay.
func (s *stream) SendMsg(m any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.committed {
		return s.att.cs.SendMsg(m)
	}
	if s.done {
		return io.EOF // the call is over: RecvMsg says how
	}
	if s.noReplay == "" {
		n, ok := size(m)
		switch {
		case !ok:
			s.noReplay, s.buf = "a sent message's size is unknown (neither a proto.Message nor a []byte)", nil
		case s.size+n > s.limit:
			s.noReplay, s.buf = "the messages sent exceed the replay buffer ("+strconv.Itoa(s.limit)+" bytes)", nil
		default:
			s.buf = append(s.buf, m)
			s.size += n
		}
	}
	a := s.att
	if a == nil || a.broken {
		if s.noReplay != "" {
			return io.EOF // no retry can carry it: RecvMsg says how the call ended
		}
		return nil // the next attempt replays it
	}
	err := a.cs.SendMsg(m)
	switch {
	case err == io.EOF && s.noReplay == "":
		a.broken = true
		return nil // the attempt is over; RecvMsg retries it with m replayed
	case err != nil && err != io.EOF:
		s.noReplay = "a send failed: " + err.Error()
	}
	return err
}

// size is the encoded size of a message the stream keeps for replay.
func size(m any) (int, bool) {
	switch m := m.(type) {
	case proto.Message:
		return proto.Size(m), true
	case []byte:
		return len(m), true
	}
	return 0, false
}

// CloseSend closes the sending side, on every later attempt too.
func (s *stream) CloseSend() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.att == nil || s.att.broken {
		return nil
	}
	return s.att.cs.CloseSend()
}

// Header returns the current attempt's header metadata, waiting for one to
// open.
func (s *stream) Header() (metadata.MD, error) {
	a, _, final := s.current()
	if final != nil {
		return nil, final
	}
	return a.cs.Header()
}

// Trailer returns the current attempt's trailer metadata; nil when none
// is open.
func (s *stream) Trailer() metadata.MD {
	s.mu.Lock()
	a := s.att
	s.mu.Unlock()
	if a == nil {
		return nil
	}
	return a.cs.Trailer()
}

// Context returns the caller's context.
func (s *stream) Context() context.Context { return s.ctx }
