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
	var out []loopCall
	for _, lw := range sc.waits {
		if lw.call.Pos() > recv {
			out = append(out, lw)
		}
	}
	return out
}

// sessionEndRecv returns where body first blocks on a receive from a
// channel attempt hands back, outside select statements, function
// literals and inner loops; token.NoPos if it never does.
func (c *checker) sessionEndRecv(body *ast.BlockStmt, attempt *ast.CallExpr) token.Pos {
	at := token.NoPos
	ast.Inspect(body, func(n ast.Node) bool {
		if at != token.NoPos {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit, *ast.SelectStmt, *ast.ForStmt, *ast.RangeStmt:
			return false
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && c.attemptChan(n.X, body, attempt) {
				at = n.End()
			}
		}
		return true
	})
	return at
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
