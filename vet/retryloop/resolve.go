package retryloop

import (
	"go/ast"
	"go/types"
	"strings"
)

// A call through an interface (policy.GetInterval(i), r.bo.Pause()) is
// resolved to the concrete methods the package can be seen to put behind
// it: the values it gives the receiver (a local variable's assignments, a
// configuration field's defaults, a constructor's returns), or else the
// one type of the package that implements the interface. What the user
// may configure instead is out of sight, so what these methods return is
// the duration "by default".

// isIfaceMethod reports whether fn is an interface's abstract method.
func isIfaceMethod(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	return ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type())
}

// implTargets returns the concrete methods of this package that an
// interface method call can reach. ok is false if any is out of sight.
func (c *checker) implTargets(call *ast.CallExpr, m *types.Func, body *ast.BlockStmt) ([]*types.Func, bool) {
	sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !isSel {
		return nil, false
	}
	vals, ok := c.concreteValues(sel.X, body, 0)
	if !ok || len(vals) == 0 {
		if t, ok := c.soleImpl(m); ok {
			return []*types.Func{t}, true
		}
		return nil, false
	}
	var out []*types.Func
	seen := map[*types.Func]bool{}
	for _, v := range vals {
		obj, _, _ := types.LookupFieldOrMethod(c.info.TypeOf(v), true, c.pass.Pkg, m.Name())
		t, isFunc := obj.(*types.Func)
		if !isFunc || c.decls[t] == nil {
			return nil, false
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, true
}

// concreteValues returns the expressions of a concrete type that flow into
// e: e itself if its type is not an interface, else the values the package
// gives the variable or field it names, or the function it calls returns.
func (c *checker) concreteValues(e ast.Expr, body *ast.BlockStmt, depth int) ([]ast.Expr, bool) {
	if depth > 4 || e == nil || e == unknownExpr {
		return nil, false
	}
	if isNil(c.info, e) {
		return nil, true // a nil default: the user must set it
	}
	if t := c.info.TypeOf(e); t != nil && !types.IsInterface(t) {
		return []ast.Expr{e}, true
	}
	var from []fieldValue
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := c.info.Uses[e].(*types.Var)
		if !ok || c.params[v] {
			return nil, false
		}
		if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			init, ok := c.pkgVars[v]
			if !ok {
				return nil, false
			}
			from = []fieldValue{{init, nil}}
		} else {
			for _, x := range c.assignsOf(body)[v] {
				from = append(from, fieldValue{x, body})
			}
		}
	case *ast.SelectorExpr:
		v, ok := c.info.Uses[e.Sel].(*types.Var)
		if !ok || !v.IsField() {
			return nil, false
		}
		from = c.fieldValues[v]
	case *ast.CallExpr:
		return c.returnedValues(e, depth)
	default:
		return nil, false
	}
	if len(from) == 0 {
		return nil, false
	}
	var out []ast.Expr
	for _, fv := range from {
		xs, ok := c.concreteValues(fv.expr, fv.body, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, xs...)
	}
	return out, true
}

// returnedValues returns the concrete values a function of this package
// returns as its first result.
func (c *checker) returnedValues(call *ast.CallExpr, depth int) ([]ast.Expr, bool) {
	d := c.decls[c.callee(call)]
	if d == nil {
		return nil, false
	}
	var out []ast.Expr
	ok := ownReturns(d.Body, func(r *ast.ReturnStmt) bool {
		if len(r.Results) == 0 {
			return false
		}
		xs, good := c.concreteValues(r.Results[0], d.Body, depth+1)
		out = append(out, xs...)
		return good
	})
	return out, ok
}

// ownReturns calls f on each return statement of body, those of function
// literals inside it left out, until f returns false, and reports whether
// it never did.
func ownReturns(body *ast.BlockStmt, f func(*ast.ReturnStmt) bool) bool {
	ok := true
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			ok = ok && f(n)
		}
		return ok
	})
	return ok
}

// soleImpl returns the method m of the one named type of this package that
// implements m's interface, an interface of this package.
func (c *checker) soleImpl(m *types.Func) (*types.Func, bool) {
	impls, ok := c.pkgImpls(m)
	if !ok || len(impls) != 1 {
		return nil, false
	}
	return impls[0], true
}

