package retryloop

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// rican7Wait reports a call through a local variable the function gives
// only Rican7/retry strategies that wait (wait :=
// strategy.Backoff(backoff.Linear(d)); … wait(i)): the strategy sleeps
// with time.Sleep, its duration randomised only by BackoffWithJitter
// (strategy.Delay sleeps once, before the first attempt: deaf, with no
// schedule to jitter).
func (c *checker) rican7Wait(call *ast.CallExpr, body *ast.BlockStmt) (waitInfo, bool) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || body == nil {
		return waitInfo{}, false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || v.IsField() || isPkgVar(v) {
		return waitInfo{}, false
	}
	srcs := c.assignedIn(v, body)
	if len(srcs) == 0 {
		return waitInfo{}, false
	}
	sched := -1
	for _, e := range srcs {
		got := schedUnknown
		if mk, ok := ast.Unparen(e).(*ast.CallExpr); ok {
			if f := c.callee(mk); f != nil && funcPath(f) == rican7Strat {
				switch f.Name() {
				case "Backoff", "Wait":
					got = schedPure
				case "BackoffWithJitter":
					got = schedJitter
				case "Delay":
					got = schedOnce
				}
			}
		}
		if got == schedUnknown {
			return waitInfo{}, false
		}
		if sched == -1 {
			sched = got
		} else {
			sched = joinSched(sched, got)
		}
	}
	w := waitInfo{deaf: true, helper: id.Name}
	switch sched {
	case schedPure:
		w.dur = purity{kind: pPure}
	case schedJitter:
		w.dur = purity{kind: pRand}
	}
	return w, true
}

// backoffArg is the schedule of the wait.Backoff a call hands a library:
// a parameter of a function is what its callers in the package pass
// (removeTaintInBackground(k, taintRemovalBackoff, remove)), unknown when
// nothing in the package calls it (the user's choice) or a caller passes
// what cannot be seen.
func (c *checker) backoffArg(e ast.Expr, body *ast.BlockStmt) int {
	fn, i, sites := c.paramSites(e)
	if fn == nil {
		return c.waitBackoff(e, body, 0)
	}
	var args []source
	for _, s := range sites {
		if s.call.Ellipsis.IsValid() || i >= len(s.call.Args) {
			return schedUnknown
		}
		args = append(args, source{s.call.Args[i], s.body})
	}
	return joinSources(args, func(s source) int { return c.waitBackoff(s.e, s.body, 0) })
}

// waitBackoff is the schedule of an apimachinery wait.Backoff: a literal
// (or a variable given only literals, none of whose fields the function
// sets apart) is pure when its Jitter is absent or a constant zero and
// jittered when it is a positive constant; client-go's DefaultRetry and
// DefaultBackoff have a Jitter of 0.1.
func (c *checker) waitBackoff(e ast.Expr, body *ast.BlockStmt, depth int) int {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok && body != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok && c.fieldSetIn(v, body) {
			return schedUnknown // b.Jitter = …: set apart from the literal
		}
	}
	return joinSources(c.sources(e, body, depth), func(s source) int { return c.backoffLit(s.e) })
}

// backoffLit is the schedule of one wait.Backoff value. A literal with
// no Duration (or a constant zero) never waits, and one with Steps absent
// or a constant at most 1 never tries twice: neither has a schedule to
// jitter.
func (c *checker) backoffLit(e ast.Expr) int {
	if id := calleeIdent(e); id != nil {
		if v, ok := c.info.Uses[id].(*types.Var); ok && v.Pkg() != nil && v.Pkg().Path() == kRetryPath &&
			(v.Name() == "DefaultRetry" || v.Name() == "DefaultBackoff") {
			return schedJitter
		}
		if v, ok := c.info.Uses[id].(*types.Var); ok && c.pkgVars[v] != nil && !c.pkgAssigned[v] {
			return c.backoffLit(ast.Unparen(c.pkgVars[v]))
		}
		return schedUnknown
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok || !isWaitBackoff(c.info.TypeOf(lit)) {
		return schedUnknown
	}
	if !c.backoffLitWaits(lit) {
		return schedUnknown // no wait, or no second try
	}
	sched := schedPure
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return schedUnknown
		}
		k, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		tv, known := c.info.Types[kv.Value]
		known = known && tv.Value != nil
		switch k.Name {
		case "Jitter":
			if !known {
				return schedUnknown
			}
			if constant.Sign(tv.Value) > 0 {
				sched = schedJitter
			}
		}
	}
	return sched
}

