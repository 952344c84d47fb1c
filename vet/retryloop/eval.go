package retryloop

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// A loop's go-round paths are evaluated against the outcomes the call in
// the loop can have: a transport error, each probe HTTP status, success.

type tri int

const (
	triF tri = iota
	triU     // depends on a classification the analyzer cannot see
	triT
)

func (a tri) not() tri  { return 2 - a }
func and3(a, b tri) tri { return min(a, b) }
func or3(a, b tri) tri  { return max(a, b) }

type outcome struct {
	err       bool // the call returned an error
	hasStatus bool
	status    int
}

// permanent are the statuses that will not change on a retry.
var permanent = []int{400, 401, 403, 404, 413, 422}

var probeStatuses = []int{200, 201, 202, 204, 301, 304, 400, 401, 403, 404, 408, 409, 413, 422, 425, 429, 499, 500, 501, 502, 503, 504, 599}

// outcomes lists what a remote call of kind k can return: for net/http a
// status comes with a nil error; for a model SDK a non-2xx status is an
// error (errors.As finds it); for gRPC and other calls, an error or not.
func outcomes(k int) []outcome {
	os := []outcome{{err: true}}
	switch k {
	case remoteHTTP:
		for _, s := range probeStatuses {
			os = append(os, outcome{hasStatus: true, status: s})
		}
	case remoteSDK:
		for _, s := range probeStatuses {
			os = append(os, outcome{err: s >= 300, hasStatus: true, status: s})
		}
	default:
		os = append(os, outcome{})
	}
	return os
}

// success reports whether o is a success: no error, and a 2xx status if
// any. A loop is a retry loop if it leaves on some success (an API that
// answers 202 Accepted may go round on a 200) and goes round on some
// failure; one that goes round on every success is polling.
func (o outcome) success() bool { return !o.err && (!o.hasStatus || o.status < 300) }

func (o outcome) failure() bool { return o.err || (o.hasStatus && o.status >= 300) }

type evaluator struct {
	w      *loopWalker
	k      int
	st     state
	assign map[string]bool
	free   map[string]bool
	// notCancel is set when asking whether a failure reaches a wait: the
	// failure is the dependency's, not the caller's cancellation, so a
	// test that the error is context.Canceled or DeadlineExceeded is
	// false (a watch loop's `if errors.Is(err, context.Canceled) {
	// return }` leaves every other failure to its wait).
	notCancel bool
}

func (ev *evaluator) irrelevant(key string) tri {
	ev.free[key] = true
	if ev.assign[key] {
		return triT
	}
	return triF
}

func (ev *evaluator) cond(c cond, o outcome) tri {
	if c.srcs != nil {
		saved := ev.st.srcs
		ev.st.srcs = c.srcs
		defer func() { ev.st.srcs = saved }()
	}
	if c.skips {
		return triF // a way that made no attempt holds on no outcome
	}
	var r tri
	switch {
	case c.alts != nil:
		all := func(conds []cond) tri {
			x := triT
			for _, sc := range conds {
				x = and3(x, ev.cond(sc, o))
			}
			return x
		}
		r = triF
		for _, a := range c.alts {
			r = or3(r, all(a))
		}
		if r == triU {
			// the ways that joined part at a test taken both ways
			for _, j := range c.joins {
				r = or3(r, all(j))
			}
		}
	case c.opaque == opaqueClassify:
		r = triU
	case c.opaque == opaqueFailed:
		r = boolTri(o.failure())
	case c.opaque != opaqueNone:
		r = ev.irrelevant(c.key)
	case c.typeCase:
		r = ev.errorTypeCase(c.tag, c.values, o)
	case c.isCase:
		r = triF
		for _, v := range c.values {
			var x tri
			if c.tag == nil {
				x = ev.expr(v, o, 0)
			} else {
				x = ev.compare(token.EQL, c.tag, v, o)
			}
			r = or3(r, x)
		}
	default:
		r = ev.expr(c.expr, o, 0)
	}
	if c.neg {
		r = r.not()
	}
	return r
}