// pkgImpls returns the method m of every named type of this package that
// implements m's interface, an interface of this package; ok is false if
// one of them is not declared here (a method promoted from another
// package's embedded type).
func (c *checker) pkgImpls(m *types.Func) ([]*types.Func, bool) {
	recv := m.Type().(*types.Signature).Recv().Type()
	named, ok := recv.(*types.Named)
	if !ok || named.Obj().Pkg() != c.pass.Pkg {
		return nil, false
	}
	iface := named.Underlying().(*types.Interface)
	var found []*types.Func
	scope := c.pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) {
			continue
		}
		t := tn.Type()
		if !types.Implements(t, iface) && !types.Implements(types.NewPointer(t), iface) {
			continue
		}
		obj, _, _ := types.LookupFieldOrMethod(t, true, c.pass.Pkg, m.Name())
		f, isFunc := obj.(*types.Func)
		if !isFunc || c.decls[f] == nil {
			return nil, false
		}
		found = append(found, f)
	}
	return found, true
}

// ifacePurity says what an interface method call returns, from the
// concrete methods behind it; pure only by default.
func (c *checker) ifacePurity(call *ast.CallExpr, m *types.Func, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if i, ok := c.policyParam(call, m, fn); ok {
		return purity{kind: pParam, params: 1 << i} // the policy the caller hands in
	}
	if f, ok := c.policyField(call, m, fn); ok {
		return purity{kind: pField, field: f} // the policy the receiver's constructor was handed
	}
	targets, ok := c.implTargets(call, m, body)
	if !ok || len(targets) == 0 {
		return purity{}
	}
	p := purity{kind: pNone}
	for _, t := range targets {
		p = p.and(c.bindParams(c.resultPurity(t, depth+1), call, body, fn, depth))
	}
	switch p.kind {
	case pNone:
		return purity{}
	case pPure:
		p.byDefault = true
	}
	return p
}

// ifaceFact returns what is known of the one concrete method behind an
// interface method call (bo.Wait(ctx) with one implementation in sight).
func (c *checker) ifaceFact(call *ast.CallExpr, m *types.Func, body *ast.BlockStmt) (*FuncFact, bool) {
	targets, ok := c.implTargets(call, m, body)
	if !ok || len(targets) != 1 {
		return nil, false
	}
	f := c.fact(targets[0])
	if f == nil {
		return nil, false
	}
	g := *f
	if g.Jitter == jitterNone {
		g.ByDefault = true
	}
	return &g, true
}

// callSite is one call of a function of this package.
type callSite struct {
	call *ast.CallExpr
	body *ast.BlockStmt // the body of the function the call is in
	fn   *types.Func    // that function
}

// callersPurity resolves a wait whose duration is a parameter of fn
// through fn's callers in this package (its tests excluded): what they
// pass, by default.
func (c *checker) callersPurity(fn *types.Func, p purity) purity {
	return c.callersPurityDepth(fn, p, 0)
}

// callersPurityDepth binds p's parameters to what fn's callers in the
// package pass, and theirs to their callers' (a few calls up). An
// exported function or a method nothing in the package calls by name is
// the user's API or called through an interface: a duration parameter it
// only scales by counters is pure whatever its caller passes
// (DoRetryForAttempts(attempts, backoff), a sender's send(p, n, pause)).
func (c *checker) callersPurityDepth(fn *types.Func, p purity, depth int) purity {
	if p.kind != pParam || fn == nil || depth > 3 {
		return p
	}
	if c.sites == nil {
		c.findSites()
	}
	sites := c.sites[fn]
	if len(sites) == 0 {
		if (fn.Exported() || recvNamed(fn) != nil) && c.durationParams(fn, p.params) {
			return purity{kind: pPure, caller: true, byDefault: p.byDefault}
		}
		return p
	}
	out := purity{kind: pNone}
	for _, s := range sites {
		q := c.bindParams(p, s.call, s.body, s.fn, 0)
		if q.kind == pParam && s.fn == fn && q.params&^p.params == 0 {
			continue // a retry by recursion hands its own wait down again
		}
		if q.kind == pParam && s.fn != fn {
			q = c.callersPurityDepth(s.fn, q, depth+1)
		}
		out = out.and(q)
	}
	switch out.kind {
	case pNone, pParam:
		return p
	case pPure:
		if !out.caller {
			out.byDefault = true
		}
	}
	return out
}

