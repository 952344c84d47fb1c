package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// A purity says what a wait's duration is made of: only constants and
// counters (pPure: constant or purely exponential, the same for every
// client), something random (pRand: jittered), something the analyzer
// cannot see through (pUnknown: a configuration field, a backoff library's
// NextBackOff), or a duration parameter of the function (pParam: the
// caller decides).
type purity struct {
	kind   int
	params uint64 // pParam: the parameters (by index, a bit each) it is made of
	// byDefault is set when it is pure only as configured by default: a
	// configuration field's default value, a func field left unset.
	byDefault bool
	// caller is set when it is pure whatever the caller passes: an
	// exported function's duration parameter, only scaled by counters.
	caller bool
	// zeroRand is set when its only randomness is a float in [0, 1)
	// converted to an integer (time.Duration(rand.Float64())): always 0.
	zeroRand bool
	// field names (Type.field) the receiver's policy field a pField
	// duration is asked of.
	field string
}

const (
	pUnknown = iota
	pPure
	pRand
	pParam
	// pNone is a value that is absent by default (a call through a func
	// field nothing in the package sets): it adds nothing.
	pNone
	// pField is what a policy kept in a field of the receiver says
	// (r.policy.Next()): the receiver's constructor's caller decides.
	pField
)

func (p purity) and(q purity) purity {
	d := p.byDefault || q.byDefault
	cl := p.caller || q.caller
	switch {
	case p.kind == pNone:
		q.byDefault, q.caller = d, cl
		return q
	case q.kind == pNone:
		p.byDefault, p.caller = d, cl
		return p
	case p.kind == pRand || q.kind == pRand:
		return purity{kind: pRand}
	case p.kind == pUnknown || q.kind == pUnknown:
		return purity{kind: pUnknown}
	case p.kind == pField || q.kind == pField:
		return p.andField(q)
	case p.kind == pParam || q.kind == pParam:
		return purity{kind: pParam, params: p.params | q.params, byDefault: d}
	}
	return purity{kind: pPure, byDefault: d, caller: cl, zeroRand: p.zeroRand || q.zeroRand}
}

// single returns the index of the one parameter p is made of.
func (p purity) single() (int, bool) {
	if p.kind != pParam || p.params == 0 || p.params&(p.params-1) != 0 {
		return 0, false
	}
	for i := range 64 {
		if p.params == 1<<i {
			return i, true
		}
	}
	return 0, false
}

var randPkgs = map[string]bool{"math/rand": true, "math/rand/v2": true, "crypto/rand": true}

// unknownExpr stands for a value assigned from a tuple or otherwise out of
// sight.
var unknownExpr ast.Expr = &ast.BadExpr{}

// assignsOf maps each variable assigned in body (function literals inside
// it included) to the expressions assigned to it.
func (c *checker) assignsOf(body *ast.BlockStmt) map[types.Object][]ast.Expr {
	if body == nil {
		return nil
	}
	if m, ok := c.assigns[body]; ok {
		return m
	}
	m := map[types.Object][]ast.Expr{}
	obj := func(e ast.Expr) types.Object {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return nil
		}
		if o := c.info.Defs[id]; o != nil {
			return o
		}
		return c.info.Uses[id]
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				o := obj(l)
				if o == nil {
					continue
				}
				switch {
				case len(n.Lhs) == len(n.Rhs):
					m[o] = append(m[o], n.Rhs[i])
				case i == 0 && len(n.Rhs) == 1 && isCallExpr(n.Rhs[0]):
					// d, ok := b.Next(): the call stands for its first result
					m[o] = append(m[o], n.Rhs[0])
				default:
					m[o] = append(m[o], unknownExpr)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				o := obj(name)
				switch {
				case o == nil || len(n.Values) == 0:
				case len(n.Values) == len(n.Names):
					m[o] = append(m[o], n.Values[i])
				default:
					m[o] = append(m[o], unknownExpr)
				}
			}
		case *ast.RangeStmt:
			if n.Value != nil {
				if o := obj(n.Value); o != nil {
					m[o] = append(m[o], n.X)
				}
			}
		}
		return true
	})
	c.assigns[body] = m
	return m
}

