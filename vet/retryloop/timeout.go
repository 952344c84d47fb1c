package retryloop

import (
	"go/ast"
	"go/types"
)

// A timer in a select beside a case that receives an answer is a timeout
// on waiting for that answer, not a pause: NextMsg(timeout) waits for a
// message or gives up, and a flush that may hang is given a moment to
// finish. A function that waits only that way is no waiting helper: a
// loop that calls it makes an attempt, not a pause, and the error it
// returns is the attempt's.

// timeoutWaits returns, among waits (calls found in body), those whose
// timer is a select case beside a case that receives an answer: a value
// received (msg := <-ch), a value sent (ch <- v), or the signal of a
// channel made here that a goroutine started here sends on or closes.
func (c *checker) timeoutWaits(body *ast.BlockStmt, waits []*ast.CallExpr) map[*ast.CallExpr]bool {
	if len(waits) == 0 {
		return nil
	}
	isWait := map[*ast.CallExpr]bool{}
	for _, w := range waits {
		isWait[w] = true
	}
	held := c.callsHeld(body, func(call *ast.CallExpr) bool { return isWait[call] }) // t := time.NewTimer(d)
	signals := c.goroutineSignals(body)
	out := map[*ast.CallExpr]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectStmt)
		if !ok {
			return true
		}
		var timers []*ast.CallExpr
		answer := false
		for _, s := range sel.Body.List {
			cc := s.(*ast.CommClause)
			if t := c.timerOf(ast.Unparen(received(cc.Comm)), isWait, held); t != nil {
				timers = append(timers, t)
				continue
			}
			answer = answer || c.answers(cc.Comm, signals)
		}
		if answer {
			for _, t := range timers {
				out[t] = true
			}
		}
		return true
	})
	return out
}

// timerOf returns the wait call whose channel ch is: the call itself
// (time.After(d)), or a variable holding it (t.C, or after).
func (c *checker) timerOf(ch ast.Expr, isWait map[*ast.CallExpr]bool, held map[types.Object]*ast.CallExpr) *ast.CallExpr {
	switch x := ch.(type) {
	case *ast.CallExpr:
		if isWait[x] {
			return x
		}
	case *ast.SelectorExpr:
		if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && x.Sel.Name == "C" {
			return held[c.info.Uses[id]]
		}
	case *ast.Ident:
		return held[c.info.Uses[x]]
	}
	return nil
}

// answers reports whether a select case waits for an answer rather than
// for cancellation: it sends, binds what it receives from a channel that
// is no context's, or receives a signal a goroutine of this function
// gives.
func (c *checker) answers(comm ast.Stmt, signals map[types.Object]bool) bool {
	switch s := comm.(type) {
	case *ast.SendStmt:
		return true
	case *ast.AssignStmt:
		ch := received(s)
		return ch != nil && !c.mentionsContext(ch)
	case *ast.ExprStmt:
		if id, ok := ast.Unparen(received(s)).(*ast.Ident); ok {
			return signals[c.info.Uses[id]]
		}
	}
	return false
}

// goroutineSignals returns the channels made in body that a goroutine
// started in body sends on or closes: a completion signal.
func (c *checker) goroutineSignals(body *ast.BlockStmt) map[types.Object]bool {
	made := c.callsHeld(body, func(call *ast.CallExpr) bool { return isBuiltin(c.info, call, "make") })
	out := map[types.Object]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		g, ok := n.(*ast.GoStmt)
		if !ok {
			return true
		}
		ast.Inspect(g.Call, func(n ast.Node) bool {
			var ch ast.Expr
			switch n := n.(type) {
			case *ast.SendStmt:
				ch = n.Chan
			case *ast.CallExpr:
				if isBuiltin(c.info, n, "close") && len(n.Args) == 1 {
					ch = n.Args[0]
				}
			}
			if id, ok := ast.Unparen(ch).(*ast.Ident); ok && made[c.info.Uses[id]] != nil {
				out[c.info.Uses[id]] = true
			}
			return true
		})
		return false
	})
	return out
}

// isBuiltin reports whether call calls the builtin function name.
func isBuiltin(info *types.Info, call *ast.CallExpr, name string) bool {
	if call == nil {
		return false
	}
	b, ok := info.Uses[calleeIdent(call.Fun)].(*types.Builtin)
	return ok && b.Name() == name
}

// callsHeld returns the variables body assigns a call keep accepts
// (t := time.NewTimer(d), done := make(chan bool)), each with its call.
func (c *checker) callsHeld(body *ast.BlockStmt, keep func(*ast.CallExpr) bool) map[types.Object]*ast.CallExpr {
	out := map[types.Object]*ast.CallExpr{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, r := range as.Rhs {
			call, ok := ast.Unparen(r).(*ast.CallExpr)
			if !ok || !keep(call) {
				continue
			}
			if id, ok := as.Lhs[i].(*ast.Ident); ok {
				if o := c.objOf(id); o != nil {
					out[o] = call
				}
			}
		}
		return true
	})
	return out
}
