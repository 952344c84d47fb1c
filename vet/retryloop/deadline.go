package retryloop

import (
	"go/ast"
	"go/types"
)

// A loop may send a request made with a context whose deadline was set
// before the loop (ctx, cancel := context.WithTimeout(…), then
// http.NewRequestWithContext(ctx, …) or req.WithContext(ctx)). Once the
// deadline passes, the next attempt fails at once without a status; where
// such a failure leaves the loop, the deadline bounds its time. A deadline
// set afresh each round bounds one attempt, not the loop.

// deadlineBound reports whether the loop's HTTP call sends a request
// carrying a deadline set before the loop, and a failed connection leaves
// the loop.
func (c *checker) deadlineBound(s ast.Stmt, w *loopWalker, k int) bool {
	if k != remoteHTTP || w.remoteCall == nil || len(w.remoteCall.Args) != 1 {
		return false
	}
	ctx := c.requestCtx(w.remoteCall.Args[0], w.body, 0)
	if ctx == nil || !c.deadlineBefore(ctx, s, w.body) {
		return false
	}
	return w.reaches(w.exits, k, outcome{err: true}) == triT
}

// requestCtx is the context a request expression was made with:
// http.NewRequestWithContext's, or the one req.WithContext or req.Clone
// is handed; through a local variable given one such request.
func (c *checker) requestCtx(e ast.Expr, body *ast.BlockStmt, depth int) ast.Expr {
	if depth > 3 {
		return nil
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		fn := c.callee(e)
		if len(e.Args) == 0 {
			return nil
		}
		if isFunc(fn, "net/http", "NewRequestWithContext") && recvNamed(fn) == nil {
			return e.Args[0]
		}
		if r := recvNamed(fn); r != nil && isNamed(r, "net/http", "Request") && (fn.Name() == "WithContext" || fn.Name() == "Clone") {
			return e.Args[0]
		}
	case *ast.Ident:
		v, ok := c.info.Uses[e].(*types.Var)
		if !ok || c.params[v] {
			return nil
		}
		if xs := c.assignsOf(body)[v]; len(xs) == 1 && xs[0] != unknownExpr {
			return c.requestCtx(xs[0], body, depth+1)
		}
	}
	return nil
}

// deadlineBefore reports whether ctx is a local variable given, once and
// before the loop s, a context with a deadline (context.WithTimeout,
// WithDeadline or their Cause forms).
func (c *checker) deadlineBefore(ctx ast.Expr, s ast.Stmt, body *ast.BlockStmt) bool {
	v, ok := c.info.Uses[identOf(ctx)].(*types.Var)
	if !ok || c.params[v] {
		return false
	}
	xs := c.assignsOf(body)[v]
	if len(xs) != 1 || xs[0] == unknownExpr || xs[0].Pos() >= s.Pos() {
		return false
	}
	call, ok := ast.Unparen(xs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	return isDeadlineCtx(c.callee(call))
}

// isDeadlineCtx reports whether fn makes a context with a deadline:
// context.WithTimeout, WithDeadline or their Cause forms.
func isDeadlineCtx(fn *types.Func) bool {
	return isFunc(fn, "context", "WithTimeout", "WithDeadline", "WithTimeoutCause", "WithDeadlineCause")
}