func isIntegerNotDuration(t types.Type) bool {
	if isNamed(t, "time", "Duration") {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// purity says what e is made of. body holds the assignments of the
// function e is in, fn is that function (for its parameters).
func (c *checker) purity(e ast.Expr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if depth > 12 || e == nil || e == unknownExpr {
		return purity{}
	}
	if tv, ok := c.info.Types[e]; ok && tv.Value != nil {
		return purity{kind: pPure}
	}
	if c.serverWait(e) {
		return purity{kind: pNone} // the server's wait, not the client's backoff
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		return purity{kind: pPure}
	case *ast.ParenExpr:
		// the expression's own structure is finite: only the hops through
		// variables and calls, which may come back round, count in depth
		return c.purity(e.X, body, fn, depth)
	case *ast.UnaryExpr:
		return c.purity(e.X, body, fn, depth)
	case *ast.StarExpr:
		// time.Sleep(*pt), pt a parameter the caller hands &sleepTime:
		// what the variable pointed to holds
		return c.purity(e.X, body, fn, depth+1)
	case *ast.BinaryExpr:
		if e.Op == token.MUL && (c.zeroField(e.X) || c.zeroField(e.Y)) {
			// rand × r.jitter, with the jitter zero unless the user
			// sets it: nothing by default
			return purity{kind: pNone, byDefault: true}
		}
		if e.Op == token.SUB && c.elapsed(e.Y) {
			return c.purity(e.X, body, fn, depth) // the interval less what the attempt took
		}
		return c.purity(e.X, body, fn, depth).and(c.purity(e.Y, body, fn, depth))
	case *ast.IndexExpr:
		if c.counterElems(e.X, body) {
			return purity{kind: pPure} // tries[resp.StatusCode], counted with ++
		}
		return c.purity(e.X, body, fn, depth+1)
	case *ast.CompositeLit:
		p := purity{kind: pPure}
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			p = p.and(c.purity(el, body, fn, depth+1))
		}
		return p
	case *ast.Ident:
		return c.identPurity(e, body, fn, depth)
	case *ast.SelectorExpr:
		if id, ok := c.info.Uses[e.Sel].(*types.Var); ok {
			if id.IsField() {
				if p := c.fieldPurity(id, depth); p.kind != pUnknown || !c.foreignSetting(e, id) {
					return p
				}
				// cfg.RetryDelay of another package's Config: the user's one
				// value, the same on every retry
				return purity{kind: pPure, caller: true}
			}
			return c.varPurity(id, nil, nil, depth)
		}
		return purity{}
	case *ast.CallExpr:
		return c.callPurity(e, body, fn, depth)
	}
	return purity{}
}

func (c *checker) identPurity(id *ast.Ident, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	switch o := c.info.Uses[id].(type) {
	case *types.Const:
		return purity{kind: pPure}
	case *types.Var:
		return c.varPurity(o, body, fn, depth)
	}
	return purity{}
}

// litArg is what a function literal's parameter is bound to while its
// result is read: the call's argument, where the call stands.
type litArg struct {
	expr ast.Expr
	body *ast.BlockStmt
	fn   *types.Func
}

func (c *checker) varPurity(v *types.Var, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if a, ok := c.litArgs[v]; ok {
		return c.purity(a.expr, a.body, a.fn, depth+1)
	}
	if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
		if init, ok := c.pkgVars[v]; ok {
			return c.purity(init, nil, nil, depth+1)
		}
		if v.Pkg() == c.pass.Pkg && !c.pkgAssigned[v] {
			// var Max429Delay time.Duration: a setting left zero
			return purity{kind: pPure, byDefault: true}
		}
		return purity{}
	}
	p := purity{kind: pNone}
	if i, ok := paramIndex(fn, v); ok {
		if isIntegerNotDuration(v.Type()) {
			return purity{kind: pPure}
		}
		if i >= 64 {
			return purity{}
		}
		p = purity{kind: pParam, params: 1 << i}
		if len(c.assignsOf(body)[v]) == 0 {
			return p
		}
		// sleep = sleep + jitter/2 before the wait: what the function
		// assigns it counts beside what the caller hands in
	} else if call, idx := c.laterResult(v, body); call != nil {
		// retry, backoff := resp.needsRetry(n): that result's returns
		return c.resultPurityAt(c.callee(call), idx)
	}
	exprs := c.assignsOf(body)[v]
	if len(exprs) == 0 {
		if isIntegerNotDuration(v.Type()) {
			return purity{kind: pPure}
		}
		return purity{}
	}
	off := c.offByDefault(body)
	server, skipped := retryAfterBranches(body), false
	for _, x := range exprs {
		if within(off, x) {
			p.byDefault = true // taken only when a setting is changed
			continue
		}
		if within(server, x) || mentionsRetryAfter(x) {
			// the server's Retry-After: its own schedule, not the
			// client's (the other assignments are the client's)
			skipped = true
			continue
		}
		// x = x*2 refers to x itself: the other terms decide.
		if refersTo(c.info, x, v) {
			p = p.and(c.purityExcept(x, v, body, fn, depth+1))
			continue
		}
		p = p.and(c.purity(x, body, fn, depth+1))
	}
	if p.kind == pNone && p.byDefault {
		// assigned only when a setting is changed: zero by default
		p.kind = pPure
	}
	if p.kind == pNone && skipped {
		return purity{}
	}
	return p
}