func (ev *evaluator) expr(e ast.Expr, o outcome, depth int) tri {
	if depth > 8 {
		return ev.irrelevant(types.ExprString(e))
	}
	c := ev.w.c
	switch e := e.(type) {
	case *ast.ParenExpr:
		return ev.expr(e.X, o, depth+1)
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return ev.expr(e.X, o, depth+1).not()
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			return and3(ev.expr(e.X, o, depth+1), ev.expr(e.Y, o, depth+1))
		case token.LOR:
			return or3(ev.expr(e.X, o, depth+1), ev.expr(e.Y, o, depth+1))
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			if r, ok := ev.w.firstRound(e); ok {
				return r // 0 == attempt in the loop's condition: false at every go-round
			}
			return ev.compare(e.Op, e.X, e.Y, o)
		}
	case *ast.Ident:
		if r, ok := ev.ident(e, o, depth); ok {
			return r
		}
	case *ast.IndexExpr:
		if set, st, ok := c.statusLookup(e); ok && c.hasStatus(st) {
			return ev.lookup(set, st, o)
		}
	case *ast.CallExpr:
		if set, st, ok := c.statusLookup(e); ok && c.hasStatus(st) {
			return ev.lookup(set, st, o)
		}
		if r, ok := ev.memberEval(e, o); ok {
			return r
		}
		fn := c.callee(e)
		if tokenWait(fn) {
			return triT // an MQTT token's Wait: true once the call is done
		}
		if o.failure() && c.isCtxErrTest(e) && (ev.notCancel && ev.callerCancel(e.Args[1]) || c.isCanceled(e.Args[1])) {
			// errors.Is(err, context.Canceled): the caller gave up, which
			// a dependency's failure never is (DeadlineExceeded may be
			// the attempt's own timeout, a failure some loops retry)
			return triF
		}
		if isFunc(fn, "errors", "As") && ev.k == remoteSDK {
			return ev.asFolded(e, o)
		}
		if isErrorsIs(fn) && len(e.Args) == 2 {
			if r, ok := ev.sentinelTest(e.Args[0], e.Args[1], o); ok {
				return r // errors.Is(err, errTooManyRequests): a 429
			}
		}
		if c.classifies(e) {
			if o.success() && c.classifiesErrorsOnly(e) {
				return triF // isRetryable(nil), errors.Is(nil, …): no error, nothing to retry
			}
			if r, ok := ev.importedVerdict(e, o); ok && !(o.success() && r == triT) {
				return r // another package's classifier, by its fact
			}
			if r, ok := ev.inline(e, 0, o); ok && !(o.success() && r == triT) {
				// A verdict of "true" on a success says only which way
				// round the classifier is (isDone, not shouldRetry).
				return r
			}
			if o.success() && retryVerdictName(e) {
				// shouldRetry(resp, err, attempt) out of sight (a func
				// value, an interface's method): named for the verdict
				// it gives, and no classifier asks to retry a success.
				return triF
			}
			return triU
		}
	}
	return ev.irrelevant(types.ExprString(e))
}

// retryVerdictName reports whether a call's name says it answers "retry
// this": shouldRetry, isRetryable, CheckRetry, retriable; not retrieved,
// noRetry or dontRetry.
func retryVerdictName(call *ast.CallExpr) bool {
	id := calleeIdent(call.Fun)
	if id == nil {
		return false
	}
	n := strings.ToLower(id.Name)
	if !strings.Contains(n, "retry") && !(strings.Contains(n, "retri") && !strings.Contains(n, "retriev")) {
		return false
	}
	return !strings.Contains(n, "noretr") && !strings.Contains(n, "dontretr") && !strings.Contains(n, "notretr")
}