// durationParams reports whether the parameters of fn that params names
// are all time.Duration values (not funcs or interfaces that compute one).
func (c *checker) durationParams(fn *types.Func, params uint64) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok {
		return false
	}
	for i := range min(sig.Params().Len(), 64) {
		if params&(1<<i) != 0 && !isNamed(sig.Params().At(i).Type(), "time", "Duration") {
			return false
		}
	}
	return params>>min(sig.Params().Len(), 64) == 0
}

// findSites fills c.sites with the calls of this package's functions made
// in its non-test files.
func (c *checker) findSites() {
	c.sites = map[*types.Func][]callSite{}
	c.findingSites = true
	defer func() { c.findingSites = false }()
	for _, f := range c.pass.Files {
		if strings.HasSuffix(c.pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			in, _ := c.info.Defs[fd.Name].(*types.Func)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if fn := c.callee(call); fn != nil && c.decls[fn] != nil {
						c.sites[fn] = append(c.sites[fn], callSite{call, fd.Body, in})
					}
				}
				return true
			})
		}
	}
}

// resolveByCallers resolves the loop's waits whose durations are fn's
// parameters through fn's callers.
func (c *checker) resolveByCallers(waits []loopCall, fn *types.Func) {
	for i := range waits {
		waits[i].w.dur = c.callersPurity(fn, waits[i].w.dur)
	}
}

// afterFuncTimer reports whether a Timer.Reset call's timer is one the
// package makes with time.AfterFunc (a ping timer): resetting it schedules
// a callback, and nothing waits.
func (c *checker) afterFuncTimer(call *ast.CallExpr, body *ast.BlockStmt) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	var vals []ast.Expr
	switch x := ast.Unparen(sel.X).(type) {
	case *ast.Ident:
		if v, ok := c.info.Uses[x].(*types.Var); ok {
			vals = c.assignsOf(body)[v]
		}
	case *ast.SelectorExpr:
		if v, ok := c.info.Uses[x.Sel].(*types.Var); ok && v.IsField() {
			for _, fv := range c.fieldValues[v] {
				vals = append(vals, fv.expr)
			}
		}
	}
	for _, x := range vals {
		if call, ok := ast.Unparen(x).(*ast.CallExpr); ok && isFunc(c.callee(call), "time", "AfterFunc") {
			return true
		}
	}
	return false
}

// once is what a variable the loop's function assigns once was given
// (code := status.Code(err)), or e itself.
func (ev *evaluator) once(e ast.Expr) ast.Expr {
	if id := identOf(e); id != nil {
		if v, ok := ev.w.c.info.Uses[id].(*types.Var); ok {
			if xs := ev.w.c.assignsOf(ev.w.body)[v]; len(xs) == 1 && xs[0] != unknownExpr {
				return xs[0]
			}
		}
	}
	return e
}

// exportIfaceRemotes gives each method of the package's exported
// interfaces the remote kind of the one method of this package's types
// that implements it (stripe.RequestPerformer's PerformRequest, made
// only by stripe.Client, an HTTP call): a helper in another package that
// calls it through the interface calls the remote endpoint behind it.
func (c *checker) exportIfaceRemotes() {
	scope := c.pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || tn.IsAlias() {
			continue
		}
		iface, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for m := range iface.ExplicitMethods() {
			if !m.Exported() {
				continue
			}
			t, ok := c.soleImpl(m)
			if !ok || c.summary[t] == nil {
				continue
			}
			switch s := c.summary[t]; {
			case s.Remote != remoteNone:
				c.exportFact(m, &FuncFact{Remote: s.Remote})
			case s.Waits:
				// a retry's WaitNext(ctx) behind the package's Retry
				// interface: how its one implementation waits
				c.exportFact(m, &FuncFact{Waits: true, Deaf: s.Deaf, Jitter: s.Jitter, DurParam: s.DurParam, DurParams: s.DurParams, DurField: s.DurField,
					ByDefault: s.ByDefault, BgDeaf: s.BgDeaf, LibWork: s.LibWork, LibPolicy: s.LibPolicy, LibField: s.LibField, OwnLoop: s.OwnLoop})
			}
		}
	}
}
