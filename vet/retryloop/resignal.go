package retryloop

import (
	"go/ast"
	"go/types"
)

// A reconnect loop may be driven by a signal: a select case receives from
// the client's own reconnect channel, waits, dials, and on a failed dial
// sends on that channel again (directly, or through the client's
// Reconnect method), so the next round waits and dials once more. The
// wait before the dial is then a retry's, reached again on every failure;
// it goes unseen as one because an answer goes round too (the loop reads
// messages in another case).

// resignalWaits returns the waits of select cases in the loop's body that
// receive from a channel, wait, and then, under an if, send on that same
// channel again (or call a function of the package that does).
func (c *checker) resignalWaits(sc loopScan) []loopCall {
	waits := map[*ast.CallExpr]loopCall{}
	for _, lw := range sc.waits {
		waits[lw.call] = lw
	}
	var out []loopCall
	ast.Inspect(sc.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CommClause:
			var ch *types.Var
			if x := received(n.Comm); x != nil {
				ch = c.chanVar(x)
			}
			if ch == nil {
				return true
			}
			var wait *loopCall
			for _, st := range n.Body {
				if wait == nil {
					if lw, ok := c.stmtWait(st, waits); ok {
						wait = &lw
					}
					continue
				}
				if ifs, ok := st.(*ast.IfStmt); ok && c.sendsOn(ifs.Body, ch, 0) {
					out = append(out, *wait)
					break
				}
			}
		}
		return true
	})
	return out
}

// chanVar returns the variable or field a channel expression names.
func (c *checker) chanVar(e ast.Expr) *types.Var {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := c.info.Uses[e].(*types.Var)
		return v
	case *ast.SelectorExpr:
		v, _ := c.info.Uses[e.Sel].(*types.Var)
		return v
	}
	return nil
}

// stmtWait returns the wait a statement makes: one of the loop's waits
// called as a statement of its own (time.Sleep(d)), or in a select's case
// (case <-time.After(d):).
func (c *checker) stmtWait(st ast.Stmt, waits map[*ast.CallExpr]loopCall) (loopCall, bool) {
	var at []ast.Node
	switch st := st.(type) {
	case *ast.ExprStmt:
		at = append(at, st.X)
	case *ast.SelectStmt:
		for _, cc := range st.Body.List {
			if comm := cc.(*ast.CommClause).Comm; comm != nil {
				at = append(at, comm) // a case's body is not its wait
			}
		}
	}
	for _, n := range at {
		var found *loopCall
		ast.Inspect(n, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && found == nil {
				if lw, ok := waits[call]; ok {
					found = &lw
				}
			}
			return found == nil
		})
		if found != nil {
			return *found, true
		}
	}
	return loopCall{}, false
}

// sendsOn reports whether body sends on ch, or calls a function of this
// package that does (s.Reconnect()).
func (c *checker) sendsOn(body *ast.BlockStmt, ch *types.Var, depth int) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit, *ast.GoStmt:
			return false
		case *ast.SendStmt:
			found = c.chanVar(n.Chan) == ch
		case *ast.CallExpr:
			if d := c.decls[c.callee(n)]; d != nil && depth < 2 && d.Body != nil {
				found = c.sendsOn(d.Body, ch, depth+1)
			}
		}
		return !found
	})
	return found
}
