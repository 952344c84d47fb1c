package retryloop

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// A duration is often made in another package than the loop that waits
// it: a backoff type of the module's own internal package
// (boff.Duration()), a shared helper (backoff.Exponential(i)). Such a
// function's result is summarised like a wait's duration and exported in
// its FuncFact, with the receiver's fields that, when set, take a branch
// the default leaves out (if b.Jitter > 0 { d += rand.N(b.Jitter) }). A
// loop in another package that calls it takes that summary, unless it
// sets one of those fields itself.

// summarizeResult fills s.Result, s.ResultParams, s.ResultByDefault and
// s.Gates for a function whose first result is a time.Duration.
func (c *checker) summarizeResult(fn *types.Func, d *ast.FuncDecl, s *FuncFact) {
	if !returnsDuration(fn) || s.RetryAfter {
		return // a function that reads Retry-After returns the server's wait
	}
	p := c.resultPurity(fn, 0)
	switch p.kind {
	case pPure:
		s.Result, s.ResultByDefault = jitterNone, p.byDefault
	case pRand:
		s.Result = jitterYes
	case pParam:
		s.ResultParams, s.ResultByDefault = p.params, p.byDefault
	default:
		return
	}
	if p.kind == pRand {
		return
	}
	c.offByDefault(d.Body)
	var names []string
	seen := map[string]bool{}
	for _, v := range c.gates[d.Body] {
		if !seen[v.Name()] {
			seen[v.Name()] = true
			names = append(names, v.Name())
		}
	}
	sort.Strings(names)
	s.Gates = strings.Join(names, ",")
}

// returnsDuration reports whether fn's first result is a time.Duration.
func returnsDuration(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	return ok && sig.Results().Len() > 0 && isNamed(sig.Results().At(0).Type(), "time", "Duration")
}

// importedResult says what a function of another package returns, from
// its fact: unknown if it has none, or if the call's receiver is of a
// type whose gate fields this package sets to something other than zero.
func (c *checker) importedResult(call *ast.CallExpr, callee *types.Func, body *ast.BlockStmt) purity {
	f := c.fact(callee)
	if f == nil {
		return purity{}
	}
	var p purity
	switch {
	case f.RetryAfter && returnsDuration(callee):
		return purity{kind: pNone} // the server's wait
	case f.Result == jitterYes:
		return purity{kind: pRand}
	case f.Result == jitterNone:
		p = purity{kind: pPure, byDefault: f.ResultByDefault}
	case f.ResultParams != 0:
		p = purity{kind: pParam, params: f.ResultParams, byDefault: f.ResultByDefault}
	default:
		return purity{}
	}
	if f.Gates != "" {
		gates := strings.Split(f.Gates, ",")
		if lits, ok := c.receiverLits(call, body); ok {
			if litSets(c, lits, gates) {
				return purity{}
			}
		} else if c.setsGate(callee, gates) {
			return purity{}
		}
		p.byDefault = true
	}
	return p
}

// receiverLits returns the composite literals a method call's receiver is
// made from, when it is a local variable every assignment of which is one
// (st := &pacer.Step{Cap: time.Minute}).
func (c *checker) receiverLits(call *ast.CallExpr, body *ast.BlockStmt) ([]*ast.CompositeLit, bool) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil, false
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return nil, false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || c.params[v] {
		return nil, false
	}
	vals := c.assignsOf(body)[v]
	if len(vals) == 0 {
		return nil, false
	}
	var lits []*ast.CompositeLit
	for _, x := range vals {
		x = ast.Unparen(x)
		if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
			x = ast.Unparen(u.X)
		}
		lit, ok := x.(*ast.CompositeLit)
		if !ok {
			return nil, false
		}
		lits = append(lits, lit)
	}
	return lits, true
}

// litSets reports whether any of the literals gives one of the named
// fields a value other than zero.
func litSets(c *checker, lits []*ast.CompositeLit, names []string) bool {
	for _, lit := range lits {
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				return true // positional: every field is given
			}
			id, ok := kv.Key.(*ast.Ident)
			if !ok {
				return true
			}
			for _, n := range names {
				if id.Name == n && !c.isZero(kv.Value) {
					return true
				}
			}
		}
	}
	return false
}

// setsGate reports whether this package gives any of the named fields of
// callee's receiver type a value other than zero.
func (c *checker) setsGate(callee *types.Func, names []string) bool {
	r := recvNamed(callee)
	if r == nil {
		return true // gates without a receiver: cannot tell
	}
	for _, name := range names {
		obj, _, _ := types.LookupFieldOrMethod(r, true, r.Obj().Pkg(), name)
		v, ok := obj.(*types.Var)
		if !ok || !v.IsField() {
			return true
		}
		if c.fieldMutated[v] {
			return true
		}
		for _, fv := range c.fieldValues[v] {
			if !c.isZero(fv.expr) && !c.selfCopy(v, fv.expr) {
				return true // a copy (Min: b.Min) gives no value of its own
			}
		}
	}
	return false
}

