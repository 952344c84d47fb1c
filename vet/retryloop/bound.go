package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// isBound reports whether a condition bounds the loop: it counts, reads
// the clock, or hears the context.
func (w *loopWalker) isBound(c cond, st state) bool {
	if c.opaque == opaqueCtx && !w.c.ctxBlind {
		return true
	}
	var exprs []ast.Expr
	if c.expr != nil {
		exprs = append(exprs, c.expr)
	}
	if c.tag != nil {
		exprs = append(exprs, c.tag)
	} else {
		exprs = append(exprs, c.values...)
	}
	for _, e := range exprs {
		if w.c.boundExpr(e, w, st) {
			return true
		}
	}
	return false
}

func (c *checker) boundExpr(e ast.Expr, w *loopWalker, st state) bool {
	return c.boundExprDepth(e, w, st, 0)
}

func (c *checker) boundExprDepth(e ast.Expr, w *loopWalker, st state, depth int) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
				tx, ty := c.info.TypeOf(n.X), c.info.TypeOf(n.Y)
				if w != nil && (c.countedElem(n.X, w.body) || c.countedElem(n.Y, w.body)) {
					found = true // tries[resp.StatusCode] >= limit: a count per status
					return false
				}
				if c.hasStatus(n.X) || c.hasStatus(n.Y) {
					return true
				}
				if (tx != nil && isIntegerish(tx)) || (ty != nil && isIntegerish(ty)) ||
					isNamed(tx, "time", "Duration") || isNamed(tx, "time", "Time") {
					if w.roundLocal(n) {
						return false // rec.Expiry < now: read afresh each round, it carries nothing over
					}
					if !isNil(c.info, n.X) && !isNil(c.info, n.Y) {
						found = true
					}
				}
				if isError(tx) && isNil(c.info, n.Y) && w != nil {
					ev := &evaluator{w: w, st: st}
					if ev.srcOf(n.X) == srcBound && !c.ctxBlind {
						found = true
					}
				}
			}
		case *ast.CallExpr:
			fn := c.callee(n)
			if isFunc(fn, "time", "Since", "Until", "Now", "After", "Before") {
				if w.roundLocal(n) {
					return false // time.Now().After(rec.Expiry)
				}
				found = true
			}
			found = found || c.boundCall(n, fn)
		case *ast.SelectorExpr:
			if isShutdown(n.Sel.Name) && isBool(c.info.TypeOf(n)) {
				found = true
			}
		case *ast.Ident:
			// outOfRetries := n >= max; if outOfRetries { return }: a
			// bound kept in a local flag.
			if v, ok := c.info.Uses[n].(*types.Var); ok && w != nil && depth < 3 && isBool(v.Type()) && !c.params[v] && !isPkgVar(v) {
				for _, x := range c.assignsOf(w.body)[v] {
					if x != unknownExpr && c.boundExprDepth(x, w, st, depth+1) {
						found = true
					}
				}
				if c.setOnCancel(v, w.body) && !c.ctxBlind {
					found = true // case <-ctx.Done(): done = true
				}
			}
			if isContext(c.info.TypeOf(n)) && !c.ctxBlind {
				found = true
			}
		case ast.Expr:
			if isContext(c.info.TypeOf(n)) && !c.ctxBlind {
				found = true
			}
		}
		return true
	})
	return found
}

// boundCall reports whether a call in a condition bounds the loop by what
// the function is: a shutdown question (p.closed()), a method whose fact
// says it counts or hears a context (b.Ongoing()), or a verdict helper
// handed the loop's count that it compares (c.backoff(attempts)).
func (c *checker) boundCall(n *ast.CallExpr, fn *types.Func) bool {
	if fn != nil && len(n.Args) == 0 && isShutdown(fn.Name()) && isBool(c.info.TypeOf(n)) {
		return true // if p.closed() { return }: the owner's shutdown ends it
	}
	f := c.fact(fn)
	if f == nil {
		return false
	}
	if f.Bounds {
		return true // for b.Ongoing() { … }: it counts, or hears a context
	}
	if f.BoundParam > 0 && f.BoundParam <= len(n.Args) && !n.Ellipsis.IsValid() {
		// ok := c.backoff(attempts); if !ok { return }: the helper
		// compares the count it is handed
		if id, ok := ast.Unparen(n.Args[f.BoundParam-1]).(*ast.Ident); ok {
			v, ok := c.info.Uses[id].(*types.Var)
			return ok && !isPkgVar(v)
		}
	}
	return false
}

func isIntegerish(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&(types.IsInteger|types.IsFloat) != 0
}

