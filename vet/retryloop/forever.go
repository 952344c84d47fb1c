package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// failsForever reports whether a loop that goes round on success (a long
// poll, a reconnect, a stream read) goes round on its failures too, after
// a wait it reaches only on failure, with nothing to end them: a `for {}`
// with no counter, clock, context or stop on any way out. A schedule that
// waits its full interval after a failure as after a success (a
// heartbeat, a refresh) has no failure-only wait and is left alone; so is
// a loop that leaves when its owner closes (`if c.closed { return }`).
func (c *checker) failsForever(s ast.Stmt, w *loopWalker, v verdict, fw []loopCall, k int) bool {
	if !(bareFor(s) || c.clockRange(s)) || !v.anyFailure || len(fw) == 0 {
		return false
	}
	if c.bounded(s, w, k) {
		return false
	}
	for _, e := range w.exits {
		for _, cd := range flat(e.conds) {
			if c.stopTest(cd) {
				return false
			}
		}
	}
	return true
}

// stopTest reports whether a way out's condition tests the caller's
// cancellation (ctx.Err(), context.Canceled) or a name that says its
// owner is stopping or closed (c.closed, isClosed(), stopping).
func (c *checker) stopTest(cd cond) bool {
	exprs := append([]ast.Expr{cd.expr, cd.tag}, cd.values...)
	found := false
	for _, e := range exprs {
		if e == nil {
			continue
		}
		if c.ctxBlind {
			continue // asked what bounds it besides the context
		}
		if c.mentionsContext(e) {
			return true // ctx.Err() != nil
		}
		ast.Inspect(e, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return !found
			}
			o := c.info.Uses[id]
			// errors.Is(err, context.Canceled): the caller's cancellation
			fromContext := o != nil && o.Pkg() != nil && o.Pkg().Path() == "context"
			if fromContext || stopChanName(id.Name) || strings.Contains(strings.ToLower(id.Name), "closed") {
				found = true
			}
			return !found
		})
	}
	return found
}

// neverSucceeds reports whether fn, declared in this package, returns an
// error as its last result and every one of its returns hands back a
// non-nil one: a constructed error, or an error variable under the `if
// err != nil` that encloses the return. A loop around such a call (a
// session that runs until it fails) goes round only on failure.
func (c *checker) neverSucceeds(fn *types.Func) bool {
	d := c.decls[fn]
	if d == nil || d.Body == nil || !lastResultIsError(fn) {
		return false
	}
	n := fn.Signature().Results().Len()
	returns, never := 0, true
	returnsUnderIfs(d.Body, func(r *ast.ReturnStmt, ifs []*ast.IfStmt) bool {
		returns++
		never = len(r.Results) == n && c.nonNilErr(r.Results[n-1], ifs)
		return never
	})
	return never && returns > 0
}

// nonNilErr reports whether e, returned under guards, is a non-nil error:
// a call of errors.New or fmt.Errorf, or a variable that the innermost
// guard tests `!= nil`.
func (c *checker) nonNilErr(e ast.Expr, guards []*ast.IfStmt) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		fn := c.callee(e)
		return isFunc(fn, "errors", "New") || isFunc(fn, "fmt", "Errorf")
	case *ast.Ident:
		if len(guards) == 0 {
			return false
		}
		b, ok := ast.Unparen(guards[len(guards)-1].Cond).(*ast.BinaryExpr)
		if !ok || b.Op != token.NEQ || !isNil(c.info, b.Y) {
			return false
		}
		x, ok := ast.Unparen(b.X).(*ast.Ident)
		return ok && c.objOf(x) != nil && c.objOf(x) == c.objOf(e)
	}
	return false
}

// reportUnbounded reports loop s as having no bound, with the fix that
// stops it when the function's context is done, where one is in scope.
func (c *checker) reportUnbounded(s ast.Stmt, fc funcCtx) {
	c.reportUnboundedMsg(s, fc, "retry loop has no bound on attempts or total time: count attempts, or stop when ctx is done or a deadline passes")
}

// reportUncounted reports a loop whose counter some failures go round
// without (see uncountedRound).
func (c *checker) reportUncounted(s ast.Stmt, fc funcCtx) {
	c.reportUnboundedMsg(s, fc, "retry loop counts its attempts on some ways round only: a failure that goes round without the count is retried for ever; count every attempt, or stop when ctx is done or a deadline passes")
}

func (c *checker) reportUnboundedMsg(s ast.Stmt, fc funcCtx, msg string) {
	f := finding{check: CheckUnbounded, pos: s.Pos(), end: s.Pos() + 3, msg: msg}
	if fix, ok := c.boundFix(s, fc, fc.own); ok {
		f.fixes = []analysis.SuggestedFix{fix}
	}
	c.add(f)
}

// bareFor reports whether s is a for loop with no condition: for { … }.
func bareFor(s ast.Stmt) bool {
	fs, ok := s.(*ast.ForStmt)
	return ok && fs.Cond == nil
}

// clockRange reports whether s ranges over a timer's or ticker's channel
// (for range timer.C): stopping either never closes it, so the loop ends
// only by a way out of its body, as a bare for does.
func (c *checker) clockRange(s ast.Stmt) bool {
	t := c.rangedType(s)
	if t == nil {
		return false
	}
	ch, ok := t.Underlying().(*types.Chan)
	return ok && isNamed(ch.Elem(), "time", "Time")
}

// rangedType is the type of what a range statement ranges over; nil for
// any other statement, or when the type is unknown.
func (c *checker) rangedType(s ast.Stmt) types.Type {
	r, ok := s.(*ast.RangeStmt)
	if !ok {
		return nil
	}
	return c.info.TypeOf(r.X)
}

// waitingAttempt reports whether call, which waits inside itself (a
// connect that waits for the server's handshake), is an attempt rather
// than a wait: it is handed no context, so the error it returns cannot be
// a cancellation's, only its own failure. One handed an error (a helper
// that waits out a rate limit and hands other errors back) is judging a
// failure, not attempting. Its caller asks this only in a bare for { … }
// (a reconnect loop): a loop over brokers or mirrors (for b := next(); b
// != nil; b = next()) is failover, and its call's pause the broker's.
func (c *checker) waitingAttempt(call *ast.CallExpr, w waitInfo) bool {
	if !w.inner {
		return false
	}
	for _, a := range call.Args {
		if c.mentionsContext(a) || isError(c.info.TypeOf(a)) {
			return false
		}
	}
	return !c.mentionsContext(call.Fun)
}
