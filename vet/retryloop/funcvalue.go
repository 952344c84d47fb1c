package retryloop

import (
	"go/ast"
	"go/types"
	"strings"
)

// funcValuePurity says what a call through a func field or variable
// returns, from the functions the package stores in it: a field nothing
// sets is absent by default (pNone); one set by a constructor to a
// function of this package is that function's result, by default.
func (c *checker) funcValuePurity(call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	g, ok := c.funcTargets(call, body)
	if !ok {
		return purity{}
	}
	if len(g.targets) == 0 && len(g.lits) == 0 && len(g.made) == 0 {
		if g.isField {
			return purity{kind: pNone, byDefault: true}
		}
		return purity{}
	}
	p := purity{kind: pNone}
	for _, t := range g.targets {
		r := c.resultPurity(t, depth+1)
		if c.decls[t] == nil && recvNamed(t) == nil {
			// another package's function (profile.Exponential), by its fact
			r = c.importedResult(call, t, body)
		}
		p = p.and(c.bindParams(r, call, body, fn, depth))
	}
	for _, lit := range g.lits {
		p = p.and(c.litPurity(lit, call, body, fn, depth+1))
	}
	for _, m := range g.made {
		p = p.and(c.madeLitPurity(m, call, body, fn, depth+1))
	}
	if p.kind == pNone {
		return purity{}
	}
	if g.isField {
		p.byDefault = true
	}
	return p
}

// funcGiven is what the package gives a func-typed field or local
// variable: named functions, function literals, and the literals
// constructors of the package return (ReconnectBackoff =
// NewConstantBackoff(10 * time.Second)).
type funcGiven struct {
	targets []*types.Func
	lits    []*ast.FuncLit
	made    []madeLit
	isField bool
	// field is the func field resolved, if it is one.
	field *types.Var
	// override is set when a setter or option also gives the field a
	// parameter: the user's replacement for the default given.
	override bool
}

// funcTargets returns what the func-typed field or local variable called
// by call is given in this package. ok is false if any value given to it
// is none of those (a parameter, another call's result).
func (c *checker) funcTargets(call *ast.CallExpr, body *ast.BlockStmt) (g funcGiven, ok bool) {
	var v *types.Var
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		v, _ = c.info.Uses[f].(*types.Var)
	case *ast.SelectorExpr:
		v, _ = c.info.Uses[f.Sel].(*types.Var)
	}
	if v == nil {
		return g, false
	}
	var vals []fieldValue
	if v.IsField() {
		g.isField, g.field = true, v
		vals = c.fieldValues[v]
	} else {
		if c.params[v] {
			return g, false
		}
		for _, x := range c.assignsOf(body)[v] {
			vals = append(vals, fieldValue{x, body})
		}
		if init, ok := c.pkgVars[v]; ok && isPkgVar(v) && !c.pkgAssigned[v] {
			// var sleep = func(ctx, d) error { … }: a package's function
			// kept in a variable (for its tests to replace), never set
			// again in the package
			vals = append(vals, fieldValue{init, nil})
		}
		if len(vals) == 0 {
			return g, false
		}
	}
	for i := 0; i < len(vals) && i < 32; i++ {
		more, ok := c.addGiven(&g, vals[i])
		if !ok {
			return g, false
		}
		vals = append(vals, more...)
	}
	if g.override && len(g.targets)+len(g.lits)+len(g.made) == 0 {
		return g, false // nothing but what the user passes
	}
	return g, true
}