func refersTo(info *types.Info, e ast.Expr, v *types.Var) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// purityExcept is purity with v itself counted as pure (a self-reference in
// x = x * 2).
func (c *checker) purityExcept(e ast.Expr, v *types.Var, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if id := calleeIdent(ast.Unparen(e)); id != nil && c.info.Uses[id] == v {
		return purity{kind: pPure} // v itself, or b.v for a field
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.BinaryExpr:
		return c.purityExcept(e.X, v, body, fn, depth+1).and(c.purityExcept(e.Y, v, body, fn, depth+1))
	case *ast.UnaryExpr:
		return c.purityExcept(e.X, v, body, fn, depth+1)
	case *ast.CallExpr:
		if tv, ok := c.info.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			return c.purityExcept(e.Args[0], v, body, fn, depth+1)
		}
		b, isBuiltin := c.info.Uses[calleeIdent(e.Fun)].(*types.Builtin)
		if (isBuiltin && (b.Name() == "min" || b.Name() == "max")) || funcPath(c.callee(e)) == "math" {
			// d = min(d, cap), d = math.Min(d, cap)
			p := purity{kind: pPure}
			for _, a := range e.Args {
				p = p.and(c.purityExcept(a, v, body, fn, depth+1))
			}
			return p
		}
		if callee := c.callee(e); callee != nil && c.decls[callee] != nil && !e.Ellipsis.IsValid() {
			// d = grow(d, err): a helper of the package that returns
			// what it is given, grown
			if r := c.resultPurity(callee, depth); r.kind == pParam {
				p := purity{kind: pPure, byDefault: r.byDefault}
				for i := range min(len(e.Args), 64) {
					if r.params&(1<<i) != 0 {
						p = p.and(c.purityExcept(e.Args[i], v, body, fn, depth+1))
					}
				}
				return p
			}
		}
	}
	return c.purity(e, body, fn, depth+1)
}

// calleeIdent is the identifier an identifier or a selector names (f, or
// Sel of pkg.f and x.f).
func calleeIdent(e ast.Expr) *ast.Ident {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e
	case *ast.SelectorExpr:
		return e.Sel
	}
	return nil
}

