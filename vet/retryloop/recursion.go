package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A function that, on an error, waits and calls itself again retries by
// recursion (sarama's metadata refresh: retry := func(err error) error {
// time.Sleep(backoff); return client.tryRefreshMetadata(…) }). Its waits
// are a retry loop's: they are checked for jitter as a loop's are.

// recursion returns the waits that precede, on the way to it, a call of
// fd's function to itself made on an error path — in a block enclosing
// the call, before it, with an error tested on the way or handed to the
// function literal the call is in — and the self-calls they precede.
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
		if !ok || c.callee(call) != fn || !c.onErrorPath(stack) {
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
			if i+1 < len(stack) && stack[i+1] == n.Body && len(c.failedStatuses(n.Cond)) > 0 {
				return true
			}
		case *ast.CaseClause:
			if len(c.caseStatuses(stack, i)) > 0 {
				return true
			}
		}
	}
	return false
}

// caseStatuses returns the failed statuses (400 and up) a case clause at
// stack[i] names, when its switch's tag is an HTTP status (switch
// resp.StatusCode { case 400: … case 503: … }); nil for any other clause.
func (c *checker) caseStatuses(stack []ast.Node, i int) []int {
	cc := stack[i].(*ast.CaseClause)
	if i < 2 {
		return nil
	}
	sw, ok := stack[i-2].(*ast.SwitchStmt)
	if !ok || sw.Tag == nil || !c.isStatus(sw.Tag) {
		return nil
	}
	var out []int
	for _, e := range cc.List {
		if v, ok := c.constStatus(e); ok && v >= 400 {
			out = append(out, v)
		}
	}
	return out
}

// failedStatuses returns the failed statuses an if's test of an HTTP
// status holds on: resp.StatusCode == 503 names 503, a test against 400 or
// more (>= 500, != 200, > 399) names 429 and 503 when it holds on them.
func (c *checker) failedStatuses(cond ast.Expr) []int {
	var out []int
	ast.Inspect(cond, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok {
			return true
		}
		x, y, op := b.X, b.Y, b.Op
		if _, k := c.constStatus(x); k {
			x, y, op = y, x, mirror(op)
		}
		v, isConst := c.constStatus(y)
		if !isConst || !c.isStatus(x) {
			return true
		}
		switch op {
		case token.EQL:
			if v >= 400 {
				out = append(out, v)
			}
		case token.NEQ, token.GEQ, token.GTR:
			for _, st := range []int{429, 503} {
				if op == token.NEQ && v < 300 || op == token.GEQ && st >= v || op == token.GTR && st > v {
					out = append(out, st)
				}
			}
		}
		return false
	})
	return out
}

// mirror returns the comparison that holds with its operands swapped.
func mirror(op token.Token) token.Token {
	switch op {
	case token.LSS:
		return token.GTR
	case token.GTR:
		return token.LSS
	case token.LEQ:
		return token.GEQ
	case token.GEQ:
		return token.LEQ
	}
	return op
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