// addGiven adds to g what one value given to the field or variable is;
// more are the values a constructor's local variable given to a field
// stands for. ok is false for a value that is none of those.
func (c *checker) addGiven(g *funcGiven, fv fieldValue) (more []fieldValue, ok bool) {
	var obj types.Object
	switch x := ast.Unparen(fv.expr).(type) {
	case *ast.CallExpr:
		// The literal the constructor returns, its parameters the call's.
		if m, ok := c.madeBy(x, fv.body); ok {
			g.made = append(g.made, m...)
			return nil, true
		}
		// A picker of the package: safe(d) returns the caller's d
		// when set, else a default of its own.
		if ts, ok := c.pickedFuncs(x); ok {
			g.targets = append(g.targets, ts...)
			return nil, true
		}
	case *ast.Ident:
		obj = c.info.Uses[x]
		if v, ok := obj.(*types.Var); ok && g.isField && c.params[v] {
			// WithSleep(s) { r.sleep = s }: the user's override of
			// the default a constructor sets.
			g.override = true
			return nil, true
		}
		if v, ok := obj.(*types.Var); ok && g.isField && !v.IsField() && !isPkgVar(v) && fv.body != nil {
			// backoff := cfg.Backoff; if backoff == nil { backoff =
			// defaultBackoff }; …{backoff: backoff}: what the
			// constructor's variable is given
			for _, y := range c.assignsOf(fv.body)[v] {
				more = append(more, fieldValue{y, fv.body})
			}
			return more, true
		}
	case *ast.SelectorExpr:
		obj = c.info.Uses[x.Sel]
		if v, ok := obj.(*types.Var); ok && v == g.field && g.field != nil {
			// New() { return &Client{Backoff: DefaultClient.Backoff} }:
			// the field copied from another value of its own type holds
			// what the field's other values give it.
			return nil, true
		}
		if v, ok := obj.(*types.Var); ok && v.IsField() && c.onlyNilGiven(v) {
			// after = r.After, or backoff := cfg.Backoff: a func
			// field the package never sets (or only clears) is the
			// user's override, absent by default.
			g.override = g.override || g.isField
			return nil, true
		}
	case *ast.FuncLit:
		// c.backoff = func(n uint8) time.Duration { return time.Second * time.Duration(n) }
		g.lits = append(g.lits, x)
		return nil, true
	}
	t, isFunc := obj.(*types.Func)
	if !isFunc {
		return nil, false
	}
	g.targets = append(g.targets, t)
	return nil, true
}

// bindLitParams binds lit's parameters to call's arguments (litArgs) and
// returns what undoes it. ok is false for a literal already bound, one
// calling itself; a call whose arguments do not match the parameters one
// for one binds nothing.
func (c *checker) bindLitParams(lit *ast.FuncLit, call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func) (unbind func(), ok bool) {
	sig, isSig := c.info.TypeOf(lit).(*types.Signature)
	if !isSig || call.Ellipsis.IsValid() || sig.Params().Len() != len(call.Args) || sig.Variadic() {
		return func() {}, true
	}
	for i := range sig.Params().Len() {
		if _, bound := c.litArgs[sig.Params().At(i)]; bound {
			return nil, false
		}
	}
	for i := range sig.Params().Len() {
		c.litArgs[sig.Params().At(i)] = litArg{call.Args[i], body, fn}
	}
	return func() {
		for i := range sig.Params().Len() {
			delete(c.litArgs, sig.Params().At(i))
		}
	}, true
}

// litPurity says what a function literal returns (its first result), over
// its return statements; its integer parameters are counters.
func (c *checker) litPurity(lit *ast.FuncLit, call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if depth > 8 {
		return purity{}
	}
	// Its parameters are the call's arguments while its returns are read.
	unbind, ok := c.bindLitParams(lit, call, body, fn)
	if !ok {
		return purity{} // a literal calling itself
	}
	defer unbind()
	p, n := purity{kind: pNone}, 0
	ast.Inspect(lit.Body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(m.Results) > 0 {
				n++
				p = p.and(c.purity(m.Results[0], lit.Body, nil, depth+1))
			}
		}
		return true
	})
	if n == 0 || p.kind == pNone {
		return purity{}
	}
	return p
}

// madeLit is a function literal a constructor of the package returns, with
// the constructor's call (whose arguments its parameters are) and the body
// that call stands in.
type madeLit struct {
	lit  *ast.FuncLit
	call *ast.CallExpr
	body *ast.BlockStmt
}

