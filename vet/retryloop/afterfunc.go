package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A function that, on an error, has a helper of its package arm
// time.AfterFunc(d, …) with a function that calls it again (a WebSocket
// client's connect → onDisconnect → AfterFunc(reconnectInterval,
// tryReconnect) → connect) retries by recursion through a timer: d is the
// wait between its attempts.

// scheduledSelf reads call, made on fn's error path in body, as such a helper's
// call (or as the time.AfterFunc call itself): it returns the timer's
// wait, placed at call, and whether nothing in the helper can stop the
// re-call (no guard before the timer but a test of a flag the package
// never clears; for the timer armed in place, left to fd's own reading).
// ok is false for any other call.
func (c *checker) scheduledSelf(call *ast.CallExpr, fn *types.Func, body *ast.BlockStmt) (lc loopCall, unstoppable, ok bool) {
	if c.isSelfTimer(call, fn) {
		return loopCall{call, waitInfo{dur: c.purity(call.Args[0], body, fn, 0), helper: "time.AfterFunc"}}, false, true // its guards are fd's own, read by the recursion's bound
	}
	h := c.callee(call)
	d := c.decls[h]
	if h == nil || h == fn || d == nil || d.Body == nil {
		return loopCall{}, false, false
	}
	for _, s := range d.Body.List {
		var timer *ast.CallExpr
		ast.Inspect(s, func(n ast.Node) bool {
			if x, isCall := n.(*ast.CallExpr); isCall && timer == nil && c.isSelfTimer(x, fn) {
				timer = x
			}
			return timer == nil
		})
		if timer != nil {
			w := waitInfo{dur: c.purity(timer.Args[0], d.Body, h, 0), helper: h.Name()}
			return loopCall{call, w}, !c.guardedBefore(d.Body, s), true
		}
	}
	return loopCall{}, false, false
}

// isSelfTimer reports whether call is time.AfterFunc(d, f) with f calling
// fn: a literal whose body does, fn itself, or a function of the package
// whose one statement calls fn.
func (c *checker) isSelfTimer(call *ast.CallExpr, fn *types.Func) bool {
	if !isFunc(c.callee(call), "time", "AfterFunc") || len(call.Args) != 2 {
		return false
	}
	calls := func(body *ast.BlockStmt) bool {
		found := false
		ast.Inspect(body, func(n ast.Node) bool {
			if x, isCall := n.(*ast.CallExpr); isCall && c.callsOnto(c.callee(x), fn) {
				found = true
			}
			return !found
		})
		return found
	}
	switch f := ast.Unparen(call.Args[1]).(type) {
	case *ast.FuncLit:
		return calls(f.Body)
	case *ast.Ident, *ast.SelectorExpr:
		var id *ast.Ident
		if sel, isSel := f.(*ast.SelectorExpr); isSel {
			id = sel.Sel
		} else {
			id = f.(*ast.Ident)
		}
		g, _ := c.info.Uses[id].(*types.Func)
		return c.callsOnto(g, fn)
	}
	return false
}

// callsOnto reports whether g is fn, or a function of the package whose
// one statement calls fn (func (c *conn) tryReconnect() error { return
// c.connect() }).
func (c *checker) callsOnto(g, fn *types.Func) bool {
	if g == nil {
		return false
	}
	if g == fn {
		return true
	}
	d := c.decls[g]
	if d == nil || d.Body == nil || len(d.Body.List) != 1 {
		return false
	}
	var e ast.Expr
	switch s := d.Body.List[0].(type) {
	case *ast.ExprStmt:
		e = s.X
	case *ast.ReturnStmt:
		if len(s.Results) == 1 {
			e = s.Results[0]
		}
	}
	x, isCall := ast.Unparen(e).(*ast.CallExpr)
	return isCall && c.callee(x) == fn
}

// guardedBefore reports whether a statement of body before s may leave
// it: an if that returns, unless it only tests that a bool field the
// package never sets false is unset (if !c.doReconnect { return }, with
// doReconnect only ever set true).
func (c *checker) guardedBefore(body *ast.BlockStmt, s ast.Stmt) bool {
	for _, x := range body.List {
		if x == s {
			return false
		}
		ifs, isIf := x.(*ast.IfStmt)
		if !isIf || !terminates(ifs.Body) {
			continue
		}
		u, isNot := ast.Unparen(ifs.Cond).(*ast.UnaryExpr)
		if !isNot || u.Op != token.NOT {
			return true
		}
		sel, isSel := ast.Unparen(u.X).(*ast.SelectorExpr)
		if !isSel {
			return true
		}
		v, isVar := c.info.Uses[sel.Sel].(*types.Var)
		if !isVar || !v.IsField() || !isBool(v.Type()) || c.clearedAnywhere(v) {
			return true
		}
	}
	return false
}

// clearedAnywhere reports whether the package assigns field v anything
// but the constant true.
func (c *checker) clearedAnywhere(v *types.Var) bool {
	found := false
	for _, d := range c.decls {
		if d.Body == nil {
			continue
		}
		ast.Inspect(d.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					sel, isSel := ast.Unparen(l).(*ast.SelectorExpr)
					if !isSel || c.info.Uses[sel.Sel] != v {
						continue
					}
					if len(n.Lhs) != len(n.Rhs) || !isTrue(c.info, n.Rhs[i]) {
						found = true
					}
				}
			case *ast.KeyValueExpr:
				if k, isID := n.Key.(*ast.Ident); isID && c.info.Uses[k] == v && !isTrue(c.info, n.Value) {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// isTrue reports whether e is the constant true.
func isTrue(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	return ok && tv.Value != nil && tv.Value.String() == "true"
}
