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
	var stack []ast.Node
	done := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if done {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if _, isGo := n.(*ast.GoStmt); isGo {
			return false
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok || !slices.Contains(calls, call) {
			return true
		}
		var which []string
		for _, st := range []int{429, 503} {
			if slices.Contains(c.pathStatuses(stack), st) {
				which = append(which, fmt.Sprint(st))
			}
		}
		if ws := c.waitsBefore(stack, fd.Body, fn); len(which) > 0 && len(ws) > 0 {
			c.addRetryAfter(ws[0], which)
			done = true
		}
		return true
	})
}

// pathStatuses returns the failed statuses the branches on the way to
// the node at the top of stack hold on, up to the innermost function
// (literal): a status switch's cases, an if's test of the status.
func (c *checker) pathStatuses(stack []ast.Node) []int {
	var out []int
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			return out
		case *ast.CaseClause:
			out = append(out, c.caseStatuses(stack, i)...)
		case *ast.IfStmt:
			if i+1 < len(stack) && stack[i+1] == n.Body {
				out = append(out, c.failedStatuses(n.Cond)...)
			}
		}
	}
	return out
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