// ident evaluates a variable that stands for a test: a classifier's
// verdict held in a variable (shouldRetry := check(resp, err)), or a
// variable assigned once, or a comma-ok result. ok is false when the
// identifier is none of these.
func (ev *evaluator) ident(e *ast.Ident, o outcome, depth int) (r tri, ok bool) {
	c := ev.w.c
	v, isVar := c.info.Uses[e].(*types.Var)
	if !isVar {
		return triF, false
	}
	if ev.beforeAttempt(v) {
		// ok, err := c.redirect(ctx) before the attempt the walk asks
		// about: what it said is no part of that attempt's outcome
		return ev.irrelevant(types.ExprString(e)), true
	}
	if r, ok := ev.besideVerdict(v, o); ok {
		return r, true
	}
	if c.verdictOfClassifier(v, ev.w.body) {
		// shouldRetry := check(resp, err): the classifier decides; no
		// classifier asks to retry a success.
		if o.success() {
			return triF, true
		}
		if call, idx, found := c.classifierCall(v, ev.w.body); found {
			if idx == 0 && isFunc(c.callee(call), "errors", "As") {
				// ok := errors.As(err, &apiErr): as if tested where it stands
				return ev.expr(call, o, depth+1), true
			}
			if r, ok := ev.inlineAttempt(call, idx, o); ok {
				return r, true
			}
			if r, ok := ev.inline(call, idx, o); ok {
				return r, true
			}
		}
		return triU, true
	}
	if xs := c.assignsOf(ev.w.body)[v]; len(xs) == 1 && xs[0] != unknownExpr {
		return ev.expr(xs[0], o, depth+1), true
	}
	if x, found := c.commaOk(v, ev.w.body); found {
		return ev.commaOk(x, o, depth), true
	}
	return triF, false
}

// classifies reports whether a call inspects an error or a response: it
// is passed one, or is a method of one.
func (c *checker) classifies(call *ast.CallExpr) bool {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && isContext(c.info.TypeOf(sel.X)) {
		return false // ctx.Err(): the caller's cancellation, not the call's outcome
	}
	if funcPath(c.callee(call)) == "context" || wrapsError(c.callee(call)) {
		return false // fmt.Errorf("download: %w", err): the same error with words added, no test of it
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if t := c.info.TypeOf(sel.X); t != nil && (isError(t) || types.Implements(t, errorIface)) {
			if _, isPkg := c.info.Uses[identOf(sel.X)].(*types.PkgName); !isPkg {
				return true
			}
		}
	}
	for _, a := range call.Args {
		t := c.info.TypeOf(a)
		if isError(t) || isNamed(t, "net/http", "Response") || t != nil && statusWrapper(t) || c.hasStatus(a) || c.errorText(a) {
			return true
		}
	}
	// resp.needsRetry(attempts): a method of the package's own answer
	// type, one that keeps the status it came with
	return ownAnswerMethod(c.callee(call), c.pass.Pkg)
}

// wrapsError reports whether fn wraps the error it is handed and tests
// nothing: fmt.Errorf, errors.Join, pkg/errors' Wrap and its kin.
func wrapsError(fn *types.Func) bool {
	return isFunc(fn, "fmt", "Errorf") || isFunc(fn, "errors", "Join") ||
		isFunc(fn, "github.com/pkg/errors", "Wrap", "Wrapf", "WithMessage", "WithMessagef", "WithStack") ||
		isFunc(fn, "golang.org/x/xerrors", "Errorf")
}

// errorText reports whether e reads an error's text (err.Error()): a
// classification by message, strings.Contains(err.Error(), "reset").
func (c *checker) errorText(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 0 {
			if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
				if t := c.info.TypeOf(sel.X); t != nil && (isError(t) || types.Implements(t, errorIface)) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// inspectsError reports whether e calls something that classifies an
// error or a response (status.Code(err), a type assertion on an error).
func (c *checker) inspectsError(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if c.classifies(n) {
				found = true
			}
		case *ast.TypeAssertExpr:
			if isError(c.info.TypeOf(n.X)) {
				found = true
			}
		}
		return !found
	})
	return found
}

var errorIface = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)

func identOf(e ast.Expr) *ast.Ident {
	id, _ := ast.Unparen(e).(*ast.Ident)
	return id
}