func (c *checker) callPurity(call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() && len(call.Args) == 1 {
		if c.unitFloatToInt(tv.Type, call.Args[0]) {
			// time.Duration(rand.Float64()) is always 0: no jitter at all.
			return purity{kind: pPure, zeroRand: true}
		}
		return c.purity(call.Args[0], body, fn, depth) // a conversion: structure, not a hop
	}
	if b, ok := c.info.Uses[calleeIdent(call.Fun)].(*types.Builtin); ok {
		if b.Name() == "min" || b.Name() == "max" {
			p := purity{kind: pPure}
			for _, a := range call.Args {
				p = p.and(c.purity(a, body, fn, depth+1))
			}
			return p
		}
		return purity{}
	}
	callee := c.callee(call)
	if callee == nil {
		return c.funcValuePurity(call, body, fn, depth)
	}
	path := funcPath(callee)
	if randPkgs[path] {
		return purity{kind: pRand}
	}
	if p, ok := c.parsedPurity(call, callee, body); ok {
		return p
	}
	if path == "math" || (path == "time" && recvNamed(callee) != nil && recvNamed(callee).Obj().Name() == "Duration") {
		p := purity{kind: pPure}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && path == "time" {
			p = c.purity(sel.X, body, fn, depth+1)
		}
		for _, a := range call.Args {
			p = p.and(c.purity(a, body, fn, depth+1))
		}
		return p
	}
	if isCenkalti(path) && callee.Name() == "NextBackOff" {
		return c.nextBackOffPurity(call, body)
	}
	if path == jpilloraPath && (callee.Name() == "Duration" || callee.Name() == "ForAttempt") {
		return c.jpilloraPurity(call, body)
	}
	if isIfaceMethod(callee) {
		return c.ifacePurity(call, callee, body, fn, depth)
	}
	if _, ours := c.decls[callee]; !ours {
		return c.bindParams(c.importedResult(call, callee, body), call, body, fn, depth)
	}
	return c.bindParams(c.resultPurity(callee, depth), call, body, fn, depth)
}

func within(ns []ast.Node, n ast.Node) bool {
	for _, m := range ns {
		if m.Pos() <= n.Pos() && n.End() <= m.End() {
			return true
		}
	}
	return false
}

// fieldPurity says what a configuration field holds, from the values the
// package gives it (a constructor's defaults): pure or random by default,
// unknown if any is out of sight.
func (c *checker) fieldPurity(v *types.Var, depth int) purity {
	vals := c.fieldValues[v]
	if !slices.ContainsFunc(vals, func(fv fieldValue) bool { return !c.selfCopy(v, fv.expr) }) {
		// No value but copies of the field from another value of the
		// type (a Clone's Min: b.Min) gives no value of its own.
		if p, ok := c.importedSetting(v); ok {
			return p // TransportOption.RetryDelay, its default set where it is declared
		}
		if isIntegerNotDuration(v.Type()) {
			return purity{kind: pPure} // a counter (b.attempts++)
		}
		if isSetting(v.Type()) && v.Exported() && v.Pkg() == c.pass.Pkg && !c.fieldMutated[v] {
			// A setting only the user gives (RetryParams.Period, a
			// BackoffFactor of seconds): one value, fixed when the
			// client is made, the same on every retry; scaled by
			// counters it is pure whatever it is.
			return purity{kind: pPure, caller: true}
		}
		if c.flagFields[v] {
			// flag.DurationVar(&conf.retryDelay, …): one value, the
			// user's, the same on every retry
			return purity{kind: pPure, caller: true}
		}
		if isNamed(v.Type(), "time", "Duration") && !v.Exported() && v.Pkg() == c.pass.Pkg && !c.fieldMutated[v] {
			// retryDelay time.Duration // for testing: nothing outside
			// the package's tests sets it, so it is zero, and the
			// wait is what the code makes of zero (delay = time.Second)
			return purity{kind: pPure, byDefault: true}
		}
		return purity{}
	}
	if p, ok := c.fieldPurities[v]; ok {
		return p
	}
	c.fieldPurities[v] = purity{} // a field defined through itself: unknown
	p := purity{kind: pNone}
	for _, fv := range vals {
		if within(retryAfterBranches(fv.body), fv.expr) {
			// if ra := resp.Header.Get("Retry-After"); ra != "" { r.backoff
			// = … }: the server's word when it gives one, not a schedule
			continue
		}
		if c.selfCopy(v, fv.expr) || c.parsedSetting(fv.expr, fv.body) {
			// c.cfg.delay = opts.delay, cfg.Interval = d after d, err :=
			// time.ParseDuration(flag): the user's setting over the default
			continue
		}
		if c.isParam(fv.expr) {
			// A constructor's parameter is what the package's callers
			// pass (DefaultBacko's NewBacko(100*time.Millisecond, …));
			// an option's that nothing in the package calls
			// (WithRetryWait(d) { o.wait = d }) is the user's setting,
			// not a default.
			q := c.paramFromCallers(fv.expr)
			if q.kind == pNone && c.userDuration(fv.expr) {
				// WithExponentialBackoff(ctx, period, n): only the
				// user gives it, one value for every retry
				q = purity{kind: pPure, caller: true}
			}
			p = p.and(q)
			continue
		}
		if refersTo(c.info, fv.expr, v) {
			// b.next = min(b.next*2, b.max): the other terms decide
			p = p.and(c.purityExcept(fv.expr, v, fv.body, nil, 0))
			continue
		}
		p = p.and(c.purity(fv.expr, fv.body, nil, 0))
	}
	if p.kind == pPure {
		p.byDefault = true
	}
	if p.kind == pNone || p.kind == pParam {
		p = purity{}
	}
	c.fieldPurities[v] = p
	return p
}