// madeBy returns the function literals a call of a constructor of this
// package returns (func NewConstantBackoff(d) Backoff { return func(n int)
// time.Duration { … } }); ok is false if any return is something else.
func (c *checker) madeBy(call *ast.CallExpr, body *ast.BlockStmt) ([]madeLit, bool) {
	fn := c.callee(call)
	d := c.decls[fn]
	if d == nil || call.Ellipsis.IsValid() || fn.Type().(*types.Signature).Params().Len() != len(call.Args) {
		return nil, false
	}
	var out []madeLit
	ok := ownReturns(d.Body, func(r *ast.ReturnStmt) bool {
		if len(r.Results) != 1 {
			return false
		}
		lit, isLit := ast.Unparen(r.Results[0]).(*ast.FuncLit)
		if isLit {
			out = append(out, madeLit{lit, call, body})
		}
		return isLit
	})
	return out, ok && len(out) > 0
}

// madeLitPurity says what a constructor's literal returns when called by
// call: the constructor's parameters bound to its call's arguments.
func (c *checker) madeLitPurity(m madeLit, call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	sig := c.callee(m.call).Type().(*types.Signature)
	for i := range sig.Params().Len() {
		pv := sig.Params().At(i)
		if _, bound := c.litArgs[pv]; bound {
			return purity{} // a constructor reached through itself
		}
		c.litArgs[pv] = litArg{m.call.Args[i], m.body, nil}
		defer delete(c.litArgs, pv)
	}
	return c.litPurity(m.lit, call, body, fn, depth)
}

// litWait reports a call of a local variable given only function literals
// that each wait (failTemp := func(err error) { …; time.Sleep(b.Duration())
// }, called on each failure): the literal's waits are the call's, their
// durations read where the literal stands. A deaf one is reported in the
// literal, where it stands, not again at each call.
func (c *checker) litWait(call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func) (waitInfo, bool) {
	id, lits := c.localLits(call, body)
	if lits == nil {
		return waitInfo{}, false
	}
	g := funcGiven{lits: lits}
	for _, lit := range g.lits {
		if c.litWaiting[lit] {
			return waitInfo{}, false // a literal calling itself
		}
	}
	if c.litWaiting == nil {
		c.litWaiting = map[*ast.FuncLit]bool{}
	}
	for _, lit := range g.lits {
		c.litWaiting[lit] = true
		defer delete(c.litWaiting, lit)
	}
	w := waitInfo{dur: purity{kind: pNone}, helper: id.Name}
	for _, lit := range g.lits {
		// Its parameters are the call's arguments while its waits are
		// read (sleep(ctx, backoff(n)) waits backoff(n)).
		if unbind, ok := c.bindLitParams(lit, call, body, fn); ok {
			defer unbind()
		}
		var calls []*ast.CallExpr
		var found []waitInfo
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt, *ast.FuncLit:
				return false
			case *ast.CallExpr:
				if lw, ok := c.wait(n, body, fn); ok {
					calls, found = append(calls, n), append(found, lw)
				}
			}
			return true
		})
		// a timeout on an answer (select on a completion or time.After)
		// is no pause
		timeouts := c.timeoutWaits(lit.Body, calls)
		waits := 0
		for i, lw := range found {
			if !timeouts[calls[i]] {
				waits++
				w.dur = w.dur.and(lw.dur)
			}
		}
		if waits == 0 {
			return waitInfo{}, false // a literal that does not pause
		}
	}
	return w, true
}

// localLits returns the local variable call calls and the function
// literals it is given, when it is given nothing else.
func (c *checker) localLits(call *ast.CallExpr, body *ast.BlockStmt) (*ast.Ident, []*ast.FuncLit) {
	g, ok := c.localValues(call, body)
	if !ok || len(g.lits) == 0 || len(g.targets) > 0 {
		return nil, nil
	}
	return ast.Unparen(call.Fun).(*ast.Ident), g.lits
}

// localValues returns what the local variable call calls is given: function
// literals, and functions or method values of the package's or others'.
func (c *checker) localValues(call *ast.CallExpr, body *ast.BlockStmt) (funcGiven, bool) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return funcGiven{}, false
	}
	if v, ok := c.info.Uses[id].(*types.Var); !ok || v.IsField() {
		return funcGiven{}, false
	}
	g, ok := c.funcTargets(call, body)
	if !ok || len(g.lits)+len(g.targets) == 0 || len(g.made) > 0 {
		return funcGiven{}, false
	}
	return g, true
}