func (ev *evaluator) compare(op token.Token, x, y ast.Expr, o outcome) tri {
	c := ev.w.c
	if o.failure() && (op == token.EQL || op == token.NEQ) && (ev.notCancel && (ev.callerCancel(x) || ev.callerCancel(y)) || c.isCanceled(x) || c.isCanceled(y)) {
		return boolTri(op == token.NEQ) // err == context.Canceled: not the dependency's failure
	}
	if isNil(c.info, y) {
		x, y = y, x
	}
	if isNil(c.info, x) {
		return ev.nilCompare(op, x, y, o)
	}
	if r, ok := ev.sentinelTest(x, y, o); ok && (op == token.EQL || op == token.NEQ) {
		if op == token.NEQ {
			r = r.not()
		}
		return r
	}
	if c.countedElem(x, ev.w.body) || c.countedElem(y, ev.w.body) {
		// tries[resp.StatusCode] >= limit: a count kept per status, not
		// the status itself
		return ev.irrelevant(types.ExprString(x) + op.String() + types.ExprString(y))
	}
	if c.hasStatus(x) || c.hasStatus(y) {
		if o.err && !o.hasStatus && ev.k != remoteHTTP && ev.k != remoteSDK && (c.errorField(x) || c.errorField(y)) {
			// apiErr.Code == 503 on an error of a driver's own (NATS,
			// a database): a code the analyzer has no outcomes for, read
			// as a classification
			return triU
		}
		if !o.hasStatus || (o.err && ev.k == remoteHTTP) {
			return triF
		}
		a, ok1 := c.evalInt(x, o, ev.w.body, 0)
		b, ok2 := c.evalInt(y, o, ev.w.body, 0)
		if !ok1 || !ok2 {
			return triU
		}
		var r bool
		switch op {
		case token.EQL:
			r = a == b
		case token.NEQ:
			r = a != b
		case token.LSS:
			r = a < b
		case token.LEQ:
			r = a <= b
		case token.GTR:
			r = a > b
		case token.GEQ:
			r = a >= b
		}
		return boolTri(r)
	}
	if r, ok := ev.sentinelOnSuccess(op, x, y, o); ok {
		return r
	}
	if _, k, ok := c.textCompare(x, y); ok && o.success() && c.returnsNotYetText(ev.w.attemptCall, k) {
		return ev.irrelevant("not yet " + k) // err.Error() == lbNotReady: a success may say it
	}
	if r, ok := ev.grpcCodeOnSuccess(op, x, y, o); ok {
		return r
	}
	if isError(c.info.TypeOf(x)) || isError(c.info.TypeOf(y)) || c.inspectsError(ev.once(x)) || c.inspectsError(ev.once(y)) {
		// err == ErrSomething, status.Code(err) != codes.Unavailable, or
		// code == codes.Unavailable after code := status.Code(err): a
		// classification
		return triU
	}
	if c.errorField(x) || c.errorField(y) {
		return triU // apiErr.Reason != "NotProcessed": what the server said, read
	}
	if r, ok := ev.answerError(op, x, y, o); ok {
		return r
	}
	return ev.irrelevant(types.ExprString(x) + op.String() + types.ExprString(y))
}

func (ev *evaluator) srcOf(e ast.Expr) int {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		if o := ev.w.c.info.Uses[id]; o != nil {
			return ev.st.srcs[o]
		}
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		return ev.w.errSrc(call, ev.st)
	}
	return srcOutcome
}

func boolTri(b bool) tri {
	if b {
		return triT
	}
	return triF
}

// hasStatus reports whether e is, or is computed from, an HTTP status code
// (a StatusCode field, or a variable assigned one).
func (c *checker) hasStatus(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok && c.isStatus(x) {
			found = true
		}
		return !found
	})
	return found
}

func (c *checker) evalInt(e ast.Expr, o outcome, body *ast.BlockStmt, depth int) (int64, bool) {
	if depth > 6 {
		return 0, false
	}
	if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
		var v int64
		_, err := fmt.Sscan(tv.Value.ExactString(), &v)
		return v, err == nil
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.evalInt(e.X, o, body, depth+1)
	case *ast.SelectorExpr, *ast.CallExpr:
		if c.isStatus(e) {
			return int64(o.status), true
		}
	case *ast.Ident:
		if c.heldStatus(c.info.Uses[e]) {
			return int64(o.status), true // coin, status, err = getInfo(id)
		}
		if v, ok := c.info.Uses[e].(*types.Var); ok {
			if xs := c.assignsOf(body)[v]; len(xs) == 1 {
				return c.evalInt(xs[0], o, body, depth+1)
			}
		}
	case *ast.BinaryExpr:
		a, ok1 := c.evalInt(e.X, o, body, depth+1)
		b, ok2 := c.evalInt(e.Y, o, body, depth+1)
		if ok1 && ok2 {
			return arith(e.Op, a, b)
		}
	}
	return 0, false
}