// parsedSetting reports whether e is a variable given only what
// time.ParseDuration parsed (a flag's or a configuration file's text): a
// setting the user writes, which leaves the default to decide.
func (c *checker) parsedSetting(e ast.Expr, body *ast.BlockStmt) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok || body == nil {
		return false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	return ok && c.onlyGiven(v, body, func(x ast.Expr) bool {
		call, ok := ast.Unparen(x).(*ast.CallExpr)
		return ok && isFunc(c.callee(call), "time", "ParseDuration")
	})
}

// onlyGiven reports whether v is assigned in body, and every value it is
// given there satisfies is.
func (c *checker) onlyGiven(v *types.Var, body *ast.BlockStmt, is func(ast.Expr) bool) bool {
	xs := c.assignsOf(body)[v]
	for _, x := range xs {
		if x == unknownExpr || !is(x) {
			return false
		}
	}
	return len(xs) > 0
}

// fieldValue is one value a package gives a struct field, with the body
// of the function that gives it.
type fieldValue struct {
	expr ast.Expr
	body *ast.BlockStmt
}

// findFieldValues fills c.fieldValues from f: keyed and positional
// composite literals, and assignments to a selector; and c.fieldKeys, from
// assignments to a map field's element.
func (c *checker) findFieldValues(f *ast.File) {
	if strings.HasSuffix(c.pass.Fset.File(f.Pos()).Name(), "_test.go") {
		return // what a test sets is not the package's default
	}
	add := func(obj types.Object, x ast.Expr) {
		if v, ok := obj.(*types.Var); ok && v.IsField() {
			c.fieldValues[v] = append(c.fieldValues[v], fieldValue{x, enclosingBody(f, x.Pos())})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			st, ok := c.info.TypeOf(n).Underlying().(*types.Struct)
			if !ok {
				return true
			}
			for i, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok {
						add(c.info.Uses[id], kv.Value)
					}
				} else if i < st.NumFields() {
					add(st.Field(i), el)
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) || n.Tok != token.ASSIGN {
				return true
			}
			for i, l := range n.Lhs {
				if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok {
					add(c.info.Uses[sel.Sel], n.Rhs[i])
				}
				c.addFieldKey(f, l, n.Rhs[i])
			}
		}
		return true
	})
}

// bindParams resolves a callee's parameter purity with the call's
// arguments.
func (c *checker) bindParams(r purity, call *ast.CallExpr, body *ast.BlockStmt, fn *types.Func, depth int) purity {
	if r.kind != pParam {
		return r
	}
	if call.Ellipsis.IsValid() && (len(call.Args) == 0 || r.params>>(min(len(call.Args), 64)-1) != 0) {
		return purity{} // the duration is in the spread slice
	}
	p := purity{kind: pPure, byDefault: r.byDefault}
	for i := range min(len(call.Args), 64) {
		if r.params&(1<<i) != 0 {
			p = p.and(c.purity(call.Args[i], body, fn, depth+1))
		}
	}
	if r.params>>min(len(call.Args), 64) != 0 {
		return purity{}
	}
	return p
}

// isParam reports whether e is a parameter of a function or literal.
func (c *checker) isParam(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	return ok && c.params[v]
}

// selfCopy reports whether e reads field v itself, of another value: a
// setting copied from the user's options (if o.delay != 0 { c.delay =
// o.delay }). It gives the field no value of the package's own.
func (c *checker) selfCopy(v *types.Var, e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	return ok && c.info.Uses[sel.Sel] == v
}

func isCallExpr(e ast.Expr) bool {
	_, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok
}