// fieldSetIn reports whether body assigns to a field of v (v.Jitter = …).
func (c *checker) fieldSetIn(v *types.Var, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return !found
		}
		for _, l := range as.Lhs {
			if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok {
				if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok && c.info.Uses[id] == v {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// rican7Retry reads a Rican7/retry Retry call's strategies: a wait
// between attempts made by strategy.Backoff or Wait and none by
// BackoffWithJitter is pure (Delay sleeps once, before the first attempt:
// no retry's wait); the strategies sleep with time.Sleep, so any wait is
// deaf. A strategy of another package's making, or spread from a slice,
// leaves it unknown.
func (c *checker) rican7Retry(call *ast.CallExpr) (sched int, waits bool) {
	if call.Ellipsis.IsValid() {
		return schedUnknown, false
	}
	sched = schedPure
	between := false
	for _, a := range call.Args[1:] {
		sc, ok := ast.Unparen(a).(*ast.CallExpr)
		if !ok {
			return schedUnknown, false
		}
		f := c.callee(sc)
		if f == nil || funcPath(f) != rican7Strat {
			return schedUnknown, false
		}
		switch f.Name() {
		case "Backoff", "Wait":
			waits, between = true, true
		case "BackoffWithJitter":
			waits, between, sched = true, true, schedJitter
		case "Delay":
			waits = true // once, before the first attempt
		}
	}
	if !between {
		sched = schedUnknown
	}
	return sched, waits
}

// clockWait reports a call of an injected clock's Sleep(d) or After(d)
// (an interface method of that name and shape: jmhodges/clock,
// benbjohnson/clock, k8s.io/utils/clock and the like) as the wait the real
// clock behind it makes: time.Sleep's, deaf; time.After's, deaf when
// received from on its own.
func (c *checker) clockWait(call *ast.CallExpr, callee *types.Func, body *ast.BlockStmt, fn *types.Func) (waitInfo, bool) {
	if !isIfaceMethod(callee) || len(call.Args) != 1 || !clockShape(callee) {
		return waitInfo{}, false
	}
	w := waitInfo{dur: c.purity(call.Args[0], body, fn, 0), helper: types.ExprString(call.Fun)}
	w.deaf = callee.Name() == "Sleep" || c.bareReceive(call)
	return w, true
}

// clockShape reports whether fn is Sleep(time.Duration) with no results or
// After(time.Duration) <-chan time.Time.
func clockShape(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	if sig.Params().Len() != 1 || !isNamed(sig.Params().At(0).Type(), "time", "Duration") {
		return false
	}
	switch fn.Name() {
	case "Sleep":
		return sig.Results().Len() == 0
	case "After":
		if sig.Results().Len() != 1 {
			return false
		}
		ch, ok := sig.Results().At(0).Type().(*types.Chan)
		return ok && ch.Dir() != types.SendOnly && isNamed(ch.Elem(), "time", "Time")
	}
	return false
}

// backoffMayWait reports whether a wait.Backoff argument may wait between
// tries: true unless every way it is made is a literal with no Duration
// (or a constant zero) or with Steps of at most 1.
func (c *checker) backoffMayWait(e ast.Expr, body *ast.BlockStmt) bool {
	srcs := c.sources(e, body, 0)
	if len(srcs) == 0 {
		return true
	}
	for _, s := range srcs {
		lit, ok := s.e.(*ast.CompositeLit)
		if !ok || !isWaitBackoff(c.info.TypeOf(lit)) || c.backoffLitWaits(lit) {
			return true
		}
	}
	return false
}

// backoffLitWaits reports whether a wait.Backoff literal waits before a
// second try: a Duration and Steps above 1, or either not a constant.
func (c *checker) backoffLitWaits(lit *ast.CompositeLit) bool {
	waits, again := false, false
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		k, _ := kv.Key.(*ast.Ident)
		if k == nil {
			return true
		}
		tv, known := c.info.Types[kv.Value]
		known = known && tv.Value != nil
		switch k.Name {
		case "Duration":
			waits = !known || constant.Sign(tv.Value) != 0
		case "Steps":
			again = !known || constant.Compare(tv.Value, token.GTR, constant.MakeInt64(1))
		}
	}
	return waits && again
}