// bounded reports whether a retry loop stops on its own: a range, a
// counting or clock condition, or an exit on a count, the clock or the
// context.
func (c *checker) bounded(s ast.Stmt, w *loopWalker, k int) bool {
	switch s := s.(type) {
	case *ast.RangeStmt:
		if !c.clockRange(s) {
			return true
		}
	case *ast.ForStmt:
		if s.Cond != nil && c.boundExpr(s.Cond, w, state{}) {
			if w.uncounted = c.uncountedRound(s, w, k); !w.uncounted {
				return true
			}
		}
	}
	if !c.ctxBlind && c.succeedsOnCancel(w.attemptCall) {
		return true // err := m.watch(ctx); if err == nil { break }: cancelling ends it
	}
	if c.deadlineBound(s, w, k) {
		return true // the request carries a deadline set before the loop, and its failure leaves
	}
	counters := c.loopCounters(s)
	if fs, ok := s.(*ast.ForStmt); ok && fs.Cond != nil && w.decided(cond{expr: fs.Cond}, counters) {
		return true // for policy.ShouldRetry(opts, pctx): decided out of sight
	}
	for _, e := range w.exits {
		if w.successOnly(e, k) {
			continue // after the attempt succeeded: it ends no run of failures
		}
		for _, cd := range flat(e.conds) {
			if w.uncounted && cd.expr == w.cond {
				continue // the condition every round starts with: a count some rounds skip
			}
			if w.isBound(cd, e) || w.classifierBound(cd, e) || w.decided(cd, counters) {
				return true
			}
		}
	}
	return false
}

// successOnly reports whether no failure of the attempt reaches the way
// out e: a handler's error that ends the loop once connected (if err :=
// rc.onConnect(); err != nil { log.Fatal(err) }) bounds no failures.
func (w *loopWalker) successOnly(e state, k int) bool {
	if w.attemptCall == nil || w.beforeAttempt(e) {
		return false
	}
	for _, o := range outcomes(k) {
		if o.failure() && w.reaches([]state{e}, k, o) != triF {
			return false
		}
	}
	return true
}

// beforeAttempt reports whether every test on the way out e comes before
// the attempt: a way out at the top of the round (if err := lim.Allow();
// err != nil { return err }) is met again in the round after a failure,
// though no failure of this round's attempt reaches it.
func (w *loopWalker) beforeAttempt(e state) bool {
	if w.attempt == token.NoPos || len(e.conds) == 0 {
		return false
	}
	for _, cd := range e.conds {
		if cd.expr == nil || cd.expr.Pos() >= w.attempt {
			return false
		}
	}
	return true
}

// succeedsOnCancel reports whether call is a call of a function of this
// package, handed a context, that returns a nil error when that context
// is done (case <-ctx.Done(): return nil): a loop that leaves on the
// call's success ends when the caller cancels.
func (c *checker) succeedsOnCancel(call *ast.CallExpr) bool {
	if call == nil {
		return false
	}
	fn := c.callee(call)
	d := c.decls[fn]
	if d == nil || !lastResultIsError(fn) {
		return false
	}
	sig := fn.Type().(*types.Signature)
	var ctxParam *types.Var
	for i := range sig.Params().Len() {
		if p := sig.Params().At(i); isContext(p.Type()) && i < len(call.Args) && isContext(c.info.TypeOf(call.Args[i])) {
			ctxParam = p
		}
	}
	if ctxParam == nil {
		return false
	}
	found := false
	ast.Inspect(d.Body, func(n ast.Node) bool {
		cc, ok := n.(*ast.CommClause)
		if !ok || found {
			return !found
		}
		if ch := received(cc.Comm); ch == nil || !c.doneOf(ch, ctxParam) {
			return true
		}
		for _, st := range cc.Body {
			if r, ok := st.(*ast.ReturnStmt); ok && len(r.Results) > 0 && isNil(c.info, r.Results[len(r.Results)-1]) {
				found = true
			}
		}
		return !found
	})
	return found
}

// doneOf reports whether ch is p.Done().
func (c *checker) doneOf(ch ast.Expr, p *types.Var) bool {
	call, ok := ast.Unparen(ch).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Done" && c.info.Uses[identOf(sel.X)] == p
}

// isShutdown reports whether name says its owner is closed or stopping
// (closed, isClosed, isClose, Stopped, shuttingDown, done).
func isShutdown(name string) bool {
	n := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(name, "is"), "Is"))
	if n == "close" {
		return n != strings.ToLower(name) // isClose, not Close: a question, not the method that closes
	}
	for _, w := range []string{"closed", "closing", "stopped", "stopping", "shutdown", "shuttingdown", "done", "terminated", "quit"} {
		if n == w {
			return true
		}
	}
	return false
}

// receivesSignal reports whether a select case receives from a chan
// struct{}: a done, quit or close signal.
func (c *checker) receivesSignal(comm ast.Stmt) bool {
	x := received(comm)
	if x == nil {
		return false
	}
	ch, ok := c.info.TypeOf(x).Underlying().(*types.Chan)
	if !ok {
		return false
	}
	if st, ok := ch.Elem().Underlying().(*types.Struct); ok && st.NumFields() == 0 {
		return true
	}
	// case <-c.SystemShutdown: a channel of any element whose name says
	// its owner is stopping
	var name string
	switch x := ast.Unparen(x).(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	}
	return stopChanName(name)
}