// arith applies an integer operator, false for one it does not know or a
// division by zero.
func arith(op token.Token, a, b int64) (int64, bool) {
	switch op {
	case token.ADD:
		return a + b, true
	case token.SUB:
		return a - b, true
	case token.MUL:
		return a * b, true
	case token.QUO:
		if b != 0 {
			return a / b, true
		}
	case token.REM:
		if b != 0 {
			return a % b, true
		}
	}
	return 0, false
}

// retries evaluates every go-round path against outcome o: triT if some
// path retries it whatever the counters and flags say, triU if that
// depends on a classification, triF if none does.
func (w *loopWalker) retries(k int, o outcome) tri {
	var after []state
	for i, g := range w.gorounds {
		if w.attempt == token.NoPos || w.goPos[i] > w.attempt {
			after = append(after, g)
		}
	}
	return w.reaches(after, k, o)
}

// reaches evaluates a set of path states against outcome o: triT if some
// path is taken on it whatever the counters and flags say.
func (w *loopWalker) reaches(states []state, k int, o outcome) tri {
	r := w.reachesEach(states, k, o)
	if r == triU {
		// if errors.Is(err, io.EOF) { go round } else { wait; go round }:
		// each path hangs on a test the other takes the other way
		if joined := complementStates(states); len(joined) > 0 {
			r = max(r, w.reachesEach(joined, k, o))
		}
	}
	return r
}

// reachesEach is reaches for each path on its own.
func (w *loopWalker) reachesEach(states []state, k int, o outcome) tri {
	best := triF
	for _, g := range states {
		ev := &evaluator{w: w, k: k, st: g, assign: map[string]bool{}, free: map[string]bool{}, notCancel: w.notCancel}
		eval := func() tri {
			r := triT
			for _, c := range g.conds {
				r = and3(r, ev.cond(c, o))
			}
			return r
		}
		eval()
		keys := make([]string, 0, len(ev.free))
		for k := range ev.free {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 10 {
			keys = keys[:10]
		}
		for mask := 0; mask < 1<<len(keys); mask++ {
			for i, k := range keys {
				ev.assign[k] = mask&(1<<i) != 0
			}
			best = max(best, eval())
			if best == triT {
				return best
			}
		}
	}
	return best
}

// classifiesErrorsOnly reports whether the only outcome a classifying call
// is handed is an error (not a response or a status).
func (c *checker) classifiesErrorsOnly(call *ast.CallExpr) bool {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if t := c.info.TypeOf(sel.X); t != nil && isError(t) {
			return true
		}
	}
	n := 0
	for _, a := range call.Args {
		t := c.info.TypeOf(a)
		switch {
		case isNamed(t, "net/http", "Response") || c.hasStatus(a):
			return false
		case isError(t):
			n++
		}
	}
	return n > 0
}

// classifierCall returns the one call whose result the boolean v takes in
// body, and which of its results v is.
func (c *checker) classifierCall(v *types.Var, body *ast.BlockStmt) (*ast.CallExpr, int, bool) {
	var call *ast.CallExpr
	idx, n := 0, 0
	ast.Inspect(body, func(m ast.Node) bool {
		as, ok := m.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			if id, ok := l.(*ast.Ident); !ok || (c.info.Defs[id] != v && c.info.Uses[id] != v) {
				continue
			}
			n++
			switch {
			case len(as.Rhs) == len(as.Lhs):
				call, _ = ast.Unparen(as.Rhs[i]).(*ast.CallExpr)
			case len(as.Rhs) == 1:
				call, _ = ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
				idx = i
			}
		}
		return true
	})
	return call, idx, n == 1 && call != nil
}
