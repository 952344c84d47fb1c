package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A reconnect loop often opens its connection and then blocks until the
// connection tells it that it closed:
//
//	for {
//		closed, err := t.connect(url) // or conn, err := amqp.Dial(url) … <-conn.NotifyClose(…)
//		if err != nil {
//			log.Print(err)
//		} else {
//			err = <-closed
//		}
//		time.Sleep(5 * time.Second)
//	}
//
// Every round goes round, a success as much as a failure, so the wait
// looks like a poll's pace; but a success's round ends only when the
// connection is lost, so the wait after that receive paces reconnects to
// a broker that dropped every client at once — a retry's wait.

// sessionEndWaits returns the waits a loop reaches after a blocking
// receive from a channel its attempt hands back (the attempt's own result,
// or what a method of that result hands back): nil if it has none.
func (c *checker) sessionEndWaits(sc loopScan, attempt *ast.CallExpr) []loopCall {
	if attempt == nil {
		return nil
	}
	recv := c.sessionEndRecv(sc.body, attempt)
	if recv == token.NoPos {
		return nil
	}
	top := topLevelAt(sc.body, recv)
	var out []loopCall
	for _, lw := range sc.waits {
		// after the receive; or, where the round always blocks there,
		// anywhere in the round's own statements: a failed attempt
		// leaves the signal given, and the pause is its only pace
		if lw.call.Pos() > recv || top && roundWait(lw.call, sc.body) {
			out = append(out, lw)
		}
	}
	return out
}

// roundWait reports whether call is a statement of body's own list, or
// received from as one (<-time.After(d)).
func roundWait(call *ast.CallExpr, body *ast.BlockStmt) bool {
	for _, st := range body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			continue
		}
		x := ast.Unparen(es.X)
		if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			x = ast.Unparen(u.X)
		}
		if x == call {
			return true
		}
	}
	return false
}

// topLevelAt reports whether pos ends a statement of body's own list.
func topLevelAt(body *ast.BlockStmt, pos token.Pos) bool {
	for _, st := range body.List {
		if st.End() == pos {
			return true
		}
	}
	return false
}

// sessionEndRecv returns where body first blocks on a receive of a close
// signal (attemptChan, closedByWorker), outside function literals and
// inner loops — bare, or in a select with no default whose every other
// case leaves the function (case <-disconnected: case <-stop: return);
// token.NoPos if it never does.
func (c *checker) sessionEndRecv(body *ast.BlockStmt, attempt *ast.CallExpr) token.Pos {
	at := token.NoPos
	signal := func(ch ast.Expr) bool {
		return c.attemptChan(ch, body, attempt) || c.closedByWorker(ch, body) || c.sessionCtx(ch, attempt)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if at != token.NoPos {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt:
			return false
		case *ast.SelectStmt:
			if p := selectEnd(n, signal); p != token.NoPos {
				at = p
			}
			return false
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && signal(n.X) {
				at = n.End()
			}
		}
		return true
	})
	return at
}

// selectEnd returns the end of a select with no default that receives a
// close signal in one case while every other case returns: the select
// ends when the signal comes (or the function does). token.NoPos for any
// other select.
func selectEnd(sel *ast.SelectStmt, signal func(ast.Expr) bool) token.Pos {
	found := false
	for _, cl := range sel.Body.List {
		cc := cl.(*ast.CommClause)
		if cc.Comm == nil {
			return token.NoPos // a default: it does not block
		}
		if ch := received(cc.Comm); ch != nil && signal(ch) {
			found = true
			continue
		}
		if len(cc.Body) == 0 {
			return token.NoPos
		}
		if _, ok := cc.Body[len(cc.Body)-1].(*ast.ReturnStmt); !ok {
			return token.NoPos
		}
	}
	if !found {
		return token.NoPos
	}
	return sel.End()
}

// closedByWorker reports whether ch is a variable the loop's body makes
// (disconnected = make(chan struct{})) and a goroutine it starts closes,
// nothing sending on it: a worker's way of saying the connection it
// serves has ended.
func (c *checker) closedByWorker(ch ast.Expr, body *ast.BlockStmt) bool {
	v := c.varOf(ch)
	if v == nil || !isChan(v.Type()) {
		return false
	}
	made := false
	for _, x := range c.assignsOf(body)[v] {
		if call, ok := ast.Unparen(x).(*ast.CallExpr); ok && isBuiltin(c.info, call, "make") {
			made = true
		}
	}
	if !made {
		return false
	}
	closed, sent := false, false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			ast.Inspect(n, func(m ast.Node) bool {
				if call, ok := m.(*ast.CallExpr); ok && isBuiltin(c.info, call, "close") && len(call.Args) == 1 && c.varOf(call.Args[0]) == v {
					closed = true
				}
				return true
			})
			return false
		case *ast.SendStmt:
			sent = sent || c.varOf(n.Chan) == v
		}
		return true
	})
	return closed && !sent
}

// attemptChan reports whether ch is a channel of close signals that
// attempt hands back: a variable assigned from it, or a method call (from
// another package) on a variable assigned from it.
func (c *checker) attemptChan(ch ast.Expr, body *ast.BlockStmt, attempt *ast.CallExpr) bool {
	if !closeSignal(c.info.TypeOf(ch)) {
		return false
	}
	from := func(e ast.Expr) bool {
		v := c.varOf(e)
		if v == nil {
			return false
		}
		for _, x := range c.assignsOf(body)[v] {
			if ast.Unparen(x) == attempt {
				return true
			}
		}
		return false
	}
	if call, ok := ast.Unparen(ch).(*ast.CallExpr); ok {
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		return ok && c.streamCall(call) && from(sel.X)
	}
	return from(ch)
}

// closeSignal reports whether t is a channel that says a connection ended:
// of errors (chan *amqp.Error, chan error) or of bare signals (chan
// struct{}). A channel of messages is a stream's, its receive a success.
func closeSignal(t types.Type) bool {
	if t == nil {
		return false
	}
	ch, ok := t.Underlying().(*types.Chan)
	if !ok {
		return false
	}
	if st, ok := ch.Elem().Underlying().(*types.Struct); ok {
		return st.NumFields() == 0
	}
	return isError(ch.Elem()) || implementsError(ch.Elem())
}

// sessionCtx reports whether ch is x.Done() on a context field the
// attempt's function (a method of the package) sets: a connect that
// keeps the new connection's context (c.currCtx = ctx), cancelled when
// the connection closes.
func (c *checker) sessionCtx(ch ast.Expr, attempt *ast.CallExpr) bool {
	call, ok := ast.Unparen(ch).(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	done, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || done.Sel.Name != "Done" || !isContext(c.info.TypeOf(done.X)) {
		return false
	}
	field, ok := ast.Unparen(done.X).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	v, ok := c.info.Uses[field.Sel].(*types.Var)
	d := c.decls[c.callee(attempt)]
	if !ok || !v.IsField() || d == nil || d.Body == nil {
		return false
	}
	set := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for _, l := range as.Lhs {
				if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok && c.info.Uses[sel.Sel] == v {
					set = true
				}
			}
		}
		return !set
	})
	return set
}