// findFieldMutations fills c.fieldMutated from f: the fields changed by
// f++, f += d, a tuple assignment or through their address.
func (c *checker) findFieldMutations(f *ast.File) {
	if strings.HasSuffix(c.pass.Fset.File(f.Pos()).Name(), "_test.go") {
		return
	}
	mark := func(e ast.Expr) {
		if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok {
			if v, ok := c.info.Uses[sel.Sel].(*types.Var); ok && v.IsField() {
				c.fieldMutated[v] = true
			}
		}
		if id := identOf(e); id != nil {
			if v, ok := c.info.Uses[id].(*types.Var); ok && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
				c.pkgAssigned[v] = true
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IncDecStmt:
			mark(n.X)
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if n.Tok != token.ASSIGN || len(n.Lhs) != len(n.Rhs) {
					mark(l)
				} else if _, isSel := ast.Unparen(l).(*ast.SelectorExpr); !isSel {
					mark(l) // a package variable assigned
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				mark(n.X)
			}
		case *ast.CallExpr:
			c.markFlagField(n)
		}
		return true
	})
}

// markFlagField records the field a duration flag sets: the first
// argument of flag's or pflag's DurationVar (or DurationVarP), &conf.delay.
func (c *checker) markFlagField(call *ast.CallExpr) {
	fn := c.callee(call)
	if fn == nil || len(call.Args) == 0 || (fn.Name() != "DurationVar" && fn.Name() != "DurationVarP") {
		return
	}
	if p := funcPath(fn); p != "flag" && p != "github.com/spf13/pflag" {
		return
	}
	if u, ok := ast.Unparen(call.Args[0]).(*ast.UnaryExpr); ok && u.Op == token.AND {
		if sel, ok := ast.Unparen(u.X).(*ast.SelectorExpr); ok {
			if v, ok := c.info.Uses[sel.Sel].(*types.Var); ok && v.IsField() {
				c.flagFields[v] = true
			}
		}
	}
}

// serverWait reports whether e names the server's wait: a field or
// variable called RetryAfter (retryAfter, retry_after), which a
// rate-limited response's error carries, or the time until such a
// variable's instant (time.Until(retryAfter)). It is the server's, not
// the client's backoff, and says nothing of the client's jitter.
func (c *checker) serverWait(e ast.Expr) bool {
	if b, ok := ast.Unparen(e).(*ast.BinaryExpr); ok && (b.Op == token.MUL || b.Op == token.QUO) {
		// time.Duration(retryAfterMs) * time.Millisecond: the same wait
		// in other units
		if tv, ok := c.info.Types[b.Y]; ok && tv.Value != nil {
			return c.serverWait(b.X)
		}
		if tv, ok := c.info.Types[b.X]; ok && tv.Value != nil && b.Op == token.MUL {
			return c.serverWait(b.Y)
		}
		return false
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() && len(call.Args) == 1 {
			return c.serverWait(call.Args[0]) // time.Duration(retryAfter)
		}
		// time.Until(retryAfter), retryAfter.Sub(now): the time the
		// server named, as a wait
		fn := c.callee(call)
		if isFunc(fn, "time", "Until") && len(call.Args) == 1 {
			return c.serverWait(call.Args[0])
		}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && fn != nil && fn.Name() == "Sub" && funcPath(fn) == "time" {
			return c.serverWait(sel.X)
		}
		return false
	}
	id := calleeIdent(e)
	if id == nil {
		return false
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || !strings.Contains(strings.ToLower(strings.ReplaceAll(id.Name, "_", "")), "retryafter") {
		return false
	}
	// poller.retryAfter = 5 * time.Second in a constructor: a setting
	// named for what it does, the client's own wait, not the server's
	return !v.IsField() || !c.constDefault(v)
}

// constDefault reports whether the package gives field v a constant
// somewhere (a constructor's default), which makes it a setting.
func (c *checker) constDefault(v *types.Var) bool {
	for _, fv := range c.fieldValues[v] {
		if tv, ok := c.info.Types[fv.expr]; ok && tv.Value != nil {
			return true
		}
	}
	return false
}

// userDuration reports whether e is a time.Duration parameter of an
// exported function nothing in the package calls: a value only the user
// gives.
func (c *checker) userDuration(e ast.Expr) bool {
	fn, idx, sites := c.paramSites(e)
	if fn == nil || len(sites) != 0 || !fn.Exported() {
		return false
	}
	t := fn.Type().(*types.Signature).Params().At(idx).Type()
	if sl, ok := t.(*types.Slice); ok {
		t = sl.Elem() // a schedule: New(backoff []time.Duration, …)
	}
	return isSetting(t)
}

// isSetting reports whether t is the type of a wait's setting: a
// time.Duration, or a float of seconds (a backoff factor, 0.5).
func isSetting(t types.Type) bool {
	if isNamed(t, "time", "Duration") {
		return true
	}
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsFloat != 0
}

// userParam reports whether e is a parameter of an exported function or
// method nothing in the package calls (SetJitter(j) { r.jitter = j }): a
// setting only the user gives, which leaves the default as it was.
func (c *checker) userParam(e ast.Expr) bool {
	fn, _, sites := c.paramSites(e)
	return fn != nil && len(sites) == 0 && fn.Exported()
}

// zeroField reports whether e is (a conversion of) a field the package
// leaves zero by default: a jitter factor only the user sets.
func (c *checker) zeroField(e ast.Expr) bool {
	e = ast.Unparen(e)
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
			e = ast.Unparen(call.Args[0])
		}
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	v, ok := c.info.Uses[sel.Sel].(*types.Var)
	return ok && v.IsField() && len(c.fieldValues[v]) > 0 && c.zeroByDefault(v)
}

