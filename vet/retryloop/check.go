package retryloop

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// funcCtx is the function a body belongs to.
type funcCtx struct {
	fn    *types.Func    // nil for a function literal
	ftype *ast.FuncType  // its signature
	decl  *ast.BlockStmt // the enclosing declaration's body, for assignments
	own   *ast.BlockStmt // its own body
	// outer is, for a function literal, the declared function it is in:
	// the parameters it captures are that function's.
	outer *types.Func
}

// durFn is the function whose parameters a wait's duration may be made
// of: the function itself, or the one a literal is declared in.
func (fc funcCtx) durFn() *types.Func {
	if fc.fn != nil {
		return fc.fn
	}
	return fc.outer
}

type loopCall struct {
	call *ast.CallExpr
	w    waitInfo
}

func isNilNode(n ast.Node) bool {
	switch n := n.(type) {
	case ast.Stmt:
		return n == nil
	case ast.Expr:
		return n == nil
	}
	return false
}

func (c *checker) callName(call *ast.CallExpr) string {
	fn := c.callee(call)
	if fn == nil {
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
			return id.Name // a local variable given a literal or a method value
		}
		return "a remote call"
	}
	if r := recvNamed(fn); r != nil {
		return r.Obj().Name() + "." + fn.Name()
	}
	if fn.Pkg() != nil && fn.Pkg() != c.pass.Pkg {
		return fn.Pkg().Name() + "." + fn.Name()
	}
	return fn.Name()
}

// syncLits returns the function literals under n that are called where
// they stand: func() { … }().
func syncLits(n ast.Node) map[*ast.FuncLit]bool {
	m := map[*ast.FuncLit]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
				m[lit] = true
			}
		}
		return true
	})
	return m
}

type remoteAt struct {
	kind int
	call *ast.CallExpr
}

// remoteIn returns the first remote call inside n (goroutines excluded).
func (c *checker) remoteIn(n ast.Node) *remoteAt {
	var r *remoteAt
	ast.Inspect(n, func(n ast.Node) bool {
		if r != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt:
			return false
		case *ast.CallExpr:
			if k := c.remoteKind(n); k != remoteNone {
				r = &remoteAt{k, n}
			}
		}
		return true
	})
	return r
}

// loopScan is what a loop holds: its remote call, its waits, whether it
// reads Retry-After, whether it hands its work to recoil.
type loopScan struct {
	body       *ast.BlockStmt
	remote     int
	remoteCall *ast.CallExpr
	waits      []loopCall
	readsRA    bool
	raReads    []ast.Node // where it reads Retry-After
	delegated  bool
}

// verdict says on which outcomes a loop goes round.
type verdict struct {
	retried         map[int]tri // by HTTP status
	errTri          tri         // on a transport (or any) error
	anyFailure      bool        // it goes round on some failure
	leavesOnSuccess bool        // and leaves on some success
}

// loop checks one for or range statement.
func (c *checker) loop(s ast.Stmt, label *ast.Ident, fc funcCtx) {
	sc := c.scanLoop(s, fc)
	if sc.delegated {
		return
	}
	if len(sc.waits) == 0 {
		c.hotRetry(s, label, fc, sc)
		return
	}
	if c.pollsOwnServer(s, fc) {
		return
	}
	c.resolveByCallers(sc.waits, fc.durFn())
	sc.remote = typedKind(c, sc)
	w, v := c.walkLoop(s, label, fc, sc, nil)
	if sc.remote == remoteNone && (!v.anyFailure || w.attemptCall == nil && ownPause(sc.waits)) {
		w, v = c.refocus(s, label, fc, sc, w, v)
	}
	if sc.remote == remoteNone && (c.isLocalOp(w.attemptCall, fc.decl) || c.servesConn(w.attemptCall, fc) || c.offlineWork(w.attemptCall) ||
		w.attemptCall != nil && c.acceptCall(w.attemptCall)) {
		// os.RemoveAll retried on EBUSY, a server's read of its client's
		// connection, a storage engine's commit in a package that cannot
		// reach the network, a listener's Accept retried on a temporary
		// error: nothing shared to synchronise on, no storm to spread.
		return
	}
	if v.anyFailure && w.attemptCall != nil && c.neverSucceeds(c.callee(w.attemptCall)) {
		v.leavesOnSuccess = true // a session run until it fails: no success goes round
	}
	if !v.anyFailure || !v.leavesOnSuccess {
		// It goes round on every success: polling, pagination, a watch,
		// a reconnect loop. A wait it reaches only on failure is still a
		// retry's wait — unless the loop accepts connections (a server
		// pausing on accept errors has no dependency to synchronise on),
		// or ranges over elements (a failed message handed back, and the
		// next one taken: nothing is tried again).
		if !c.accepts(s) && !c.overElements(s) && !c.consumes(w.attemptCall, s) {
			c.pollFailures(s, fc, sc, w, v)
		}
		return
	}
	if sc.remote == remoteHTTP && reauthOnly(v) {
		// Re-sent only on a 401, nothing else: a request re-signed with
		// credentials refreshed meanwhile, not a retry of a failure.
		return
	}
	if !c.bounded(s, w, sc.remote) {
		if w.uncounted {
			c.reportUncounted(s, fc)
		} else {
			c.reportUnbounded(s, fc)
		}
	}
	if c.deviceFlowPoll(sc.body) {
		return // the server's "not yet", at the server's interval
	}
	c.reportNoJitter(sc.waits)
	if sc.remote == remoteNone {
		return
	}
	if c.redials(sc.body) {
		// a connection opened again: what its way there answered is not
		// the loop's to classify, nor its wait the server's to set
		return
	}
	c.reportUnclassified(s, sc, v)
	c.reportRetryAfter(sc, v)
}