// stopChanName reports whether a channel's name says it is closed or sent
// on when its owner stops (SystemShutdown, quitCh, stopC, closing).
func stopChanName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"shutdown", "quit", "stop", "closing", "terminat", "exit"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// setOnCancel reports whether body assigns v in a select case that hears
// the context or a done signal: for !done { … case <-ctx.Done(): done =
// true }.
func (c *checker) setOnCancel(v *types.Var, body *ast.BlockStmt) bool {
	if body == nil {
		return false
	}
	return c.cancelCase(body, true, func(s ast.Stmt) bool {
		as, ok := s.(*ast.AssignStmt)
		if !ok {
			return false
		}
		for _, l := range as.Lhs {
			if id := identOf(l); id != nil && c.info.Uses[id] == v {
				return true
			}
		}
		return false
	})
}

// cancelCase reports whether a select case in body that hears a context or
// a done signal holds a statement hit says yes to. Function literals are
// looked into only when lits is set: a goroutine's assignment is the
// function's doing, its return is not the function's.
func (c *checker) cancelCase(body ast.Node, lits bool, hit func(ast.Stmt) bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return lits && !found
		case *ast.CommClause:
			if n.Comm != nil && (c.mentionsContext(n.Comm) || c.receivesSignal(n.Comm)) {
				found = found || slices.ContainsFunc(n.Body, hit)
			}
		}
		return !found
	})
	return found
}

// summarizeBound sets s.Bounds for a method with no parameters whose one
// result is a bool that, on every return, counts, reads the clock or hears
// a context (return b.ctx.Err() == nil && b.tries < b.max): a loop that
// goes on while it says so is bounded by it.
//
// So it is for a pause (it waits, and calls nothing remote) whose one
// result is a bool and that answers false in a select case that hears a
// context or a done signal (case <-r.ctx.Done(): return false): a loop
// that stops when the pause says no ends when the owner is cancelled.
func (c *checker) summarizeBound(fn *types.Func, d *ast.FuncDecl, s *FuncFact) {
	sig := fn.Type().(*types.Signature)
	if s.Waits && s.Remote == remoteNone && sig.Results().Len() == 1 && isBool(sig.Results().At(0).Type()) && d.Body != nil && c.falseOnCancel(d.Body) {
		s.Bounds = true
		return
	}
	if sig.Results().Len() == 1 && isBool(sig.Results().At(0).Type()) && d.Body != nil {
		s.BoundParam = c.boundParam(sig, d.Body)
	}
	if sig.Recv() == nil || sig.Params().Len() != 0 || sig.Results().Len() != 1 || !isBool(sig.Results().At(0).Type()) || d.Body == nil {
		return
	}
	s.Bounds = everyReturn(c.info, d.Body, 0, 1, func(e ast.Expr) bool { return c.boundExpr(e, nil, state{}) })
}

// boundParam is one more than the index of the first integer parameter
// that body compares in an if whose body returns false, or 0.
func (c *checker) boundParam(sig *types.Signature, body *ast.BlockStmt) int {
	for i := range sig.Params().Len() {
		p := sig.Params().At(i)
		if !isIntegerNotDuration(p.Type()) {
			continue
		}
		found := false
		ast.Inspect(body, func(n ast.Node) bool {
			ifs, ok := n.(*ast.IfStmt)
			if found || !ok {
				return !found
			}
			if c.comparesVar(ifs.Cond, p) && c.returnsFalse(ifs.Body) {
				found = true
			}
			return !found
		})
		if found {
			return i + 1
		}
	}
	return 0
}

// comparesVar reports whether e orders v against something (v >= max).
func (c *checker) comparesVar(e ast.Expr, v *types.Var) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok {
			return !found
		}
		switch b.Op {
		case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL:
			for _, x := range []ast.Expr{b.X, b.Y} {
				if id, ok := ast.Unparen(x).(*ast.Ident); ok && c.info.Uses[id] == v {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// returnsFalse reports whether body returns the constant false.
func (c *checker) returnsFalse(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) == 1 {
				if v, known := c.constBool(n.Results[0]); known && !v {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// falseOnCancel reports whether body returns false in a select case that
// hears a context's Done or a done signal.
func (c *checker) falseOnCancel(body *ast.BlockStmt) bool {
	return c.cancelCase(body, false, func(s ast.Stmt) bool {
		r, ok := s.(*ast.ReturnStmt)
		if !ok || len(r.Results) != 1 {
			return false
		}
		v, known := c.constBool(r.Results[0])
		return known && !v
	})
}