// parsedPurity says what a duration parsed from text is (strconv.Atoi and
// its kin, time.ParseDuration), ok false for any other call: a setting,
// the same each time (interval, _ := strconv.Atoi(q.Get("interval_ms")),
// d, _ := time.ParseDuration(cfg["reconnect"])), unless the text is the
// server's — its error's (Telegram's FLOOD_WAIT_30: adds nothing to the
// client's schedule) or, for time.ParseDuration, a response header's
// (Retry-After, with a second added for rounding: the server's wait).
func (c *checker) parsedPurity(call *ast.CallExpr, callee *types.Func, body *ast.BlockStmt) (purity, bool) {
	duration := isFunc(callee, "time", "ParseDuration")
	if !duration && (funcPath(callee) != "strconv" || callee.Name() != "Atoi" && !strings.HasPrefix(callee.Name(), "Parse")) {
		return purity{}, false
	}
	switch {
	case len(call.Args) > 0 && c.readsErrorText(call.Args[0], body, 0):
		return purity{kind: pNone}, true
	case len(call.Args) > 0 && duration && c.readsServerText(call.Args[0], body):
		return purity{}, true
	}
	return purity{kind: pPure}, true
}

// readsErrorText reports whether e is made from an error's text
// (err.Error(), a match or slice of it, or a variable of body given one):
// what the server said, as in Telegram's FLOOD_WAIT_30.
func (c *checker) readsErrorText(e ast.Expr, body *ast.BlockStmt, depth int) bool {
	return c.madeFrom(e, body, depth, func(call *ast.CallExpr) bool {
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Error" || len(call.Args) != 0 {
			return false
		}
		t := c.info.TypeOf(sel.X)
		return t != nil && (isError(t) || types.Implements(t, errorIface))
	})
}

// readsServerText reports whether e is made from an error's text or from
// a response header (resp.Header.Get("Retry-After")): the server's words,
// not a setting of the client's.
func (c *checker) readsServerText(e ast.Expr, body *ast.BlockStmt) bool {
	return c.readsErrorText(e, body, 0) || c.madeFrom(e, body, 0, func(call *ast.CallExpr) bool {
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		return ok && isNamed(c.info.TypeOf(sel.X), "net/http", "Header")
	})
}

// madeFrom reports whether e holds a call that is accepts, or a variable of
// body given one (up to three assignments deep).
func (c *checker) madeFrom(e ast.Expr, body *ast.BlockStmt, depth int, is func(*ast.CallExpr) bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found || depth > 3 {
			return false
		}
		switch n := n.(type) {
		case *ast.Ident:
			if v, ok := c.info.Uses[n].(*types.Var); ok && body != nil {
				for _, x := range c.assignsOf(body)[v] {
					if x != unknownExpr && c.madeFrom(x, body, depth+1, is) {
						found = true
					}
				}
			}
		case *ast.CallExpr:
			found = is(n)
		}
		return !found
	})
	return found
}

// elapsed reports whether e is the time since an instant: time.Since(t) or
// time.Now().Sub(t). An interval less the time the failed attempt took
// (time.Sleep(interval - time.Since(start))) keeps to the interval's
// schedule: what it subtracts is the same for clients that failed
// together, as fast as one another.
func (c *checker) elapsed(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	fn := c.callee(call)
	if isFunc(fn, "time", "Since") {
		return true
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || fn == nil || fn.Name() != "Sub" || funcPath(fn) != "time" {
		return false
	}
	now, ok := ast.Unparen(sel.X).(*ast.CallExpr)
	return ok && isFunc(c.callee(now), "time", "Now")
}
