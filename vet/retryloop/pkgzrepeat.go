package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
)

// go-pkgz's repeater (v1) calls a function until it returns nil, paced by
// the strategy it was made with: a FixedDelay (NewDefault's, and New(nil)'s
// ten tries five seconds apart), a Backoff randomised only with Jitter: true,
// or Once. Do stops at once only on one of the critical errors it is handed.
// go-pkgz/requester's middleware.Repeater re-sends a request through one,
// on every status of 400 and above unless it is handed the statuses.
const (
	pkgzRepeaterPath   = "github.com/go-pkgz/repeater"
	pkgzStrategyPath   = pkgzRepeaterPath + "/strategy"
	pkgzMiddlewarePath = "github.com/go-pkgz/requester/middleware"
)

// schedNoRetry is a repeater that makes one try: a Once strategy, or
// Repeats of one or less (the strategies count the first try).
const schedNoRetry = -1

// pkgzRepeaterCall reads a call of a go-pkgz Repeater's Do on a repeater
// made in sight: its schedule is its strategy's, its work the function.
func (c *checker) pkgzRepeaterCall(call *ast.CallExpr, callee *types.Func, decl *ast.BlockStmt) (libCall, bool) {
	sched, ok := c.pkgzDoSched(call, callee, decl)
	if !ok || sched == schedNoRetry {
		return libCall{}, false
	}
	return libCall{sched: sched, work: call.Args[1],
		remedy: "make it with a strategy.Backoff whose Jitter is true"}, true
}

// pkgzDoSched is the schedule of a Repeater's Do call: ok when call is one.
func (c *checker) pkgzDoSched(call *ast.CallExpr, callee *types.Func, decl *ast.BlockStmt) (int, bool) {
	r := recvNamed(callee)
	if funcPath(callee) != pkgzRepeaterPath || r == nil || r.Obj().Name() != "Repeater" || callee.Name() != "Do" || len(call.Args) < 2 {
		return schedUnknown, false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return schedUnknown, false
	}
	return c.pkgzRepeaterSched(sel.X, decl), true
}

// pkgzRepeaterSched is the schedule of the repeaters e is made from.
func (c *checker) pkgzRepeaterSched(e ast.Expr, decl *ast.BlockStmt) int {
	return joinSources(c.sources(e, decl, 0), func(s source) int { return c.pkgzRepeaterMade(s.e, s.body) })
}

// pkgzRepeaterMade is the schedule of the repeater e makes: NewDefault's
// fixed delay, or the strategy New or a Repeater literal is given.
func (c *checker) pkgzRepeaterMade(e ast.Expr, body *ast.BlockStmt) int {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok {
		e = u.X
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		f := c.callee(x)
		switch {
		case f == nil || funcPath(f) != pkgzRepeaterPath || recvNamed(f) != nil:
		case f.Name() == "NewDefault" && len(x.Args) == 2:
			return c.pkgzRepeats(x.Args[0])
		case f.Name() == "New" && len(x.Args) == 1:
			if isNil(c.info, x.Args[0]) {
				return schedPure // ten tries, five seconds apart
			}
			return joinSources(c.sources(x.Args[0], body, 0), func(s source) int { return c.pkgzStrategy(s.e) })
		}
	case *ast.CompositeLit:
		if isNamed(c.info.TypeOf(x), pkgzRepeaterPath, "Repeater") && len(x.Elts) == 1 {
			v := x.Elts[0]
			if kv, ok := v.(*ast.KeyValueExpr); ok {
				v = kv.Value
			}
			return joinSources(c.sources(v, body, 0), func(s source) int { return c.pkgzStrategy(s.e) })
		}
	}
	return schedUnknown
}

// pkgzStrategy is the schedule of a strategy literal: Once tries once; a
// FixedDelay waits the same every time; a Backoff is randomised only with
// a constant true Jitter; either tries once with Repeats of one or less.
func (c *checker) pkgzStrategy(e ast.Expr) int {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok {
		e = u.X
	}
	lit, ok := ast.Unparen(e).(*ast.CompositeLit)
	if !ok {
		return schedUnknown
	}
	t := c.info.TypeOf(lit)
	switch {
	case isNamed(t, pkgzStrategyPath, "Once"):
		return schedNoRetry
	case isNamed(t, pkgzStrategyPath, "FixedDelay"), isNamed(t, pkgzStrategyPath, "Backoff"):
	default:
		return schedUnknown
	}
	repeats, keyed := litKey(lit, "Repeats")
	if !keyed {
		return schedUnknown
	}
	if repeats == nil {
		return schedNoRetry
	}
	if n := c.pkgzRepeats(repeats); n != schedPure {
		return n
	}
	if !isNamed(t, pkgzStrategyPath, "Backoff") {
		return schedPure
	}
	jitter, _ := litKey(lit, "Jitter")
	if jitter == nil {
		return schedPure
	}
	switch v, known := c.constBool(jitter); {
	case !known:
		return schedUnknown
	case v:
		return schedJitter
	}
	return schedPure
}