// valueRemote reports the kind of remote call a call of a local variable
// makes, when the variable is given only function literals or functions
// (workFn := func() (*Key, error) { return client.GetKey(ctx, req) }, or
// call := c.Call; … workFn()): the call is the attempt. A literal that
// makes an HTTP request but returns no response turns its status into an
// error, as a model SDK does.
func (c *checker) valueRemote(call *ast.CallExpr, body *ast.BlockStmt) int {
	g, ok := c.localValues(call, body)
	if !ok {
		return remoteNone
	}
	kind := remoteNone
	pick := func(k int) {
		if kind == remoteNone || k == remoteHTTP {
			kind = k
		}
	}
	for _, fn := range g.targets {
		if k := c.funcRemote(fn); k != remoteNone {
			pick(k)
		}
	}
	for _, lit := range g.lits {
		r := c.remoteIn(lit.Body)
		if r == nil {
			continue
		}
		k := r.kind
		if sig, ok := c.info.TypeOf(lit).(*types.Signature); ok && k == remoteHTTP && !resultsResponse(sig) {
			k = remoteSDK
		}
		pick(k)
	}
	return kind
}

// responseParam reports a call of a func parameter that answers with an
// HTTP response and an error (execute(f func() (*http.Response, error))):
// whatever the caller hands in, the call is an HTTP request by its shape.
func (c *checker) responseParam(call *ast.CallExpr) int {
	if !c.isParam(call.Fun) {
		return remoteNone
	}
	sig, ok := c.info.TypeOf(call.Fun).Underlying().(*types.Signature)
	if !ok || sig.Results().Len() != 2 || !isError(sig.Results().At(1).Type()) {
		return remoteNone
	}
	if resultsResponse(sig) || statusWrapper(sig.Results().At(0).Type()) && c.handedHTTP(call.Fun) {
		return remoteHTTP
	}
	return remoteNone
}

// statusWrapper reports whether t is a pointer to a struct with an integer
// field named StatusCode, HTTPStatus or HTTPStatusCode: an SDK's own
// response, its answer's status kept beside the body.
func statusWrapper(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	st, ok := p.Elem().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for f := range st.Fields() {
		b, ok := f.Type().Underlying().(*types.Basic)
		switch strings.ToLower(f.Name()) {
		case "statuscode", "httpstatus", "httpstatuscode":
			if ok && b.Info()&types.IsInteger != 0 {
				return true
			}
		}
	}
	return false
}

// handedHTTP reports whether some caller in the package hands parameter
// e a function literal that makes an HTTP request (directly, or through a
// helper of the package that answers with its own response), or a
// function that does.
func (c *checker) handedHTTP(e ast.Expr) bool {
	_, i, sites := c.paramSites(e)
	for _, s := range sites {
		if i >= len(s.call.Args) {
			continue
		}
		switch a := ast.Unparen(s.call.Args[i]).(type) {
		case *ast.FuncLit:
			if r := c.remoteIn(a.Body); r != nil && (r.kind == remoteHTTP || r.kind == remoteSDK) {
				return true
			}
		case *ast.Ident, *ast.SelectorExpr:
			if fn, ok := c.info.Uses[calleeIdent(a)].(*types.Func); ok && (c.funcRemote(fn) == remoteHTTP || c.funcRemote(fn) == remoteSDK) {
				return true
			}
		}
	}
	return false
}

// onlyNilGiven reports whether the package gives field v nothing but nil
// (c.Backoff = nil when it sanitises a copy), or nothing at all.
func (c *checker) onlyNilGiven(v *types.Var) bool {
	for _, fv := range c.fieldValues[v] {
		if !isNil(c.info, fv.expr) {
			return false
		}
	}
	return true
}

// handsWork reports whether call hands a function value on
// (retryRateLimited(ctx, get)): a call that waits and runs work it is
// given returns the work's error, the attempt's, not a pause's.
func (c *checker) handsWork(call *ast.CallExpr) bool {
	for _, a := range call.Args {
		if _, ok := typeUnder(c.info.TypeOf(a)).(*types.Signature); ok && !isNil(c.info, a) {
			return true
		}
	}
	return false
}
