package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// sleeper is a goroutine started only to wait and then signal:
//
//	ping := make(chan struct{})
//	go func() { time.Sleep(d); close(ping) }()
//	select {
//	case <-ping:
//	case <-ctx.Done():
//		return ctx.Err()
//	}
//
// The caller waits d by receiving from the channel; it hears its context
// when the receive is one case of a select beside ctx.Done(). The
// goroutine's own sleep is then no deaf wait: nothing waits on it but the
// select, which is not deaf.
type sleeper struct {
	sleep *ast.CallExpr // the goroutine's time.Sleep
	ch    *types.Var    // the channel it closes or sends on
}

// sleeperGo reports whether g starts a sleeper: a function literal whose
// body is time.Sleep(d) followed by close(ch) or ch <- v, ch a variable.
func (c *checker) sleeperGo(g *ast.GoStmt) (sleeper, bool) {
	lit, ok := ast.Unparen(g.Call.Fun).(*ast.FuncLit)
	if !ok || len(g.Call.Args) != 0 || len(lit.Body.List) != 2 {
		return sleeper{}, false
	}
	es, ok := lit.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return sleeper{}, false
	}
	sleep, ok := ast.Unparen(es.X).(*ast.CallExpr)
	if !ok || len(sleep.Args) != 1 {
		return sleeper{}, false
	}
	if fn := c.callee(sleep); fn == nil || recvNamed(fn) != nil || !isFunc(fn, "time", "Sleep") {
		return sleeper{}, false
	}
	var ch ast.Expr
	switch s := lit.Body.List[1].(type) {
	case *ast.SendStmt:
		ch = s.Chan
	case *ast.ExprStmt:
		call, ok := ast.Unparen(s.X).(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return sleeper{}, false
		}
		if b, ok := c.info.Uses[identOf(call.Fun)].(*types.Builtin); !ok || b.Name() != "close" {
			return sleeper{}, false
		}
		ch = call.Args[0]
	}
	id, ok := ast.Unparen(ch).(*ast.Ident)
	if !ok {
		return sleeper{}, false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || !isChan(v.Type()) {
		return sleeper{}, false
	}
	return sleeper{sleep: sleep, ch: v}, true
}

// receipt reports whether body receives the sleeper's signal, and
// whether it hears the context beside it: every receive of the signal is
// one case of a select that also receives from a context's Done(), so
// the wait ends on the context as on the signal. A bare receive (<-ping
// on its own) leaves the wait as deaf as the sleep.
func (c *checker) receipt(s sleeper, body *ast.BlockStmt) (got, heard bool) {
	inSelect := map[ast.Expr]bool{}
	found, bare := false, false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectStmt:
			done := false
			for _, cl := range n.Body.List {
				if c.receivesDone(cl.(*ast.CommClause).Comm) {
					done = true
				}
			}
			for _, cl := range n.Body.List {
				if x := received(cl.(*ast.CommClause).Comm); x != nil && c.varOf(x) == s.ch {
					inSelect[x] = true
					found = true
					bare = bare || !done
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && !inSelect[n.X] && c.varOf(n.X) == s.ch {
				bare = true
			}
		}
		return true
	})
	return found || bare, !bare
}

// sleeperWait returns the loop's wait for a sleeper started and received
// from in it: the goroutine's time.Sleep, deaf unless the loop hears its
// context beside the signal.
func (c *checker) sleeperWait(g *ast.GoStmt, loopBody *ast.BlockStmt, fc funcCtx) (loopCall, bool) {
	s, ok := c.sleeperGo(g)
	if !ok {
		return loopCall{}, false
	}
	got, heard := c.receipt(s, loopBody)
	if !got {
		return loopCall{}, false // signalled to someone else: the loop does not wait
	}
	w := waitInfo{dur: c.purity(s.sleep.Args[0], fc.decl, fc.durFn(), 0), deaf: !heard}
	return loopCall{s.sleep, w}, true
}

// sleepersIn returns the sleepers started in body whose signal body
// receives, by their sleeps, each with whether body hears it beside its
// context (one signalling a channel received elsewhere is judged as any
// goroutine's sleep). A heard one's sleep is no deaf wait, wherever it is
// checked (the goroutine's literal is checked as a body of its own); a
// deaf one's is, but is fixed where it is received, not in the
// goroutine: a return there would leave the receiver waiting for a
// signal that never comes.
func (c *checker) sleepersIn(body *ast.BlockStmt) map[*ast.CallExpr]sleeperAt {
	if out, ok := c.sleepers[body]; ok {
		return out
	}
	out := map[*ast.CallExpr]sleeperAt{}
	c.sleepers[body] = out
	ast.Inspect(body, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			if s, ok := c.sleeperGo(g); ok {
				if got, heard := c.receipt(s, body); got {
					out[s.sleep] = sleeperAt{s, heard}
				}
			}
		}
		return true
	})
	return out
}

// sleeperAt is a sleeper and whether its signal is heard with the context.
type sleeperAt struct {
	sleeper
	heard bool
}