// pkgzRepeats reads a repeat count: one try when it is a constant of one
// or less, a fixed schedule otherwise.
func (c *checker) pkgzRepeats(e ast.Expr) int {
	if n, ok := c.constIntOf(e); ok && n <= 1 {
		return schedNoRetry
	}
	return schedPure
}

// pkgzRepeaterOp reports a Repeater's Do whose function, a literal, makes
// a remote call and goes round on what will not change, or on 429 or 503
// without reading Retry-After (judgeOperation). A Do handed critical
// errors is left alone: which answers end it is the code's own reading.
func (c *checker) pkgzRepeaterOp(call *ast.CallExpr, decl *ast.BlockStmt) {
	callee := c.callee(call)
	if callee == nil {
		return
	}
	sched, ok := c.pkgzDoSched(call, callee, decl)
	if !ok || sched == schedNoRetry || len(call.Args) != 2 {
		return
	}
	if lit := c.operationLit(call, decl); lit != nil {
		c.judgeOperation(call, lit, "one of the critical errors Do is handed",
			"read it (recoilhttp.ServerWait) and wait what it says before returning")
	}
}

// pkgzMiddleware reports requester's middleware.Repeater: handed no
// statuses, it re-sends every answer of 400 and above (unclassified, and
// 429 and 503 without Retry-After); handed constants, those among them;
// on a repeater whose schedule has no jitter (nojitter).
func (c *checker) pkgzMiddleware(call *ast.CallExpr, decl *ast.BlockStmt) {
	f := c.callee(call)
	if f == nil || funcPath(f) != pkgzMiddlewarePath || f.Name() != "Repeater" || len(call.Args) == 0 || call.Ellipsis.IsValid() {
		return
	}
	sched := c.pkgzRepeaterSched(call.Args[0], decl)
	if sched == schedNoRetry || (sched == schedUnknown && !c.pkgzMadeHere(call.Args[0], decl)) {
		return
	}
	codes := map[int64]bool{}
	for _, a := range call.Args[1:] {
		n, ok := c.constIntOf(a)
		if !ok {
			return
		}
		codes[n] = true
	}
	retried := func(st int) bool { return len(codes) == 0 && st >= 400 || codes[int64(st)] }
	name := c.callName(call)
	var fixed, told []string
	for _, st := range permanent {
		if retried(st) {
			fixed = append(fixed, fmt.Sprint(st))
		}
	}
	for _, st := range []int{429, 503} {
		if retried(st) {
			told = append(told, fmt.Sprint(st))
		}
	}
	switch {
	case len(codes) == 0:
		c.add(finding{check: CheckUnclassified, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s re-sends every status of 400 and above, statuses that will not change (%s) among them: hand it the statuses to re-send (429, 503 and the transient 5xx), or use recoilhttp.Transport", name, strings.Join(fixed, ", "))})
	case len(fixed) > 0:
		c.add(finding{check: CheckUnclassified, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s re-sends %s, statuses that will not change: hand it only 429, 503 and the transient 5xx, or use recoilhttp.Transport", name, strings.Join(fixed, ", "))})
	}
	if sched == schedPure {
		c.add(finding{check: CheckNoJitter, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s waits a constant or purely exponential schedule between attempts: clients that failed together retry together; make its repeater with a strategy.Backoff whose Jitter is true, or use recoil", name)})
	}
	if len(told) > 0 {
		c.add(finding{check: CheckRetryAfter, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("%s re-sends %s without reading Retry-After: the server said when to come back; use recoilhttp.Transport, which waits what it says", name, strings.Join(told, " and "))})
	}
}

// pkgzMadeHere reports whether e is, or is a local variable given, a
// repeater the go-pkgz package makes (its schedule unknown only because
// its strategy is not in sight): it retries.
func (c *checker) pkgzMadeHere(e ast.Expr, decl *ast.BlockStmt) bool {
	return slices.ContainsFunc(c.sources(e, decl, 0), func(s source) bool {
		call, ok := ast.Unparen(s.e).(*ast.CallExpr)
		f := c.callee(call)
		return ok && f != nil && funcPath(f) == pkgzRepeaterPath
	})
}