// pollFailures judges the waits of a loop that goes round on every
// success (a poll, a watch, a reconnect loop) that its failures reach: a
// retry's waits, and what the poll retries through them.
func (c *checker) pollFailures(s ast.Stmt, fc funcCtx, sc loopScan, w *loopWalker, v verdict) {
	fw := mergeWaits(w.failureWaits(sc), c.failedSetWaits(s, sc)) // a batch retried by its failures
	if rw := c.reopenedStreamWaits(sc); len(rw) > 0 {
		fw, v.anyFailure = rw, true // a stream's end is its failure
	} else if ew := c.sessionEndWaits(sc, w.attemptCall); len(ew) > 0 {
		fw = mergeWaits(fw, ew) // a connection's close is its failure
	}
	if sc.remote != remoteNone || w.attemptCall != nil {
		// a reset backoff paces a call whose failure it counts
		fw = append(fw, c.resetBackoffWaits(sc, fw)...)
	}
	c.reportNoJitter(append(fw, c.resignalWaits(sc)...))
	if !c.redials(sc.body) {
		c.pollRetryAfter(w, sc, fw)
		c.pollUnclassified(s, w, sc, fw)
	}
	if c.failsForever(s, w, v, fw, sc.remote) {
		c.reportUnbounded(s, fc)
	}
}

// scanLoop collects what the loop's header and body hold. A function
// literal called at once is part of the body; one passed on (a callback,
// recoil.Do's op) is looked at only for its remote calls.
func (c *checker) scanLoop(s ast.Stmt, fc funcCtx) loopScan {
	var sc loopScan
	var scan []ast.Node
	switch s := s.(type) {
	case *ast.ForStmt:
		sc.body = s.Body
		for _, n := range []ast.Node{s.Init, s.Cond, s.Post} {
			if n != nil && !isNilNode(n) {
				scan = append(scan, n)
			}
		}
	case *ast.RangeStmt:
		sc.body = s.Body
		if call, ok := ast.Unparen(s.X).(*ast.CallExpr); ok {
			// for range retries(ctx) { … }: an iterator that waits
			// between rounds paces the loop.
			if w, ok := c.wait(call, fc.decl, fc.durFn()); ok {
				sc.waits = append(sc.waits, loopCall{call, w})
			}
		}
	}
	scan = append(scan, sc.body)
	polled := map[ast.Expr]bool{} // received in a select with a default: never waited on
	for _, n := range scan {
		sync := syncLits(n)
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectStmt:
				nonBlockingRecvs(n, polled)
			case *ast.GoStmt:
				if lw, ok := c.sleeperWait(n, sc.body, fc); ok {
					sc.waits = append(sc.waits, lw)
				}
				return false
			case *ast.FuncLit:
				if !sync[n] {
					if r := c.remoteIn(n); r != nil && sc.remote == remoteNone {
						sc.remote, sc.remoteCall = r.kind, r.call
					}
					return false
				}
			case *ast.BasicLit:
				if serverWaitLit(n) {
					sc.readsRA = true
					sc.raReads = append(sc.raReads, n)
				}
			case *ast.CallExpr:
				c.scanCall(n, fc, &sc)
				if sc.remote == remoteNone {
					sc.remote, sc.remoteCall = c.handedRemote(n)
				}
			case *ast.UnaryExpr:
				if polled[n] {
					break // case <-ticker.C: … default: a look, not a wait
				}
				if lw, ok := c.tickerWait(n, s, fc); ok {
					sc.waits = append(sc.waits, lw)
				}
			}
			return true
		})
	}
	return sc
}

