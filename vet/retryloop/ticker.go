package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
)

// tickerWait reads a receive in a loop from a ticker made before it
// (ticker := time.NewTicker(d) … case <-ticker.C:, tick := time.Tick(d)
// … case <-tick:): the ticker paces every round, as a wait in the loop
// would. The wait is reported at the ticker's making, and offers no fix
// (a ticker jittered once is as regular as before).
func (c *checker) tickerWait(u *ast.UnaryExpr, loop ast.Stmt, fc funcCtx) (loopCall, bool) {
	if u.Op != token.ARROW {
		return loopCall{}, false
	}
	made := c.madeBefore(u.X, loop, fc.decl, "NewTicker", "Tick")
	if made == nil {
		return loopCall{}, false
	}
	dur := c.purity(made.Args[0], fc.decl, fc.durFn(), 0)
	for _, d := range c.tickerResets(u.X, loop) {
		dur = dur.and(c.purity(d, fc.decl, fc.durFn(), 0))
	}
	w := waitInfo{dur: dur, helper: "the ticker"}
	return loopCall{made, w}, true
}

// tickerResets returns the durations a loop gives the ticker x receives
// from (ticker.C) with ticker.Reset(d): each later round waits d, so a
// jittered Reset jitters the ticker however it was made.
func (c *checker) tickerResets(x ast.Expr, loop ast.Stmt) []ast.Expr {
	sel, ok := ast.Unparen(x).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "C" {
		return nil
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok || c.objOf(id) == nil {
		return nil
	}
	var ds []ast.Expr
	ast.Inspect(loop, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		if rs, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && rs.Sel.Name == "Reset" {
			if rid, ok := ast.Unparen(rs.X).(*ast.Ident); ok && c.objOf(rid) == c.objOf(id) {
				ds = append(ds, call.Args[0])
			}
		}
		return true
	})
	return ds
}

// receivesDeadline reports whether a select case receives from a timer
// made before the loop (deadline := time.After(timeout), t :=
// time.NewTimer(d) … <-t.C): it fires once, when the time is up.
func (c *checker) receivesDeadline(comm ast.Stmt, loop ast.Stmt, body *ast.BlockStmt) bool {
	x := received(comm)
	return x != nil && loop != nil && c.madeBefore(x, loop, body, "NewTimer", "After") != nil
}

// madeBefore returns the call of the time package (one of names, with one
// argument; or an injected clock's maker of the same, clockMade) that makes the channel x names — a variable, or its C field
// for a Ticker or Timer — when every assignment of it is such a call
// made outside loop; nil otherwise.
func (c *checker) madeBefore(x ast.Expr, loop ast.Stmt, body *ast.BlockStmt, names ...string) *ast.CallExpr {
	x = ast.Unparen(x)
	field := false
	if sel, ok := x.(*ast.SelectorExpr); ok && sel.Sel.Name == "C" {
		x, field = ast.Unparen(sel.X), true
	}
	id, ok := x.(*ast.Ident)
	if !ok {
		return nil
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok {
		return nil
	}
	var made *ast.CallExpr
	for _, e := range c.assignsOf(body)[v] {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok || (call.Pos() >= loop.Pos() && call.End() <= loop.End()) || len(call.Args) != 1 {
			return nil // made (or made again) in the loop: its own wait
		}
		callee := c.callee(call)
		if callee == nil {
			return nil
		}
		if field && clockMade(callee, names) {
			made = call // clock.Ticker(d) of an injected clock: a *Ticker whose C fires as time's would
			continue
		}
		if recvNamed(callee) != nil || !isFunc(callee, "time", names...) {
			return nil
		}
		// NewTicker and NewTimer give a value whose C is received from;
		// Tick and After give the channel itself.
		if n := callee.Name(); (n == "NewTicker" || n == "NewTimer") != field {
			return nil
		}
		made = call
	}
	return made
}

// nonBlockingRecvs adds to polled the receives of a select that has a
// default case: it takes a value that is ready and otherwise goes on at
// once (case <-ticker.C: refresh the token; default:), so none of them
// waits.
func nonBlockingRecvs(sel *ast.SelectStmt, polled map[ast.Expr]bool) {
	hasDefault := false
	for _, cl := range sel.Body.List {
		if cc, ok := cl.(*ast.CommClause); ok && cc.Comm == nil {
			hasDefault = true
		}
	}
	if !hasDefault {
		return
	}
	for _, cl := range sel.Body.List {
		cc, ok := cl.(*ast.CommClause)
		if !ok || cc.Comm == nil {
			continue
		}
		if u := recvOp(cc.Comm); u != nil {
			polled[u] = true
		}
	}
}

// clockMade reports whether fn is an injected clock's maker of a ticker or
// timer (benbjohnson/clock's Ticker(d) and Timer(d), or one named as the
// time package's: NewTicker(d)): an interface method of one of names,
// with or without its New, taking a Duration and giving a pointer to a
// struct whose C field is a channel of time.Time.
func clockMade(fn *types.Func, names []string) bool {
	if !isIfaceMethod(fn) {
		return false
	}
	named := false
	for _, n := range names {
		named = named || fn.Name() == n || "New"+fn.Name() == n
	}
	sig := fn.Type().(*types.Signature)
	if !named || sig.Params().Len() != 1 || !isNamed(sig.Params().At(0).Type(), "time", "Duration") || sig.Results().Len() != 1 {
		return false
	}
	ptr, ok := sig.Results().At(0).Type().(*types.Pointer)
	if !ok {
		return false
	}
	st, ok := ptr.Elem().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for i := 0; i < st.NumFields(); i++ {
		if f := st.Field(i); f.Name() == "C" {
			ch, ok := f.Type().(*types.Chan)
			return ok && isNamed(ch.Elem(), "time", "Time")
		}
	}
	return false
}
