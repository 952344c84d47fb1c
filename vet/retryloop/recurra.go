package retryloop

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
)

// A retry by recursion may go round on a status: switch resp.StatusCode
// { case 503: time.Sleep(d); return api.readWithRetry(…) }. When the
// status is a 429 or a 503 and the function reads no Retry-After, the
// server's word on when to come back goes unread, as in a loop.

// recursionRetryAfter reports the first wait before a self-call that a
// 429 or a 503 reaches, in a function that reads no Retry-After.
func (c *checker) recursionRetryAfter(fd *ast.FuncDecl, fn *types.Func, calls []*ast.CallExpr) {
	if len(calls) == 0 || c.readsRetryAfterIn(fd.Body) {
		return
	}
	c.selfCallPaths(fd.Body, fn, false, func(stack []ast.Node, call *ast.CallExpr) bool {
		if !slices.Contains(calls, call) {
			return false
		}
		var which []string
		for _, st := range []int{429, 503} {
			if off, on := c.stackBranch(stack[:len(stack)-1], call, st); on && !off {
				which = append(which, fmt.Sprint(st))
			}
		}
		if ws := c.waitsBefore(stack, fd.Body, fn); len(which) > 0 && len(ws) > 0 {
			c.addRetryAfter(ws[0], which)
			return true
		}
		return false
	})
}

// readsRetryAfterIn reports whether body names a header in which the
// server says when to come back, or calls a helper that reads one.
func (c *checker) readsRetryAfterIn(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			found = found || serverWaitLit(n)
		case *ast.CallExpr:
			found = found || c.readsRetryAfter(n)
		}
		return !found
	})
	return found
}

// recursionEveryError reports a function that, when a call folding the
// answer's status into its error fails, calls itself again on that error
// alone: if err != nil { if retries < max { retries++; check(…, retries)
// }; return }. Every failed status goes round, a 401 or 404 as much as a
// 503 (unclassified), and a 429 or 503 without its Retry-After
// (retryafter) unless the function reads one.
func (c *checker) recursionEveryError(fd *ast.FuncDecl, fn *types.Func) {
	if fn == nil {
		return
	}
	c.selfCallPaths(fd.Body, fn, true, func(stack []ast.Node, call *ast.CallExpr) bool {
		remote := c.everyErrorPath(stack, fd.Body)
		if remote == nil {
			return false
		}
		c.add(finding{check: CheckUnclassified, pos: call.Pos(), end: call.End(),
			msg: fmt.Sprintf("retry by recursion re-sends on every error of %s, statuses that will not change (400, 401, 403, 404) among them: classify the failure (errors.Is/As, retry 429, 503 and 5xx) or use recoil", c.callName(remote))})
		if !c.readsRetryAfterIn(fd.Body) {
			c.add(finding{check: CheckRetryAfter, pos: call.Pos(), end: call.End(),
				msg: "retry by recursion re-sends 429 and 503 without reading Retry-After: the server said when to come back; read it (recoilhttp.ServerWait) or use recoilhttp.Transport"})
		}
		return true
	})
}

// everyErrorPath returns the remote call whose error the node at the top
// of stack is reached on, when the way there is an if testing that
// error not nil and nothing on it tests the error further (no errors.Is,
// no type assertion, no comparison); the call folds the status into its
// error and its result is assigned in body before that if. Else nil.
func (c *checker) everyErrorPath(stack []ast.Node, body *ast.BlockStmt) *ast.CallExpr {
	var errIf *ast.IfStmt
	for i := len(stack) - 2; i >= 0; i-- {
		ifs, ok := stack[i].(*ast.IfStmt)
		if !ok || stack[i+1] != ifs.Body {
			continue
		}
		if c.errNotNil(ifs.Cond) {
			errIf = ifs
			break
		}
		if c.testsError(ifs.Cond) || c.hasStatus(ifs.Cond) {
			return nil // a classification on the way
		}
	}
	if errIf == nil || c.resetsCredentials(errIf.Body) {
		return nil // none, or a re-authentication before the one more try
	}
	b := ast.Unparen(errIf.Cond).(*ast.BinaryExpr)
	errID := identOf(b.X)
	if errID == nil {
		errID = identOf(b.Y)
	}
	if errID == nil {
		return nil
	}
	errObj := c.info.ObjectOf(errID)
	var remote *ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || as.Pos() > errIf.Pos() || len(as.Rhs) != 1 || len(as.Lhs) == 0 {
			return remote == nil
		}
		id := identOf(as.Lhs[len(as.Lhs)-1])
		call, isCall := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if id == nil || !isCall || c.info.ObjectOf(id) != errObj {
			return true
		}
		callee := c.callee(call)
		if c.remoteKind(call) == remoteSDK || callee != nil && funcPath(callee) != "net/http" && c.foldsStatus(callee) {
			remote = call
		} else {
			remote = nil // a later assignment from a call that does not fold
		}
		return true
	})
	return remote
}

// selfCallPaths walks body down to each call of fn, goroutines left out
// (and function literals too when skipLits), handing visit the nodes on
// the way to the call, the call last; it stops once visit says done.
func (c *checker) selfCallPaths(body *ast.BlockStmt, fn *types.Func, skipLits bool, visit func(stack []ast.Node, call *ast.CallExpr) (done bool)) {
	var stack []ast.Node
	done := false
	ast.Inspect(body, func(n ast.Node) bool {
		if done {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		switch n.(type) {
		case *ast.GoStmt:
			return false
		case *ast.FuncLit:
			if skipLits {
				return false
			}
		}
		stack = append(stack, n)
		if call, ok := n.(*ast.CallExpr); ok && c.callee(call) == fn {
			done = visit(stack, call)
		}
		return true
	})
}