func (c *checker) scanCall(n *ast.CallExpr, fc funcCtx, sc *loopScan) {
	if c.isRecoilCall(n) {
		sc.delegated = true
	}
	if c.readsRetryAfter(n) {
		sc.readsRA = true
		sc.raReads = append(sc.raReads, n)
	}
	k := c.remoteKind(n)
	if k == remoteNone && c.callee(n) == nil {
		if k = c.valueRemote(n, fc.decl); k == remoteNone {
			k = c.responseParam(n)
		}
	}
	if k != remoteNone && (sc.remote == remoteNone || (k == remoteHTTP && sc.remote != remoteHTTP)) {
		sc.remote, sc.remoteCall = k, n
	}
	if w, ok := c.wait(n, fc.decl, fc.durFn()); ok {
		sc.waits = append(sc.waits, loopCall{n, w})
	}
}

// handedRemote finds a remote call in a function of this package handed
// to call as a value (timed(c.checkIn), run(ping)): the helper calls it,
// as it would a literal passed on, so its remote call is the loop's.
func (c *checker) handedRemote(call *ast.CallExpr) (int, *ast.CallExpr) {
	for _, a := range call.Args {
		var id *ast.Ident
		switch a := ast.Unparen(a).(type) {
		case *ast.Ident:
			id = a
		case *ast.SelectorExpr:
			id = a.Sel
		}
		fn, _ := c.info.Uses[id].(*types.Func)
		if d := c.decls[fn]; d != nil && d.Body != nil {
			if r := c.remoteIn(d.Body); r != nil {
				return r.kind, r.call
			}
		}
	}
	return remoteNone, nil
}

// judge evaluates the loop's go-round paths against every outcome of a
// remote call of kind k.
func (w *loopWalker) judge(k int) verdict {
	v := verdict{retried: map[int]tri{}}
	for _, o := range outcomes(k) {
		r := w.retries(k, o)
		if o.success() {
			if r == triF {
				v.leavesOnSuccess = true
			}
			continue
		}
		if !o.failure() {
			continue
		}
		if r != triF {
			v.anyFailure = true
		}
		if o.hasStatus {
			v.retried[o.status] = r
		} else {
			v.errTri = r
		}
	}
	return v
}

// ownPause reports whether a loop waits a time of its own: a wait that is
// not a call which pauses inside itself. A loop whose only "wait" is such a
// call (a broker request, tried on the next broker when it fails) has no
// pause to judge, and reading that call as its attempt would make a
// failover look like an endless retry.
func ownPause(waits []loopCall) bool {
	for _, lw := range waits {
		if !lw.w.inner {
			return true
		}
	}
	return false
}

// reportNoJitter reports the pure waits among a loop's. When the loop
// waits a time of its own that is known (jittered or pure), what a call it
// retries waits inside itself (a connect's pause for the handshake, a
// request's wait for its answer) is part of the attempt, not the
// schedule: the loop's own wait is the one that spreads the clients, or
// fails to.
func (c *checker) reportNoJitter(waits []loopCall) {
	ownWait := false // a wait of the loop's own whose duration is known
	for _, lw := range waits {
		ownWait = ownWait || !lw.w.inner && (lw.w.dur.kind == pPure || lw.w.dur.kind == pRand)
	}
	for _, lw := range waits {
		if lw.w.dur.kind != pPure || (lw.w.inner && ownWait) || lw.w.ownRetry {
			continue
		}
		what := "this wait"
		if lw.w.helper != "" {
			what = lw.w.helper
		}
		how := lw.w.dur.pureHow()
		f := finding{check: CheckNoJitter, pos: lw.call.Pos(), end: lw.call.End(),
			msg: fmt.Sprintf("%s in a retry loop has a constant or purely exponential duration%s: clients that failed together retry together; randomise it (full jitter) or use recoil", what, how)}
		if lw.w.helper == "" {
			if fix, ok := c.jitterFix(lw.call); ok {
				f.fixes = []analysis.SuggestedFix{fix}
			}
		}
		c.add(f)
	}
}

