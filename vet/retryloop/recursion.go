package retryloop

import (
	"go/ast"
	"go/types"
)

// A function that, on an error, waits and calls itself again retries by
// recursion (sarama's metadata refresh: retry := func(err error) error {
// time.Sleep(backoff); return client.tryRefreshMetadata(…) }). Its waits
// are a retry loop's: they are checked for jitter as a loop's are.

// recursion returns the waits that precede, on the way to it, a call of
// fd's function to itself made on an error path — in a block enclosing
// the call, before it, with an error tested on the way or handed to the
// function literal the call is in — and the self-calls they precede; and
// the calls that have a timer call fn again (scheduledSelf), with the
// timer's wait.
func (c *checker) recursion(fd *ast.FuncDecl, fn *types.Func) ([]loopCall, []*ast.CallExpr) {
	if fn == nil {
		return nil, nil
	}
	var out []loopCall
	var calls []*ast.CallExpr
	seen := map[*ast.CallExpr]bool{}
	var stack []ast.Node
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if _, isGo := n.(*ast.GoStmt); isGo {
			return false // another goroutine's recursion is not this call's retry
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok || !c.onErrorPath(stack) {
			return true
		}
		if c.callee(call) != fn {
			if lc, unstoppable, ok := c.scheduledSelf(call, fn, fd.Body); ok && !seen[call] {
				seen[call] = true // the call arms a timer that calls fn again
				out = append(out, lc)
				if unstoppable {
					calls = append(calls, call)
				}
			}
			return true
		}
		ws := c.waitsBefore(stack, fd.Body, fn)
		if len(ws) > 0 {
			calls = append(calls, call)
		}
		for _, w := range ws {
			if !seen[w.call] {
				seen[w.call] = true
				out = append(out, w)
			}
		}
		return true
	})
	return out, calls
}

// onErrorPath reports whether the innermost function (literal) around the
// node at the top of stack tests an error on the way to it, or is handed
// one.
func (c *checker) onErrorPath(stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			for _, f := range n.Type.Params.List {
				if isError(c.info.TypeOf(f.Type)) {
					return true
				}
			}
			return false
		case *ast.IfStmt:
			if i+1 < len(stack) && (stack[i+1] == n.Body || stack[i+1] == n.Else) && c.testsError(n.Cond) {
				return true
			}
			if i+1 < len(stack) && stack[i+1] == n.Body && failedHolds(func(st int) (bool, bool) { return c.statusCond(n.Cond, st) }) {
				return true
			}
		case *ast.CaseClause:
			if sw, ok := parentSwitch(stack, i); ok && failedHolds(func(st int) (bool, bool) {
				_, sure := c.caseHolds(sw, n, st)
				return sure, true
			}) {
				return true
			}
		}
	}
	return false
}

// failedHolds reports whether a test of the status, asked by holds, is
// sure to hold on some failed status (400 and up): a branch a failed
// answer takes (case 503:, if resp.StatusCode >= 500 { … }).
func failedHolds(holds func(st int) (v, ok bool)) bool {
	for _, st := range probeStatuses {
		if v, ok := holds(st); st >= 400 && ok && v {
			return true
		}
	}
	return false
}

// parentSwitch returns the switch whose case clause is stack[i].
func parentSwitch(stack []ast.Node, i int) (*ast.SwitchStmt, bool) {
	if i < 2 {
		return nil, false
	}
	sw, ok := stack[i-2].(*ast.SwitchStmt)
	return sw, ok
}

// testsError reports whether e involves an error value.
func (c *checker) testsError(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok && isError(c.info.TypeOf(x)) {
			found = true
		}
		return !found
	})
	return found
}

// waitsBefore returns the waits in the statements that come before the
// node at the top of stack in each block enclosing it, up to the innermost
// function (literal).
func (c *checker) waitsBefore(stack []ast.Node, decl *ast.BlockStmt, fn *types.Func) []loopCall {
	var out []loopCall
	for i := len(stack) - 1; i > 0; i-- {
		if _, ok := stack[i].(*ast.FuncLit); ok {
			break
		}
		list, ok := stmtList(stack[i-1])
		if !ok {
			continue
		}
		for _, s := range list {
			if s == stack[i] {
				break
			}
			out = append(out, c.waitsIn(s, decl, fn)...)
		}
	}
	return out
}

// waitsIn returns the wait calls in s, function literals and goroutines
// excluded.
func (c *checker) waitsIn(s ast.Node, decl *ast.BlockStmt, fn *types.Func) []loopCall {
	var out []loopCall
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.CallExpr:
			if w, ok := c.wait(n, decl, fn); ok {
				out = append(out, loopCall{n, w})
			}
		}
		return true
	})
	return out
}

// stmtList returns the statements a block, a case clause or a select
// clause holds; ok is false for any other node.
func stmtList(n ast.Node) ([]ast.Stmt, bool) {
	switch b := n.(type) {
	case *ast.BlockStmt:
		return b.List, true
	case *ast.CaseClause:
		return b.Body, true
	case *ast.CommClause:
		return b.Body, true
	}
	return nil, false
}