func (c *checker) reportUnclassified(s ast.Stmt, sc loopScan, v verdict) {
	var parts []string
	nonSuccess, allNon2xx := 0, true
	var perm []string
	for _, st := range probeStatuses {
		if st < 300 {
			continue
		}
		nonSuccess++
		if v.retried[st] != triT {
			allNon2xx = false
		}
	}
	reauth := c.resetsCredentials(sc.body)
	for _, st := range permanent {
		if v.retried[st] == triT && !(reauth && (st == 401 || st == 403)) {
			// a 401 or 403 re-sent after the credentials are reset or
			// refreshed may well change: a re-authentication
			perm = append(perm, fmt.Sprint(st))
		}
	}
	// For a helper that makes the HTTP call and returns an error, as for
	// net/http, the error without a status is the transport's: a loop
	// that picks transient statuses and lets every transport error go
	// round with them has classified.
	picks := sc.remote != remoteGRPC && len(perm) == 0 && (retriesTransient(v) || c.transportOnly(sc, v))
	switch {
	case v.errTri == triT && (sc.remote != remoteHTTP || allNon2xx) && !picks:
		parts = append(parts, "on every error")
		if sc.remote == remoteHTTP {
			parts = append(parts, "on every non-2xx status")
		}
	case allNon2xx && nonSuccess > 0 && sc.remote != remoteGRPC:
		parts = append(parts, "on every non-2xx status")
	default:
		if v.errTri == triT && !picks {
			// net/http's transport error carries no status: a loop that
			// reads the status and goes round only on transient ones
			// has classified, and every transport error going round
			// with them is the usual policy, not a storm.
			parts = append(parts, "on every error")
		}
		if len(perm) > 0 {
			parts = append(parts, "on "+strings.Join(perm, ", ")+", which will not change on a retry")
		}
	}
	if len(parts) > 0 {
		c.add(finding{check: CheckUnclassified, pos: s.Pos(), end: s.Pos() + 3,
			msg: fmt.Sprintf("retry loop around %s retries %s: classify the failure (errors.Is/As, retry 429, 503 and 5xx, never 400, 401, 403, 404, 413, 422) or use recoil", c.callName(sc.remoteCall), strings.Join(parts, " and "))})
	}
}

// retriesTransient reports whether a loop goes round on some status that
// may change on a retry (a 5xx, 429, 408; for certain, or as a check of
// the response it cannot see into decides) and leaves on some other
// failure status: it reads the status and picks.
func retriesTransient(v verdict) bool {
	some, left := false, false
	for _, st := range probeStatuses {
		if st < 300 {
			continue
		}
		switch {
		case v.retried[st] == triF:
			left = true
		case v.retried[st] != triF && (st >= 500 || st == 429 || st == 408):
			some = true
		}
	}
	return some && left
}

// transportOnly reports whether a loop around net/http's own client (whose
// error means no answer came: a refused or reset connection, a timeout)
// goes round on no failure status at all: every answer the server gave,
// whatever its status, leaves the loop, and only the transport's failure
// is tried again. A Doer behind an interface may turn statuses into its
// error, so it is read this way only when the loop reads the status
// itself (if resp != nil && resp.StatusCode < 500 { return }), or when it
// is a helper of this package whose one HTTP call the verdict was read
// through (its error on each status is what its body says). A call whose
// error carries the status (a model SDK's, a helper that folds it) and
// that goes round only on an error with none has picked the same way.
func (c *checker) transportOnly(sc loopScan, v verdict) bool {
	if (sc.remote != remoteHTTP && sc.remote != remoteSDK) || sc.remoteCall == nil {
		return false
	}
	if fn := c.callee(sc.remoteCall); sc.remote == remoteHTTP && funcPath(fn) != "net/http" && !c.plainDoer(sc.remoteCall, fn, sc.body) && !c.readsStatus(sc.body) && !c.sendsInSight(fn) {
		return false
	}
	for _, st := range probeStatuses {
		if st >= 300 && v.retried[st] != triF {
			return false
		}
	}
	return v.errTri != triF
}

// reauthOnly reports whether a loop goes round on a 401 and on nothing
// else, neither another status nor an error without one.
func reauthOnly(v verdict) bool {
	if v.errTri != triF || v.retried[401] == triF {
		return false
	}
	for _, st := range probeStatuses {
		if st >= 300 && st != 401 && v.retried[st] != triF {
			return false
		}
	}
	return true
}

// readsStatus reports whether body (a block, or a condition) tests an
// HTTP status anywhere.
func (c *checker) readsStatus(body ast.Node) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if b, ok := n.(*ast.BinaryExpr); ok && (c.hasStatus(b.X) || c.hasStatus(b.Y)) {
			found = true
		}
		return !found
	})
	return found
}

// pollsOwnServer reports whether a loop waits for a server this process
// just started, or one on this host: the function starts a process or a
// listener before the loop, or waits for a Server it holds to be ready,
// or the loop names localhost or connects in-process, or the function is
// called only after its callers start a process (calledAfterStart), or the
// loop asks whether its process has exited (os.ErrProcessDone). A
// readiness poll of one's own server is not a retry storm.
func (c *checker) pollsOwnServer(s ast.Stmt, fc funcCtx) bool {
	found := false
	look := func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING && isLocalHost(n.Value) {
				found = true
			}
		case *ast.SelectorExpr:
			if n.Pos() >= s.Pos() && n.End() <= s.End() && isProcessDone(c.objOf(n.Sel)) {
				found = true // the loop asks whether the process it waits for has exited: a child of this program
			}
		case *ast.CallExpr:
			fn := c.callee(n)
			if isFunc(fn, "net", "Listen", "ListenTCP", "ListenUDP", "ListenPacket") &&
				(n.Pos() >= s.Pos() && n.End() <= s.End() || c.listenReached(s, fc.decl, n)) {
				found = true // binding a local port in the loop, or one the loop dials
			}
			if fn != nil && strings.HasPrefix(fn.Name(), "InProcess") {
				found = true // nats.InProcessServer(s): a connection that never leaves the process
			}
			if c.startsProcess(fn) {
				found = true // startDaemon() before or in the loop: a server this process forks, then dials
			}
			if n.Pos() >= s.Pos() {
				return true
			}
			switch {
			case fn != nil && strings.Contains(fn.Name(), "Ready") && recvNamed(fn) != nil && recvNamed(fn).Obj().Name() == "Server":
				found = true // s.ReadyForConnections(…): a server this process holds, waited for
			case isFunc(fn, "net/http/httptest", "NewServer", "NewTLSServer"):
				found = true
			case funcPath(fn) == "os/exec" && recvNamed(fn) != nil && (fn.Name() == "Start" || fn.Name() == "Run"):
				found = true
			case funcPath(fn) == "net/http" && recvNamed(fn) != nil && recvNamed(fn).Obj().Name() == "Server":
				found = true
			}
		}
		return true
	}
	if fc.decl != nil {
		ast.Inspect(fc.decl, look)
	}
	ast.Inspect(s, look)
	return found || c.calledAfterStart(fc.fn)
}

// isProcessDone reports whether obj is os.ErrProcessDone, the error a
// process this program started reports once it has exited.
func isProcessDone(obj types.Object) bool {
	v, ok := obj.(*types.Var)
	return ok && v.Pkg() != nil && v.Pkg().Path() == "os" && v.Name() == "ErrProcessDone"
}

func isLocalHost(lit string) bool {
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
		if strings.Contains(lit, h) {
			return true
		}
	}
	return false
}

// accepts reports whether a loop accepts connections from a listener,
// reads the packets that come to its own socket (a UDP server's
// ReadFromUDP) or serves HTTP (http.ListenAndServe): a server's loop, with
// no dependency behind it.
func (c *checker) accepts(s ast.Stmt) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			fn := c.callee(call)
			switch {
			case fn == nil:
			case c.acceptCall(call):
				found = true
			case funcPath(fn) == "net" && (strings.HasPrefix(fn.Name(), "ReadFrom") || strings.HasPrefix(fn.Name(), "ReadMsg")),
				funcPath(fn) == "net/http" && (strings.HasPrefix(fn.Name(), "ListenAndServe") || strings.HasPrefix(fn.Name(), "Serve")):
				found = true // a server restarted: its port is this machine's
			}
		}
		return !found
	})
	return found
}

// acceptCall reports whether call accepts a connection: net's Accept…, or
// an Accept… method of a net.Listener.
func (c *checker) acceptCall(call *ast.CallExpr) bool {
	fn := c.callee(call)
	return fn != nil && strings.HasPrefix(fn.Name(), "Accept") && (funcPath(fn) == "net" || c.isListener(call))
}

// isListener reports whether a method call's receiver is a net.Listener.
func (c *checker) isListener(call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	return ok && isNamed(c.info.TypeOf(sel.X), "net", "Listener")
}
